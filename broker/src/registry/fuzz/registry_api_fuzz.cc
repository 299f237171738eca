// Feeds arbitrary bytes to the registry's REST routes and to its reader of `_schemas`. The first line is a request
// line ("METHOD TARGET"), the rest its body; a first line starting with "RECORD " instead makes the rest one record
// of the topic (key, a tab, the value; no tab: a tombstone) applied to the store before a few reads. The store
// starts with an Avro subject of two versions, a JSON Schema one and a Protobuf one, with a reference between
// them. Every reply must carry a status from 100 to 599 and a body that is JSON (the raw /schema paths excepted),
// and a write's plan must apply to the store it was made from.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "registry/read_routes.h"
#include "registry/registry_reply.h"
#include "registry/schema_records.h"
#include "registry/schema_store.h"
#include "registry/write_planner.h"

namespace ferry::registry {
namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

schema_store seeded() {
  schema_store store;
  const auto put = [&store](const schema_value& v) {
    store.apply(encode_key(schema_key{v.subject, v.version}), encode_schema_value(v));
  };
  put({"users-value",
       1,
       1,
       schema::schema_type::avro,
       {},
       R"({"type":"record","name":"User","namespace":"acme","fields":[{"name":"name","type":"string"}]})",
       false});
  put({"users-value",
       2,
       2,
       schema::schema_type::avro,
       {},
       R"({"type":"record","name":"User","namespace":"acme","fields":[{"name":"name","type":"string"},)"
       R"({"name":"age","type":"int","default":0}]})",
       false});
  put({"orders-value",
       1,
       3,
       schema::schema_type::avro,
       {{"acme.User", "users-value", 1}},
       R"({"type":"record","name":"Order","namespace":"acme","fields":[{"name":"by","type":"User"}]})",
       false});
  put({"json-value",
       1,
       4,
       schema::schema_type::json,
       {},
       R"({"type":"object","properties":{"a":{"type":"string"}}})",
       false});
  put({"proto-value",
       1,
       5,
       schema::schema_type::protobuf,
       {},
       "syntax = \"proto3\";\npackage acme;\nmessage Item {\n  string name = 1;\n}\n",
       false});
  store.apply(encode_key(config_key{"json-value"}), encode_config_value("FULL_TRANSITIVE"));
  return store;
}

void check_reply(const registry_reply& reply, std::string_view target) {
  check(reply.status >= 100 && reply.status <= 599);
  const auto path = target.substr(0, target.find('?'));
  if (reply.status == 200 && path.ends_with("/schema")) return;  // the schema's own text
  check(!nlohmann::json::parse(reply.body, nullptr, false).is_discarded());
}

void route(schema_store& store, const registry_request& request) {
  const auto target = parse_target(request.target);
  if (!target) return;
  const schema::parse_limits limits{.max_depth = 32, .max_elements = 2000};
  if (is_write(request.method, *target)) {
    auto planned = plan_write(store, request, *target, limits);
    if (const auto* refused = std::get_if<registry_reply>(&planned)) {
      check_reply(*refused, request.target);
      return;
    }
    const auto& plan = std::get<write_plan>(planned);
    check_reply(plan.reply, request.target);
    for (const auto& r : plan.records) {
      check(decode_key(r.key).has_value());
      store.apply(r.key, r.value ? std::optional<std::string_view>(*r.value) : std::nullopt);
    }
    return;
  }
  if (const auto reply = read_route(store, request, *target, limits)) check_reply(*reply, request.target);
}

}  // namespace
}  // namespace ferry::registry

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ferry::registry;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto newline = input.find('\n');
  const auto line = input.substr(0, newline);
  const auto rest = newline == std::string_view::npos ? std::string_view() : input.substr(newline + 1);
  auto store = seeded();
  if (line.starts_with("RECORD")) {
    const auto tab = rest.find('\t');
    if (tab == std::string_view::npos)
      store.apply(rest, std::nullopt);
    else
      store.apply(rest.substr(0, tab), std::optional<std::string_view>(rest.substr(tab + 1)));
    for (const char* target : {"/subjects", "/schemas", "/subjects/users-value/versions/latest", "/schemas/ids/1",
                               "/config/users-value?defaultToGlobal=true", "/mode"})
      route(store, {"GET", target, "", "", false});
    return 0;
  }
  const auto space = line.find(' ');
  const std::string method(space == std::string_view::npos ? "GET" : line.substr(0, space));
  const std::string target(space == std::string_view::npos ? line : line.substr(space + 1));
  route(store, {method, target, std::string(rest), "", false});
  return 0;
}
