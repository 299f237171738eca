#include "registry/schema_request.h"

#include <algorithm>
#include <charconv>

#include "registry/compatibility.h"
#include "registry/schema_parsing.h"

namespace ferry::registry {
namespace {

using json = nlohmann::json;

std::optional<std::int32_t> positive_int(const json& value) {
  if (!value.is_number_integer()) return std::nullopt;
  const auto v = value.get<std::int64_t>();
  if (v < 1 || v > INT32_MAX) return std::nullopt;
  return static_cast<std::int32_t>(v);
}

}  // namespace

std::variant<schema_request, registry_reply> parse_schema_request(const std::string& body) {
  const auto parsed = json::parse(body, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return error_reply(400, "the request body is not a JSON object");
  schema_request out;
  const auto schema = parsed.find("schema");
  if (schema == parsed.end() || !schema->is_string())
    return error_reply(error_codes::invalid_schema, "the request has no \"schema\" string");
  out.schema = schema->get<std::string>();
  if (const auto type = parsed.find("schemaType"); type != parsed.end() && !type->is_null()) {
    const auto known = type->is_string() ? schema::parse_type(type->get<std::string>()) : std::nullopt;
    if (!known)
      return error_reply(error_codes::invalid_schema,
                         "unknown schemaType " + type->dump() + ": the types are AVRO, JSON and PROTOBUF");
    out.type = *known;
  }
  if (const auto refs = parsed.find("references"); refs != parsed.end() && !refs->is_null()) {
    if (!refs->is_array()) return error_reply(error_codes::invalid_schema, "\"references\" is not an array");
    for (const auto& r : *refs) {
      const bool ok = r.is_object() && r.contains("name") && r["name"].is_string() && r.contains("subject") &&
                      r["subject"].is_string() && r.contains("version") && r["version"].is_number_integer();
      if (!ok)
        return error_reply(error_codes::invalid_schema,
                           "a reference needs \"name\", \"subject\" and \"version\": " + r.dump());
      auto version = r["version"].get<std::int64_t>();
      if (version < 1 || version > INT32_MAX)
        return error_reply(error_codes::invalid_version,
                           "reference '" + r["name"].get<std::string>() + "' has version " + std::to_string(version));
      out.references.push_back(
          {r["name"].get<std::string>(), r["subject"].get<std::string>(), static_cast<std::int32_t>(version)});
    }
  }
  // Data contracts (Confluent 7.4+): not kept yet, so refused rather than dropped.
  for (const auto* name : {"metadata", "ruleSet"})
    if (const auto field = parsed.find(name); field != parsed.end() && !field->is_null())
      return error_reply(error_codes::invalid_schema,
                         std::string("\"") + name + "\" is not supported by Ferry's schema registry yet");
  for (const auto* name : {"id", "version"}) {
    const auto field = parsed.find(name);
    if (field == parsed.end() || field->is_null()) continue;
    // -1 and 0 mean "none" in newer clients' bodies.
    if (field->is_number_integer() && field->get<std::int64_t>() <= 0) continue;
    const auto value = positive_int(*field);
    if (!value) return error_reply(error_codes::invalid_schema, std::string("\"") + name + "\" is not a valid number");
    (std::string_view(name) == "id" ? out.id : out.version) = *value;
  }
  return out;
}

std::variant<candidate, registry_reply> make_candidate(const schema_store& store, const schema_request& request,
                                                       bool normalize, const schema::parse_limits& limits) {
  auto parsed = parse_with_references(store, request.type, request.schema, request.references, limits);
  if (!parsed)
    return error_reply(
        error_codes::invalid_schema,
        "Invalid schema of type " + std::string(schema::type_name(request.type)) + ": " + parsed.error().message);
  candidate out{std::move(parsed).value(), {}};
  out.text = normalize ? out.parsed->normalized() : out.parsed->canonical();
  return out;
}

std::variant<const subject_version*, registry_reply> find_version(const schema_store& store, const std::string& subject,
                                                                  const std::string& version, bool include_deleted) {
  const auto* state = store.find_subject(subject);
  const auto not_found_subject = [&] {
    return error_reply(error_codes::subject_not_found, "Subject '" + subject + "' not found.");
  };
  if (state == nullptr || (!include_deleted && state->all_deleted())) return not_found_subject();
  if (version == "latest" || version == "-1") {
    const auto* latest = state->latest(include_deleted);
    if (latest == nullptr) return not_found_subject();
    return latest;
  }
  std::int64_t number = 0;
  const auto [end, ec] = std::from_chars(version.data(), version.data() + version.size(), number);
  if (ec != std::errc{} || end != version.data() + version.size() || number < 1 || number > INT32_MAX)
    return error_reply(error_codes::invalid_version,
                       "The specified version '" + version +
                           "' is not a valid version id. Allowed values are between [1, 2^31-1] and the string "
                           "\"latest\"");
  const auto it = state->versions.find(static_cast<std::int32_t>(number));
  if (it == state->versions.end() || (it->second.deleted && !include_deleted))
    return error_reply(error_codes::version_not_found, "Version " + version + " not found.");
  return &it->second;
}

std::string effective_compatibility(const schema_store& store, const std::string& subject) {
  if (auto own = store.compatibility(subject)) return *own;
  if (auto global = store.compatibility(std::nullopt)) return *global;
  return std::string(default_compatibility);
}

std::string effective_mode(const schema_store& store, const std::string& subject) {
  if (auto own = store.mode(subject)) return *own;
  if (auto global = store.mode(std::nullopt)) return *global;
  return "READWRITE";
}

std::optional<registry_reply> check_subject(const std::string& subject) {
  const bool control = std::any_of(subject.begin(), subject.end(),
                                   [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
  if (subject.empty() || control)
    return error_reply(error_codes::invalid_subject, "Invalid subject: empty or with control characters");
  return std::nullopt;
}

std::vector<std::string> check_against_subject(const schema_store& store, const std::string& subject,
                                               const schema::parsed_schema& proposed,
                                               const schema::parse_limits& limits) {
  const auto level = parse_level(effective_compatibility(store, subject)).value_or(compatibility_level::backward);
  if (level == compatibility_level::none) return {};
  std::vector<std::pair<std::int32_t, schema::schema_ptr>> existing;
  if (const auto* state = store.find_subject(subject); state != nullptr) {
    for (const auto& [version, v] : state->versions) {
      if (v.deleted) continue;
      const auto* stored = store.find_schema(v.id);
      if (stored == nullptr) continue;
      if (stored->type != proposed.type()) {
        return {"version " + std::to_string(version) + " is of type " + std::string(schema::type_name(stored->type)) +
                ", the new schema of type " + std::string(schema::type_name(proposed.type()))};
      }
      auto parsed = parse_stored(store, *stored, limits);
      if (!parsed) return {"version " + std::to_string(version) + " no longer parses: " + parsed.error().message};
      existing.emplace_back(version, std::move(parsed).value());
    }
  }
  return incompatibilities(level, proposed, existing);
}

nlohmann::json references_json(const std::vector<schema_reference>& references) {
  json out = json::array();
  for (const auto& r : references) out.push_back({{"name", r.name}, {"subject", r.subject}, {"version", r.version}});
  return out;
}

nlohmann::json version_json(const std::string& subject, const subject_version& version, const stored_schema& schema) {
  json out{{"subject", subject}, {"version", version.version}, {"id", schema.id}};
  if (schema.type != schema::schema_type::avro) out["schemaType"] = std::string(schema::type_name(schema.type));
  if (!schema.references.empty()) out["references"] = references_json(schema.references);
  out["schema"] = schema.text;
  return out;
}

}  // namespace ferry::registry
