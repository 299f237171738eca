#include "registry/read_routes.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "registry/compatibility.h"
#include "registry/schema_parsing.h"
#include "registry/schema_request.h"

namespace ferry::registry {
namespace {

using json = nlohmann::json;
using segments = std::vector<std::string>;

registry_reply list_subjects(const schema_store& store, const request_target& t) {
  const bool deleted_only = t.flag("deletedOnly");
  const bool deleted = t.flag("deleted") || deleted_only;
  const auto prefix = t.param("subjectPrefix").value_or("");
  json out = json::array();
  for (const auto& [name, state] : store.subjects()) {
    if (name.rfind(prefix, 0) != 0) continue;
    const bool live = !state.all_deleted();
    if (deleted_only ? state.latest(true) != nullptr && !live : (live || deleted)) out.push_back(name);
  }
  return json_reply(out);
}

registry_reply list_versions(const schema_store& store, const std::string& subject, const request_target& t) {
  const bool deleted = t.flag("deleted");
  const auto* state = store.find_subject(subject);
  if (state == nullptr || (!deleted && state->all_deleted()))
    return error_reply(error_codes::subject_not_found, "Subject '" + subject + "' not found.");
  json out = json::array();
  for (const auto& [version, v] : state->versions)
    if (deleted || !v.deleted) out.push_back(version);
  return json_reply(out);
}

registry_reply show_version(const schema_store& store, const std::string& subject, const std::string& version,
                            const std::string& part, const request_target& t) {
  const auto found = find_version(store, subject, version, t.flag("deleted") || part == "referencedby");
  if (const auto* error = std::get_if<registry_reply>(&found)) return *error;
  const auto* v = std::get<const subject_version*>(found);
  const auto* schema = store.find_schema(v->id);
  if (schema == nullptr) return error_reply(error_codes::schema_not_found, "Schema not found");
  if (part == "schema") return {200, schema->text};
  if (part == "referencedby") return json_reply(store.referenced_by(subject, v->version));
  return json_reply(version_json(subject, *v, *schema));
}

registry_reply show_id(const schema_store& store, const std::string& id_text, const std::string& part,
                       const request_target& t) {
  std::int32_t id = 0;
  const auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
  const auto* schema = ec == std::errc{} && end == id_text.data() + id_text.size() ? store.find_schema(id) : nullptr;
  const auto usages = store.usages(id);
  const auto subject = t.param("subject");
  const bool in_subject = !subject || subject->empty() ||
                          std::any_of(usages.begin(), usages.end(), [&](const auto& u) { return u.first == *subject; });
  // Soft-deleted schemas stay readable by id: records written with them must still decode.
  if (schema == nullptr || !in_subject)
    return error_reply(error_codes::schema_not_found, "Schema " + id_text + " not found");
  const bool deleted = t.flag("deleted");
  if (part == "schema") return {200, schema->text};
  if (part == "subjects") {
    std::set<std::string> names;
    for (const auto& [name, v] : usages)
      if (deleted || !v.deleted) names.insert(name);
    return json_reply(json(names));
  }
  if (part == "versions") {
    json out = json::array();
    for (const auto& [name, v] : usages)
      if (deleted || !v.deleted) out.push_back({{"subject", name}, {"version", v.version}});
    return json_reply(out);
  }
  json out{{"schema", schema->text}};
  if (schema->type != schema::schema_type::avro) out["schemaType"] = std::string(schema::type_name(schema->type));
  if (!schema->references.empty()) out["references"] = references_json(schema->references);
  return json_reply(out);
}

registry_reply list_schemas(const schema_store& store, const request_target& t) {
  const bool deleted = t.flag("deleted");
  const bool latest_only = t.flag("latestOnly");
  const auto prefix = t.param("subjectPrefix").value_or("");
  json out = json::array();
  for (const auto& [name, state] : store.subjects()) {
    if (name.rfind(prefix, 0) != 0) continue;
    for (auto it = state.versions.rbegin(); it != state.versions.rend(); ++it) {
      if (it->second.deleted && !deleted) continue;
      if (const auto* schema = store.find_schema(it->second.id)) out.push_back(version_json(name, it->second, *schema));
      if (latest_only) break;
    }
  }
  return json_reply(out);
}

registry_reply lookup(const schema_store& store, const std::string& subject, const registry_request& request,
                      const request_target& t, const schema::parse_limits& limits) {
  const auto* state = store.find_subject(subject);
  const bool deleted = t.flag("deleted");
  if (state == nullptr || (!deleted && state->all_deleted()))
    return error_reply(error_codes::subject_not_found, "Subject '" + subject + "' not found.");
  const auto body = parse_schema_request(request.body);
  if (const auto* error = std::get_if<registry_reply>(&body)) return *error;
  const auto made = make_candidate(store, std::get<schema_request>(body), t.flag("normalize"), limits);
  if (const auto* error = std::get_if<registry_reply>(&made)) return *error;
  const auto& c = std::get<candidate>(made);
  const auto& r = std::get<schema_request>(body);
  const auto id = store.id_of(r.type, c.text, r.references);
  if (id) {
    for (auto it = state->versions.rbegin(); it != state->versions.rend(); ++it)
      if (it->second.id == *id && (deleted || !it->second.deleted))
        return json_reply(version_json(subject, it->second, *store.find_schema(*id)));
  }
  return error_reply(error_codes::schema_not_found, "Schema not found");
}

registry_reply check_compatibility(const schema_store& store, const segments& s, const registry_request& request,
                                   const request_target& t, const schema::parse_limits& limits) {
  const auto& subject = s[2];
  const auto body = parse_schema_request(request.body);
  if (const auto* error = std::get_if<registry_reply>(&body)) return *error;
  const auto made = make_candidate(store, std::get<schema_request>(body), t.flag("normalize"), limits);
  if (const auto* error = std::get_if<registry_reply>(&made)) return *error;
  const auto& c = std::get<candidate>(made);
  std::vector<std::string> messages;
  if (s.size() == 5) {
    const auto found = find_version(store, subject, s[4], false);
    if (const auto* error = std::get_if<registry_reply>(&found)) {
      // Checking against the latest version of a subject that has none passes, as Confluent's does.
      if (s[4] == "latest" && store.find_subject(subject) == nullptr) return json_reply({{"is_compatible", true}});
      return *error;
    }
    // One version: the subject's level decides the direction, without its transitivity.
    const auto* v = std::get<const subject_version*>(found);
    const auto* stored = store.find_schema(v->id);
    if (stored == nullptr) return error_reply(error_codes::schema_not_found, "Schema not found");
    if (stored->type != c.parsed->type()) {
      messages.push_back("version " + std::to_string(v->version) + " is of another schema type");
    } else {
      auto previous = parse_stored(store, *stored, limits);
      if (!previous)
        return error_reply(error_codes::store_error, "version no longer parses: " + previous.error().message);
      const auto level = parse_level(effective_compatibility(store, subject)).value_or(compatibility_level::backward);
      messages = incompatibilities(level, *c.parsed, {{v->version, std::move(previous).value()}});
    }
  } else {
    messages = check_against_subject(store, subject, *c.parsed, limits);
  }
  json out{{"is_compatible", messages.empty()}};
  if (t.flag("verbose")) out["messages"] = messages;
  return json_reply(out);
}

registry_reply show_config(const schema_store& store, const segments& s, const request_target& t) {
  if (s.size() == 1)
    return json_reply(
        {{"compatibilityLevel", store.compatibility(std::nullopt).value_or(std::string(default_compatibility))}});
  const auto own = store.compatibility(s[1]);
  if (own) return json_reply({{"compatibilityLevel", *own}});
  if (!t.flag("defaultToGlobal"))
    return error_reply(error_codes::subject_level_compatibility_not_configured,
                       "Subject '" + s[1] + "' does not have subject-level compatibility configured");
  return json_reply({{"compatibilityLevel", effective_compatibility(store, s[1])}});
}

registry_reply show_mode(const schema_store& store, const segments& s, const request_target& t) {
  if (s.size() == 1) return json_reply({{"mode", store.mode(std::nullopt).value_or("READWRITE")}});
  const auto own = store.mode(s[1]);
  if (own) return json_reply({{"mode", *own}});
  if (!t.flag("defaultToGlobal"))
    return error_reply(error_codes::subject_level_mode_not_configured,
                       "Subject '" + s[1] + "' does not have subject-level mode configured");
  return json_reply({{"mode", effective_mode(store, s[1])}});
}

}  // namespace

std::optional<registry_reply> read_route(const schema_store& store, const registry_request& request,
                                         const request_target& t, const schema::parse_limits& limits) {
  const auto& s = t.segments;
  const auto& m = request.method;
  if (m == "GET") {
    if (s.empty()) return json_reply(json::object());
    if (s[0] == "subjects") {
      if (s.size() == 1) return list_subjects(store, t);
      if (s.size() == 3 && s[2] == "versions") return list_versions(store, s[1], t);
      if ((s.size() == 4 || s.size() == 5) && s[2] == "versions")
        if (s.size() == 4 || s[4] == "schema" || s[4] == "referencedby")
          return show_version(store, s[1], s[3], s.size() == 5 ? s[4] : "", t);
    }
    if (s[0] == "schemas") {
      if (s.size() == 1) return list_schemas(store, t);
      if (s.size() == 2 && s[1] == "types") return json_reply(json::array({"JSON", "PROTOBUF", "AVRO"}));
      if (s.size() >= 3 && s.size() <= 4 && s[1] == "ids")
        if (s.size() == 3 || s[3] == "schema" || s[3] == "subjects" || s[3] == "versions")
          return show_id(store, s[2], s.size() == 4 ? s[3] : "", t);
    }
    if (s[0] == "config" && s.size() <= 2) return show_config(store, s, t);
    if (s[0] == "mode" && s.size() <= 2) return show_mode(store, s, t);
    if (s[0] == "contexts" && s.size() == 1) return json_reply(json::array({"."}));
    return std::nullopt;
  }
  if (m == "POST" && s.size() == 2 && s[0] == "subjects") return lookup(store, s[1], request, t, limits);
  if (m == "POST" && s[0] == "compatibility" && s.size() >= 4 && s.size() <= 5 && s[1] == "subjects" &&
      s[3] == "versions")
    return check_compatibility(store, s, request, t, limits);
  return std::nullopt;
}

}  // namespace ferry::registry
