#include "registry/write_planner.h"

#include <algorithm>
#include <cctype>

#include "registry/compatibility.h"
#include "registry/schema_records.h"
#include "registry/schema_request.h"

namespace ferry::registry {
namespace {

using json = nlohmann::json;

write_plan answer(registry_reply reply) { return {{}, std::move(reply)}; }

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::toupper(c); });
  return text;
}

bool read_only(const std::string& mode) { return mode == "READONLY" || mode == "READONLY_OVERRIDE"; }

registry_reply read_only_reply(const std::string& subject) {
  return error_reply(error_codes::operation_not_permitted, "Subject " + subject + " is in read-only mode");
}

std::variant<write_plan, registry_reply> register_schema(const schema_store& store, const std::string& subject,
                                                         const registry_request& request, const request_target& t,
                                                         const schema::parse_limits& limits) {
  if (auto bad = check_subject(subject)) return *bad;
  const auto mode = effective_mode(store, subject);
  if (read_only(mode)) return read_only_reply(subject);
  const bool importing = mode == "IMPORT";
  const auto body = parse_schema_request(request.body);
  if (const auto* error = std::get_if<registry_reply>(&body)) return *error;
  const auto& r = std::get<schema_request>(body);
  if (r.id && !importing)
    return error_reply(error_codes::operation_not_permitted, "A schema id can be given only in IMPORT mode");
  const auto made = make_candidate(store, r, t.flag("normalize"), limits);
  if (const auto* error = std::get_if<registry_reply>(&made)) return *error;
  const auto& c = std::get<candidate>(made);

  const auto existing_id = store.id_of(r.type, c.text, r.references);
  const auto* state = store.find_subject(subject);
  if (existing_id && state != nullptr) {
    for (const auto& [version, v] : state->versions)
      if (v.id == *existing_id && !v.deleted) {
        if (r.id && *r.id != *existing_id)
          return error_reply(error_codes::id_mismatch, "Schema already registered with id " +
                                                           std::to_string(*existing_id) + " instead of input id " +
                                                           std::to_string(*r.id));
        return answer(json_reply({{"id", *existing_id}}));
      }
  }
  if (!importing) {
    const auto messages = check_against_subject(store, subject, *c.parsed, limits);
    if (!messages.empty()) {
      json details = messages;
      return error_reply(error_codes::incompatible_schema,
                         "Schema being registered is incompatible with an earlier schema for subject \"" + subject +
                             "\", details: " + details.dump(-1, ' ', false, json::error_handler_t::replace));
    }
  }
  std::int32_t id = existing_id.value_or(store.max_id() + 1);
  if (r.id) {
    const auto* taken = store.find_schema(*r.id);
    if (taken != nullptr && (taken->text != c.text || taken->type != r.type || taken->references != r.references))
      return error_reply(error_codes::id_mismatch,
                         "Overwrite new schema with id " + std::to_string(*r.id) + " is not permitted.");
    id = *r.id;
  }
  const auto* latest = state == nullptr ? nullptr : state->latest(true);
  std::int32_t version = latest == nullptr ? 1 : latest->version + 1;
  if (r.version) {
    if (state != nullptr && state->versions.contains(*r.version))
      return error_reply(error_codes::invalid_version,
                         "Version " + std::to_string(*r.version) + " of subject " + subject + " already exists");
    version = *r.version;
  }
  schema_value value{subject, version, id, r.type, r.references, c.text, false};
  return write_plan{{{encode_key(schema_key{subject, version}), encode_schema_value(value)}},
                    json_reply({{"id", id}, {"version", version}})};
}

// Versions still referenced by live schemas cannot go (42206).
std::optional<registry_reply> check_unreferenced(const schema_store& store, const std::string& subject,
                                                 std::int32_t version) {
  const auto ids = store.referenced_by(subject, version);
  if (ids.empty()) return std::nullopt;
  return error_reply(error_codes::reference_exists, "One or more references exist to the schema {subject=" + subject +
                                                        ",version=" + std::to_string(version) + "}");
}

std::variant<write_plan, registry_reply> delete_subject(const schema_store& store, const std::string& subject,
                                                        const request_target& t) {
  const auto* state = store.find_subject(subject);
  if (state == nullptr) return error_reply(error_codes::subject_not_found, "Subject '" + subject + "' not found.");
  if (read_only(effective_mode(store, subject))) return read_only_reply(subject);
  const bool permanent = t.flag("permanent");
  if (!permanent && state->all_deleted())
    return error_reply(error_codes::subject_soft_deleted,
                       "Subject '" + subject + "' was soft deleted.Set permanent=true to delete permanently");
  if (permanent && !state->all_deleted())
    return error_reply(error_codes::subject_not_soft_deleted,
                       "Subject '" + subject + "' was not deleted first before being permanently deleted");
  json versions = json::array();
  for (const auto& [version, v] : state->versions) {
    if (auto referenced = check_unreferenced(store, subject, version)) return *referenced;
    if (permanent || !v.deleted) versions.push_back(version);
  }
  write_plan plan{{}, json_reply(versions)};
  if (permanent) {
    for (const auto& [version, v] : state->versions)
      plan.records.push_back({encode_key(schema_key{subject, version}), std::nullopt});
    if (store.compatibility(subject)) plan.records.push_back({encode_key(config_key{subject}), std::nullopt});
    if (store.mode(subject)) plan.records.push_back({encode_key(mode_key{subject}), std::nullopt});
  } else {
    plan.records.push_back(
        {encode_key(delete_subject_key{subject}), encode_watermark_value({subject, state->latest(true)->version})});
  }
  return plan;
}

