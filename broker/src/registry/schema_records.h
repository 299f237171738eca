#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "schema/schema_format.h"

namespace ferry::registry {

// The records of the `_schemas` topic in the format of Confluent's Schema Registry (its KafkaStore), so that a
// registry's history moves between Ferry and Confluent's registry by copying the topic. Keys and values are
// compact JSON. Compaction compares key bytes, so keys are always written with the fields in Confluent's order:
//
//   SCHEMA          {"keytype":"SCHEMA","subject":s,"version":v,"magic":1}
//                   value {"subject":s,"version":v,"id":n,"schemaType":t,"references":[..],"schema":text,
//                          "deleted":b}   (schemaType absent for AVRO; a tombstone deletes the version for good)
//   CONFIG          {"keytype":"CONFIG","subject":s|null,"magic":0}   value {"compatibilityLevel":level}
//   MODE            {"keytype":"MODE","subject":s|null,"magic":0}     value {"mode":mode}
//                   (subject null: the global setting; a tombstone removes a subject's own setting)
//   DELETE_SUBJECT  {"keytype":"DELETE_SUBJECT","subject":s,"magic":0} value {"subject":s,"version":v}
//                   (every version <= v of the subject is soft-deleted)
//   CLEAR_SUBJECT   {"keytype":"CLEAR_SUBJECT","subject":s,"magic":0}  value {"subject":s,"version":v}
//   NOOP            {"keytype":"NOOP","magic":0}   (written by Confluent's leader to find the end; ignored)
//
// Readers accept keys with the fields in any order (Karapace writes them so too) and ignore fields they do not
// know (newer Confluent servers add metadata, ruleSet, md5...).

struct schema_reference {
  std::string name;
  std::string subject;
  std::int32_t version = 0;
  auto operator<=>(const schema_reference&) const = default;
};

struct schema_key {
  std::string subject;
  std::int32_t version = 0;
};
struct schema_value {
  std::string subject;
  std::int32_t version = 0;
  std::int32_t id = 0;
  schema::schema_type type = schema::schema_type::avro;
  std::vector<schema_reference> references;
  std::string schema;
  bool deleted = false;
};

struct config_key {
  std::optional<std::string> subject;  // nullopt: global
};
struct mode_key {
  std::optional<std::string> subject;
};
struct delete_subject_key {
  std::string subject;
};
struct clear_subject_key {
  std::string subject;
};
struct noop_key {};

using record_key = std::variant<schema_key, config_key, mode_key, delete_subject_key, clear_subject_key, noop_key>;

// A subject and the versions (<= version) a DELETE_SUBJECT or CLEAR_SUBJECT value covers.
struct subject_watermark {
  std::string subject;
  std::int32_t version = 0;
};

std::string encode_key(const record_key& key);
std::string encode_schema_value(const schema_value& value);
std::string encode_config_value(std::string_view compatibility_level);
std::string encode_mode_value(std::string_view mode);
std::string encode_watermark_value(const subject_watermark& value);

// nullopt for a key this reader does not know (a newer keytype such as CONTEXT) or one that does not parse.
std::optional<record_key> decode_key(std::string_view bytes);
std::optional<schema_value> decode_schema_value(std::string_view bytes);
std::optional<std::string> decode_config_value(std::string_view bytes);
std::optional<std::string> decode_mode_value(std::string_view bytes);
std::optional<subject_watermark> decode_watermark_value(std::string_view bytes);

}  // namespace ferry::registry
