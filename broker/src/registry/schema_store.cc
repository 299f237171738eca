#include "registry/schema_store.h"

#include <algorithm>

namespace ferry::registry {

bool subject_state::all_deleted() const {
  return std::all_of(versions.begin(), versions.end(), [](const auto& v) { return v.second.deleted; });
}

const subject_version* subject_state::latest(bool include_deleted) const {
  for (auto it = versions.rbegin(); it != versions.rend(); ++it)
    if (include_deleted || !it->second.deleted) return &it->second;
  return nullptr;
}

void schema_store::apply(std::string_view key_bytes, const std::optional<std::string_view>& value) {
  const auto key = decode_key(key_bytes);
  if (!key) return;
  if (const auto* k = std::get_if<schema_key>(&*key)) {
    apply_schema(*k, value);
  } else if (const auto* config = std::get_if<config_key>(&*key)) {
    const auto level = value ? decode_config_value(*value) : std::nullopt;
    if (level)
      compatibility_[config->subject] = *level;
    else if (!value)
      compatibility_.erase(config->subject);
  } else if (const auto* m = std::get_if<mode_key>(&*key)) {
    const auto mode = value ? decode_mode_value(*value) : std::nullopt;
    if (mode)
      modes_[m->subject] = *mode;
    else if (!value)
      modes_.erase(m->subject);
  } else if (std::holds_alternative<delete_subject_key>(*key) && value) {
    if (const auto mark = decode_watermark_value(*value)) {
      const auto it = subjects_.find(mark->subject);
      if (it != subjects_.end())
        for (auto& [version, v] : it->second.versions)
          if (version <= mark->version) v.deleted = true;
    }
  } else if (std::holds_alternative<clear_subject_key>(*key) && value) {
    if (const auto mark = decode_watermark_value(*value)) {
      const auto it = subjects_.find(mark->subject);
      if (it != subjects_.end()) {
        std::vector<std::int32_t> cleared;
        for (const auto& [version, v] : it->second.versions)
          if (version <= mark->version && v.deleted) cleared.push_back(version);
        for (const auto version : cleared) forget_version(mark->subject, version);
      }
    }
  }
}

void schema_store::apply_schema(const schema_key& key, const std::optional<std::string_view>& value) {
  if (!value) {
    forget_version(key.subject, key.version);
    return;
  }
  auto decoded = decode_schema_value(*value);
  if (!decoded || decoded->subject != key.subject || decoded->version != key.version || decoded->id <= 0) return;
  max_id_ = std::max(max_id_, decoded->id);
  auto& subject = subjects_[key.subject];
  const auto existing = subject.versions.find(key.version);
  if (existing != subject.versions.end() && existing->second.id != decoded->id)
    forget_version(key.subject, key.version);
  auto& state = subjects_[key.subject];
  if (!state.versions.contains(key.version)) {
    if (!schemas_.contains(decoded->id)) {
      ids_.emplace(std::make_tuple(decoded->type, decoded->schema, decoded->references), decoded->id);
      schemas_.emplace(decoded->id, stored_schema{decoded->id, decoded->type, std::move(decoded->schema),
                                                  std::move(decoded->references)});
    }
    ++schema_users_[decoded->id];
  }
  state.versions[key.version] = {key.version, decoded->id, decoded->deleted};
}

void schema_store::forget_version(const std::string& subject, std::int32_t version) {
  const auto it = subjects_.find(subject);
  if (it == subjects_.end()) return;
  const auto v = it->second.versions.find(version);
  if (v == it->second.versions.end()) return;
  const auto id = v->second.id;
  it->second.versions.erase(v);
  if (it->second.versions.empty()) subjects_.erase(it);
  release(id);
}

void schema_store::release(std::int32_t id) {
  const auto users = schema_users_.find(id);
  if (users == schema_users_.end() || --users->second > 0) return;
  schema_users_.erase(users);
  if (const auto s = schemas_.find(id); s != schemas_.end()) {
    ids_.erase(std::make_tuple(s->second.type, s->second.text, s->second.references));
    schemas_.erase(s);
  }
}

const subject_state* schema_store::find_subject(const std::string& subject) const {
  const auto it = subjects_.find(subject);
  return it == subjects_.end() ? nullptr : &it->second;
}

const stored_schema* schema_store::find_schema(std::int32_t id) const {
  const auto it = schemas_.find(id);
  return it == schemas_.end() ? nullptr : &it->second;
}

std::optional<std::int32_t> schema_store::id_of(schema::schema_type type, const std::string& text,
                                                const std::vector<schema_reference>& references) const {
  const auto it = ids_.find(std::make_tuple(type, text, references));
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::pair<std::string, subject_version>> schema_store::usages(std::int32_t id) const {
  std::vector<std::pair<std::string, subject_version>> out;
  for (const auto& [name, subject] : subjects_)
    for (const auto& [version, v] : subject.versions)
      if (v.id == id) out.emplace_back(name, v);
  return out;
}

std::vector<std::int32_t> schema_store::referenced_by(const std::string& subject, std::int32_t version) const {
  std::set<std::int32_t> ids;
  for (const auto& [name, state] : subjects_)
    for (const auto& [v, entry] : state.versions) {
      if (entry.deleted) continue;
      const auto* s = find_schema(entry.id);
      if (s == nullptr) continue;
      for (const auto& r : s->references)
        if (r.subject == subject && r.version == version) ids.insert(entry.id);
    }
  return {ids.begin(), ids.end()};
}

std::optional<std::string> schema_store::compatibility(const std::optional<std::string>& subject) const {
  const auto it = compatibility_.find(subject);
  if (it == compatibility_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> schema_store::mode(const std::optional<std::string>& subject) const {
  const auto it = modes_.find(subject);
  if (it == modes_.end()) return std::nullopt;
  return it->second;
}

}  // namespace ferry::registry