std::variant<write_plan, registry_reply> delete_version(const schema_store& store, const std::string& subject,
                                                        const std::string& version_text, const request_target& t) {
  const bool permanent = t.flag("permanent");
  const auto found = find_version(store, subject, version_text, permanent);
  if (const auto* error = std::get_if<registry_reply>(&found)) return *error;
  if (read_only(effective_mode(store, subject))) return read_only_reply(subject);
  const auto* v = std::get<const subject_version*>(found);
  if (permanent && !v->deleted)
    return error_reply(error_codes::version_not_soft_deleted,
                       "Subject '" + subject + "' Version " + std::to_string(v->version) +
                           " was not deleted first before being permanently deleted");
  if (auto referenced = check_unreferenced(store, subject, v->version)) return *referenced;
  const auto key = encode_key(schema_key{subject, v->version});
  if (permanent) return write_plan{{{key, std::nullopt}}, json_reply(v->version)};
  const auto* stored = store.find_schema(v->id);
  if (stored == nullptr) return error_reply(error_codes::schema_not_found, "Schema not found");
  schema_value value{subject, v->version, v->id, stored->type, stored->references, stored->text, true};
  return write_plan{{{key, encode_schema_value(value)}}, json_reply(v->version)};
}

std::optional<std::string> subject_of(const request_target& t) {
  if (t.segments.size() == 2) return t.segments[1];
  return std::nullopt;
}

std::variant<write_plan, registry_reply> change_config(const schema_store& store, const registry_request& request,
                                                       const request_target& t) {
  const auto subject = subject_of(t);
  if (subject)
    if (auto bad = check_subject(*subject)) return *bad;
  const auto key = encode_key(config_key{subject});
  if (request.method == "DELETE") {
    const auto previous = store.compatibility(subject);
    if (subject && !previous)
      return error_reply(error_codes::subject_level_compatibility_not_configured,
                         "Subject '" + *subject + "' does not have subject-level compatibility configured");
    return write_plan{{{key, std::nullopt}},
                      json_reply({{"compatibilityLevel", previous.value_or(std::string(default_compatibility))}})};
  }
  const auto body = json::parse(request.body, nullptr, false);
  const auto field = body.is_object() ? body.find("compatibility") : body.end();
  const auto level = body.is_object() && field != body.end() && field->is_string()
                         ? parse_level(upper(field->get<std::string>()))
                         : std::nullopt;
  if (!level)
    return error_reply(error_codes::invalid_compatibility_level,
                       "Invalid compatibility level. Valid values are none, backward, forward, full, "
                       "backward_transitive, forward_transitive, and full_transitive");
  const auto name = std::string(level_name(*level));
  return write_plan{{{key, encode_config_value(name)}}, json_reply({{"compatibility", name}})};
}

std::variant<write_plan, registry_reply> change_mode(const schema_store& store, const registry_request& request,
                                                     const request_target& t) {
  const auto subject = subject_of(t);
  if (subject)
    if (auto bad = check_subject(*subject)) return *bad;
  const auto key = encode_key(mode_key{subject});
  if (request.method == "DELETE") {
    const auto previous = store.mode(subject);
    if (subject && !previous)
      return error_reply(error_codes::subject_level_mode_not_configured,
                         "Subject '" + *subject + "' does not have subject-level mode configured");
    return write_plan{{{key, std::nullopt}}, json_reply({{"mode", previous.value_or("READWRITE")}})};
  }
  const auto body = json::parse(request.body, nullptr, false);
  const auto field = body.is_object() ? body.find("mode") : body.end();
  const auto mode =
      body.is_object() && field != body.end() && field->is_string() ? upper(field->get<std::string>()) : std::string();
  if (mode != "READWRITE" && mode != "READONLY" && mode != "READONLY_OVERRIDE" && mode != "IMPORT")
    return error_reply(error_codes::invalid_mode,
                       "Invalid mode. Valid values are READWRITE, READONLY, READONLY_OVERRIDE and IMPORT");
  if (mode == "IMPORT" && !t.flag("force")) {
    const bool has_schemas = subject ? store.find_subject(*subject) != nullptr : !store.subjects().empty();
    if (has_schemas)
      return error_reply(error_codes::operation_not_permitted,
                         "Cannot import since found existing subjects; set force=true to import anyway");
  }
  return write_plan{{{key, encode_mode_value(mode)}}, json_reply({{"mode", mode}})};
}

}  // namespace

bool is_write(const std::string& method, const request_target& t) {
  const auto& s = t.segments;
  if (s.empty()) return false;
  if (method == "POST") return s.size() == 3 && s[0] == "subjects" && s[2] == "versions";
  if (method == "DELETE" && s[0] == "subjects") return s.size() == 2 || (s.size() == 4 && s[2] == "versions");
  if (method == "PUT" || method == "DELETE") return (s[0] == "config" || s[0] == "mode") && s.size() <= 2;
  return false;
}

std::variant<write_plan, registry_reply> plan_write(const schema_store& store, const registry_request& request,
                                                    const request_target& t, const schema::parse_limits& limits) {
  const auto& s = t.segments;
  if (s[0] == "subjects") {
    if (request.method == "POST") return register_schema(store, s[1], request, t, limits);
    if (s.size() == 2) return delete_subject(store, s[1], t);
    return delete_version(store, s[1], s[3], t);
  }
  if (s[0] == "config") return change_config(store, request, t);
  return change_mode(store, request, t);
}

}  // namespace ferry::registry
