#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "registry/read_routes.h"
#include "registry/registry_reply.h"
#include "registry/schema_store.h"
#include "registry/write_planner.h"

namespace ferry::registry {
namespace {

using json = nlohmann::json;

// The registry as one broker that both writes and reads: a write's records are applied as the topic would
// deliver them back.
class registry_api_test : public ::testing::Test {
 protected:
  registry_reply call(const std::string& method, const std::string& target, const json& body = nullptr) {
    registry_request request{method, target, body.is_null() ? "" : body.dump(), ""};
    const auto t = parse_target(target);
    if (!t) return error_reply(400, "bad target");
    if (is_write(method, *t)) {
      auto planned = plan_write(store, request, *t, limits);
      if (auto* error = std::get_if<registry_reply>(&planned)) return *error;
      auto& plan = std::get<write_plan>(planned);
      for (const auto& r : plan.records)
        store.apply(r.key, r.value ? std::optional<std::string_view>(*r.value) : std::nullopt);
      return plan.reply;
    }
    if (auto reply = read_route(store, request, *t, limits)) return *reply;
    return error_reply(404, "no route");
  }
  json ok(const std::string& method, const std::string& target, const json& body = nullptr) {
    const auto reply = call(method, target, body);
    EXPECT_EQ(reply.status, 200) << method << " " << target << ": " << reply.body;
    return json::parse(reply.body, nullptr, false);
  }
  int code(const std::string& method, const std::string& target, const json& body = nullptr) {
    const auto reply = call(method, target, body);
    const auto parsed = json::parse(reply.body, nullptr, false);
    return parsed.is_object() && parsed.contains("error_code") ? parsed["error_code"].get<int>() : reply.status;
  }

  schema_store store;
  schema::parse_limits limits;
};

const json user_v1 = {{"schema", R"({"type":"record","name":"User","fields":[{"name":"name","type":"string"}]})"}};
const json user_v2 = {{"schema", R"({"type":"record","name":"User","fields":[{"name":"name","type":"string"},
                                     {"name":"age","type":"int","default":0}]})"}};
const json user_bad = {{"schema", R"({"type":"record","name":"User","fields":[{"name":"name","type":"string"},
                                      {"name":"email","type":"string"}]})"}};

TEST_F(registry_api_test, RegistersEvolvesAndReadsBack) {
  const auto first = ok("POST", "/subjects/users-value/versions", user_v1);
  EXPECT_EQ(first["id"], 1);
  EXPECT_EQ(ok("POST", "/subjects/users-value/versions", user_v1)["id"], 1) << "the same schema registers once";
  EXPECT_EQ(ok("POST", "/subjects/users-value/versions", user_v2)["id"], 2);
  EXPECT_EQ(ok("GET", "/subjects/users-value/versions"), json::array({1, 2}));
  const auto latest = ok("GET", "/subjects/users-value/versions/latest");
  EXPECT_EQ(latest["version"], 2);
  EXPECT_EQ(latest["id"], 2);
  EXPECT_FALSE(latest.contains("schemaType")) << "AVRO is left out, as Confluent does";
  EXPECT_TRUE(ok("GET", "/schemas/ids/1").contains("schema"));
  EXPECT_EQ(ok("GET", "/schemas/ids/2/versions"), json::parse(R"([{"subject":"users-value","version":2}])"));
  EXPECT_EQ(ok("GET", "/subjects"), json::array({"users-value"}));
  EXPECT_EQ(ok("POST", "/subjects/users-value", user_v1)["version"], 1);
  EXPECT_EQ(ok("POST", "/subjects/other-value/versions", user_v1)["id"], 1) << "ids are content-addressed";
}

TEST_F(registry_api_test, RefusesAnIncompatibleSchemaUntilTheLevelAllowsIt) {
  ok("POST", "/subjects/s/versions", user_v1);
  EXPECT_EQ(code("POST", "/subjects/s/versions", user_bad), 409);
  const auto verdict = ok("POST", "/compatibility/subjects/s/versions/latest?verbose=true", user_bad);
  EXPECT_EQ(verdict["is_compatible"], false);
  EXPECT_FALSE(verdict["messages"].empty());
  EXPECT_EQ(ok("PUT", "/config/s", {{"compatibility", "none"}}), json({{"compatibility", "NONE"}}));
  EXPECT_EQ(ok("GET", "/config/s")["compatibilityLevel"], "NONE");
  EXPECT_EQ(ok("POST", "/subjects/s/versions", user_bad)["id"], 2);
  EXPECT_EQ(code("GET", "/config/other"), 40408);
  EXPECT_EQ(ok("GET", "/config/other?defaultToGlobal=true")["compatibilityLevel"], "BACKWARD");
  EXPECT_EQ(code("PUT", "/config", {{"compatibility", "SIDEWAYS"}}), 42203);
}

