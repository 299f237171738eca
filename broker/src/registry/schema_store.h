#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "registry/schema_records.h"

namespace ferry::registry {

// One registered schema, shared by every subject version that has the same content (Confluent's ids are
// content-addressed: the same type, text and references under another subject reuse the id).
struct stored_schema {
  std::int32_t id = 0;
  schema::schema_type type = schema::schema_type::avro;
  std::string text;
  std::vector<schema_reference> references;
};

struct subject_version {
  std::int32_t version = 0;
  std::int32_t id = 0;
  bool deleted = false;  // soft-deleted: kept, still readable with ?deleted=true
};

struct subject_state {
  std::map<std::int32_t, subject_version> versions;
  [[nodiscard]] bool all_deleted() const;
  // The newest version (not soft-deleted unless `include_deleted`), nullptr when there is none.
  [[nodiscard]] const subject_version* latest(bool include_deleted) const;
};

// The registry's state, as the records of `_schemas` (schema_records.h) build it, applied in log order. Every
// broker builds its own copy from the topic and answers reads from it. Not thread-safe: registry_state guards it.
class schema_store {
 public:
  // Applies one record of the topic; records this reader does not understand are skipped (Confluent's readers
  // do the same), so a topic written by a newer registry still loads.
  void apply(std::string_view key, const std::optional<std::string_view>& value);

  [[nodiscard]] const subject_state* find_subject(const std::string& subject) const;
  [[nodiscard]] const std::map<std::string, subject_state>& subjects() const { return subjects_; }
  [[nodiscard]] const stored_schema* find_schema(std::int32_t id) const;
  [[nodiscard]] const std::map<std::int32_t, stored_schema>& schemas() const { return schemas_; }
  // The id of a schema with this content, if one was registered under any subject.
  [[nodiscard]] std::optional<std::int32_t> id_of(schema::schema_type type, const std::string& text,
                                                  const std::vector<schema_reference>& references) const;
  // The highest id the topic ever carried (0 when none): a new schema gets the next one.
  [[nodiscard]] std::int32_t max_id() const { return max_id_; }
  // Every (subject, version) that uses the schema `id`, soft-deleted ones too.
  [[nodiscard]] std::vector<std::pair<std::string, subject_version>> usages(std::int32_t id) const;
  // The ids of the schemas that refer to `subject` at `version`, not soft-deleted (`/referencedby`).
  [[nodiscard]] std::vector<std::int32_t> referenced_by(const std::string& subject, std::int32_t version) const;

  // Compatibility levels and modes as stored ("BACKWARD", "READWRITE"...): nullopt when not set.
  [[nodiscard]] std::optional<std::string> compatibility(const std::optional<std::string>& subject) const;
  [[nodiscard]] std::optional<std::string> mode(const std::optional<std::string>& subject) const;

 private:
  void apply_schema(const schema_key& key, const std::optional<std::string_view>& value);
  void forget_version(const std::string& subject, std::int32_t version);
  void release(std::int32_t id);

  std::map<std::string, subject_state> subjects_;
  std::map<std::int32_t, stored_schema> schemas_;
  std::map<std::int32_t, std::size_t> schema_users_;  // subject versions per id
  std::map<std::tuple<schema::schema_type, std::string, std::vector<schema_reference>>, std::int32_t> ids_;
  std::map<std::optional<std::string>, std::string> compatibility_;
  std::map<std::optional<std::string>, std::string> modes_;
  std::int32_t max_id_ = 0;
};

}  // namespace ferry::registry
