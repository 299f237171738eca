#include "registry/schema_records.h"

#include <nlohmann/json.hpp>

namespace ferry::registry {
namespace {

// nlohmann's ordered_json keeps insertion order, so keys come out in Confluent's field order.
using ordered = nlohmann::ordered_json;
using json = nlohmann::json;

std::string dump(const ordered& value) { return value.dump(-1, ' ', false, ordered::error_handler_t::replace); }

ordered subject_or_null(const std::optional<std::string>& subject) {
  return subject ? ordered(*subject) : ordered(nullptr);
}

std::optional<json> parse_object(std::string_view bytes) {
  auto value = json::parse(bytes, nullptr, false);
  if (value.is_discarded() || !value.is_object()) return std::nullopt;
  return value;
}

std::optional<std::string> string_field(const json& object, const char* name) {
  const auto it = object.find(name);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<std::int32_t> int_field(const json& object, const char* name) {
  const auto it = object.find(name);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  const auto value = it->get<std::int64_t>();
  if (value < INT32_MIN || value > INT32_MAX) return std::nullopt;
  return static_cast<std::int32_t>(value);
}

// A CONFIG or MODE key's subject: a string, or null for the global setting.
std::optional<std::optional<std::string>> optional_subject(const json& object) {
  const auto it = object.find("subject");
  if (it == object.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) return std::nullopt;
  return std::optional<std::string>(it->get<std::string>());
}

}  // namespace

std::string encode_key(const record_key& key) {
  struct visitor {
    std::string operator()(const schema_key& k) const {
      return dump(ordered{{"keytype", "SCHEMA"}, {"subject", k.subject}, {"version", k.version}, {"magic", 1}});
    }
    std::string operator()(const config_key& k) const {
      return dump(ordered{{"keytype", "CONFIG"}, {"subject", subject_or_null(k.subject)}, {"magic", 0}});
    }
    std::string operator()(const mode_key& k) const {
      return dump(ordered{{"keytype", "MODE"}, {"subject", subject_or_null(k.subject)}, {"magic", 0}});
    }
    std::string operator()(const delete_subject_key& k) const {
      return dump(ordered{{"keytype", "DELETE_SUBJECT"}, {"subject", k.subject}, {"magic", 0}});
    }
    std::string operator()(const clear_subject_key& k) const {
      return dump(ordered{{"keytype", "CLEAR_SUBJECT"}, {"subject", k.subject}, {"magic", 0}});
    }
    std::string operator()(const noop_key&) const { return dump(ordered{{"keytype", "NOOP"}, {"magic", 0}}); }
  };
  return std::visit(visitor{}, key);
}

std::string encode_schema_value(const schema_value& value) {
  ordered out{{"subject", value.subject}, {"version", value.version}, {"id", value.id}};
  if (value.type != schema::schema_type::avro) out["schemaType"] = std::string(schema::type_name(value.type));
  if (!value.references.empty()) {
    ordered references = ordered::array();
    for (const auto& r : value.references)
      references.push_back({{"name", r.name}, {"subject", r.subject}, {"version", r.version}});
    out["references"] = std::move(references);
  }
  out["schema"] = value.schema;
  out["deleted"] = value.deleted;
  return dump(out);
}

std::string encode_config_value(std::string_view compatibility_level) {
  return dump(ordered{{"compatibilityLevel", compatibility_level}});
}

std::string encode_mode_value(std::string_view mode) { return dump(ordered{{"mode", mode}}); }

std::string encode_watermark_value(const subject_watermark& value) {
  return dump(ordered{{"subject", value.subject}, {"version", value.version}});
}

std::optional<record_key> decode_key(std::string_view bytes) {
  const auto key = parse_object(bytes);
  if (!key) return std::nullopt;
  const auto type = string_field(*key, "keytype");
  if (!type) return std::nullopt;
  if (*type == "NOOP") return noop_key{};
  if (*type == "CONFIG" || *type == "MODE") {
    const auto subject = optional_subject(*key);
    if (!subject) return std::nullopt;
    if (*type == "CONFIG") return config_key{*subject};
    return mode_key{*subject};
  }
  const auto subject = string_field(*key, "subject");
  if (!subject) return std::nullopt;
  if (*type == "SCHEMA") {
    const auto version = int_field(*key, "version");
    if (!version) return std::nullopt;
    return schema_key{*subject, *version};
  }
  if (*type == "DELETE_SUBJECT") return delete_subject_key{*subject};
  if (*type == "CLEAR_SUBJECT") return clear_subject_key{*subject};
  return std::nullopt;
}

std::optional<schema_value> decode_schema_value(std::string_view bytes) {
  const auto value = parse_object(bytes);
  if (!value) return std::nullopt;
  schema_value out;
  const auto subject = string_field(*value, "subject");
  const auto version = int_field(*value, "version");
  const auto id = int_field(*value, "id");
  const auto text = string_field(*value, "schema");
  if (!subject || !version || !id || !text) return std::nullopt;
  out.subject = *subject;
  out.version = *version;
  out.id = *id;
  out.schema = *text;
  if (const auto type = string_field(*value, "schemaType")) {
    const auto parsed = schema::parse_type(*type);
    if (!parsed) return std::nullopt;
    out.type = *parsed;
  }
  if (const auto it = value->find("deleted"); it != value->end() && it->is_boolean()) out.deleted = it->get<bool>();
  if (const auto it = value->find("references"); it != value->end() && it->is_array()) {
    for (const auto& r : *it) {
      if (!r.is_object()) return std::nullopt;
      const auto name = string_field(r, "name");
      const auto ref_subject = string_field(r, "subject");
      const auto ref_version = int_field(r, "version");
      if (!name || !ref_subject || !ref_version) return std::nullopt;
      out.references.push_back({*name, *ref_subject, *ref_version});
    }
  }
  return out;
}

std::optional<std::string> decode_config_value(std::string_view bytes) {
  const auto value = parse_object(bytes);
  if (!value) return std::nullopt;
  return string_field(*value, "compatibilityLevel");
}

std::optional<std::string> decode_mode_value(std::string_view bytes) {
  const auto value = parse_object(bytes);
  if (!value) return std::nullopt;
  return string_field(*value, "mode");
}

std::optional<subject_watermark> decode_watermark_value(std::string_view bytes) {
  const auto value = parse_object(bytes);
  if (!value) return std::nullopt;
  const auto subject = string_field(*value, "subject");
  const auto version = int_field(*value, "version");
  if (!subject || !version) return std::nullopt;
  return subject_watermark{*subject, *version};
}

}  // namespace ferry::registry
