#include "registry/schema_parsing.h"

#include <set>
#include <utility>

#include "avro/avro_schema.h"
#include "json_schema/json_schema.h"
#include "proto_schema/proto_schema.h"

namespace ferry::registry {
namespace {

schema::schema_result<schema::schema_ptr> parse_format(schema::schema_type type, std::string_view text,
                                                       const std::vector<schema::named_schema>& references,
                                                       const schema::parse_limits& limits) {
  switch (type) {
    case schema::schema_type::avro:
      return avro::parse(text, references, limits);
    case schema::schema_type::json:
      return json_schema::parse(text, references, limits);
    case schema::schema_type::protobuf:
      return proto_schema::parse(text, references, limits);
  }
  return schema::schema_error{"unknown schema type"};
}

// Depth-first, so that each schema comes after the ones it refers to.
struct resolver {
  const schema_store& store;
  const schema::parse_limits& limits;
  std::vector<schema::named_schema> resolved;
  std::set<std::pair<std::string, std::int32_t>> done;
  std::set<std::pair<std::string, std::int32_t>> open;

  std::optional<schema::schema_error> add(const std::vector<schema_reference>& references, std::size_t depth) {
    if (depth > limits.max_depth)
      return schema::schema_error{"references nest deeper than " + std::to_string(limits.max_depth) + " levels"};
    for (const auto& r : references) {
      const subject_version* version = nullptr;
      if (const auto* subject = store.find_subject(r.subject); subject != nullptr)
        if (const auto it = subject->versions.find(r.version); it != subject->versions.end()) version = &it->second;
      if (version == nullptr)
        return schema::schema_error{"reference '" + r.name + "' names subject '" + r.subject + "' version " +
                                    std::to_string(r.version) + ", which does not exist"};
      const std::pair key{r.subject, r.version};
      if (done.contains(key)) continue;
      if (!open.insert(key).second)
        return schema::schema_error{"reference '" + r.name + "' (subject '" + r.subject + "' version " +
                                    std::to_string(r.version) + ") refers back to itself"};
      const auto* stored = store.find_schema(version->id);
      if (stored == nullptr) return schema::schema_error{"reference '" + r.name + "' has no schema"};
      if (auto failed = add(stored->references, depth + 1)) return failed;
      if (resolved.size() >= limits.max_elements) return schema::schema_error{"too many references"};
      resolved.push_back({r.name, stored->text});
      open.erase(key);
      done.insert(key);
    }
    return std::nullopt;
  }
};

}  // namespace

schema::schema_result<schema::schema_ptr> parse_with_references(const schema_store& store, schema::schema_type type,
                                                                const std::string& text,
                                                                const std::vector<schema_reference>& references,
                                                                const schema::parse_limits& limits) {
  resolver r{store, limits, {}, {}, {}};
  if (auto failed = r.add(references, 1)) return *failed;
  return parse_format(type, text, r.resolved, limits);
}

schema::schema_result<schema::schema_ptr> parse_stored(const schema_store& store, const stored_schema& stored,
                                                       const schema::parse_limits& limits) {
  return parse_with_references(store, stored.type, stored.text, stored.references, limits);
}

}  // namespace ferry::registry