TEST_F(registry_api_test, SoftAndPermanentDeletes) {
  ok("POST", "/subjects/s/versions", user_v1);
  ok("POST", "/subjects/s/versions", user_v2);
  EXPECT_EQ(code("DELETE", "/subjects/s/versions/1?permanent=true"), 40407);
  EXPECT_EQ(ok("DELETE", "/subjects/s/versions/1"), 1);
  EXPECT_EQ(code("GET", "/subjects/s/versions/1"), 40402);
  EXPECT_EQ(ok("GET", "/subjects/s/versions/1?deleted=true")["version"], 1);
  EXPECT_EQ(ok("GET", "/schemas/ids/1")["schema"].is_string(), true) << "a soft-deleted schema is still read by id";
  EXPECT_EQ(code("DELETE", "/subjects/s?permanent=true"), 40405);
  EXPECT_EQ(ok("DELETE", "/subjects/s"), json::array({2}));
  EXPECT_EQ(code("GET", "/subjects/s/versions"), 40401);
  EXPECT_EQ(ok("GET", "/subjects?deleted=true"), json::array({"s"}));
  EXPECT_EQ(code("DELETE", "/subjects/s"), 40404);
  EXPECT_EQ(ok("DELETE", "/subjects/s?permanent=true"), json::array({1, 2}));
  EXPECT_EQ(code("GET", "/schemas/ids/1"), 40403);
  EXPECT_EQ(ok("POST", "/subjects/s/versions", user_v1)["id"], 3) << "an id is never handed out twice";
}

TEST_F(registry_api_test, ModesGuardWritesAndImportTakesIds) {
  EXPECT_EQ(ok("PUT", "/mode", {{"mode", "READONLY"}})["mode"], "READONLY");
  EXPECT_EQ(code("POST", "/subjects/s/versions", user_v1), 42205);
  EXPECT_EQ(code("PUT", "/mode", {{"mode", "SOMETIMES"}}), 42204);
  ok("PUT", "/mode", {{"mode", "IMPORT"}});
  auto imported = user_v1;
  imported["id"] = 42;
  imported["version"] = 5;
  EXPECT_EQ(ok("POST", "/subjects/s/versions", imported)["id"], 42);
  EXPECT_EQ(ok("GET", "/subjects/s/versions/5")["id"], 42);
  ok("PUT", "/mode", {{"mode", "READWRITE"}});
  EXPECT_EQ(ok("POST", "/subjects/s/versions", user_v2)["id"], 43);
}

TEST_F(registry_api_test, BadInputGetsConfluentsErrors) {
  EXPECT_EQ(code("POST", "/subjects/s/versions", {{"schema", "{not avro"}}), 42201);
  EXPECT_EQ(code("POST", "/subjects/s/versions", {{"schema", "\"string\""}, {"schemaType", "XML"}}), 42201);
  EXPECT_EQ(call("POST", "/subjects/s/versions", nullptr).status, 400);
  EXPECT_EQ(code("POST", "/subjects/s/versions", {{"schema", "\"string\""}, {"ruleSet", json::object()}}), 42201);
  EXPECT_EQ(code("GET", "/subjects/nope/versions/1"), 40401);
  ok("POST", "/subjects/s/versions", {{"schema", "\"string\""}});
  EXPECT_EQ(code("GET", "/subjects/s/versions/0"), 42202);
  EXPECT_EQ(code("GET", "/subjects/s/versions/9"), 40402);
  EXPECT_EQ(code("GET", "/schemas/ids/999"), 40403);
  EXPECT_EQ(code("GET", "/schemas/ids/abc"), 40403);
  EXPECT_EQ(code("POST", "/subjects/s/versions",
                 {{"schema", "\"string\""},
                  {"references", json::array({{{"name", "x"}, {"subject", "y"}, {"version", 1}}})}}),
            42201);
}

TEST_F(registry_api_test, ReferencesResolveAndProtectWhatTheyName) {
  const json address = {
      {"schema",
       R"({"type":"record","name":"Address","namespace":"acme","fields":[{"name":"city","type":"string"}]})"}};
  ok("POST", "/subjects/address/versions", address);
  const json person = {
      {"schema", R"({"type":"record","name":"Person","namespace":"acme","fields":[{"name":"home","type":"Address"}]})"},
      {"references", json::array({{{"name", "acme.Address"}, {"subject", "address"}, {"version", 1}}})}};
  const auto id = ok("POST", "/subjects/person/versions", person)["id"];
  EXPECT_EQ(ok("GET", "/subjects/address/versions/1/referencedby"), json::array({id}));
  EXPECT_EQ(code("DELETE", "/subjects/address/versions/1"), 42206);
  EXPECT_EQ(ok("GET", "/schemas/ids/" + id.dump())["references"][0]["subject"], "address");
}

}  // namespace
}  // namespace ferry::registry
