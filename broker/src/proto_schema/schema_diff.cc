#include "proto_schema/schema_diff.h"

#include <google/protobuf/descriptor.pb.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace ferry::proto_schema {
namespace {

namespace pb = google::protobuf;

constexpr int max_reference_depth = 16;

enum class field_kind { scalar, message, map };
enum class scalar_group { general_number, signed_number, string_or_bytes, fixed32, fixed64, float32, float64 };
// The label as Confluent's parsed text has it: none for proto3 singular fields and oneof members.
enum class field_label { none, optional, required, repeated };

field_label label_of(const pb::FieldDescriptor& field) {
  if (field.real_containing_oneof() != nullptr) return field_label::none;
  if (field.is_repeated()) return field_label::repeated;
  if (field.file()->syntax() == pb::FileDescriptor::SYNTAX_PROTO3) {
    return field.containing_oneof() != nullptr ? field_label::optional : field_label::none;
  }
  return field.is_required() ? field_label::required : field_label::optional;
}

// A map entry only counts as one when it has the key and value a map<K, V> gives it.
bool is_map(const pb::FieldDescriptor& field) {
  return field.is_map() && field.message_type()->FindFieldByNumber(1) != nullptr &&
         field.message_type()->FindFieldByNumber(2) != nullptr;
}

field_kind kind_of(const pb::FieldDescriptor& field) {
  if (field.cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) return field_kind::scalar;
  return is_map(field) ? field_kind::map : field_kind::message;
}

scalar_group group_of(const pb::FieldDescriptor& field) {
  switch (field.type()) {
    case pb::FieldDescriptor::TYPE_SINT32:
    case pb::FieldDescriptor::TYPE_SINT64:
      return scalar_group::signed_number;
    case pb::FieldDescriptor::TYPE_STRING:
    case pb::FieldDescriptor::TYPE_BYTES:
      return scalar_group::string_or_bytes;
    case pb::FieldDescriptor::TYPE_FIXED32:
    case pb::FieldDescriptor::TYPE_SFIXED32:
      return scalar_group::fixed32;
    case pb::FieldDescriptor::TYPE_FIXED64:
    case pb::FieldDescriptor::TYPE_SFIXED64:
      return scalar_group::fixed64;
    case pb::FieldDescriptor::TYPE_FLOAT:
      return scalar_group::float32;
    case pb::FieldDescriptor::TYPE_DOUBLE:
      return scalar_group::float64;
    default:  // int32, int64, uint32, uint64, bool, enum
      return scalar_group::general_number;
  }
}

// A type's name without its file's package, as Confluent compares named types.
std::string local_name(const pb::Descriptor& message) {
  const auto& package = message.file()->package();
  const auto& full = message.full_name();
  if (!package.empty() && full.size() > package.size() && full.compare(0, package.size(), package) == 0 &&
      full[package.size()] == '.') {
    return full.substr(package.size() + 1);
  }
  return full;
}

std::vector<const pb::Descriptor*> top_level_messages(const pb::FileDescriptor& file) {
  std::vector<const pb::Descriptor*> out;
  out.reserve(file.message_type_count());
  for (int i = 0; i < file.message_type_count(); ++i) out.push_back(file.message_type(i));
  return out;
}

std::vector<const pb::Descriptor*> nested_messages(const pb::Descriptor& message) {
  std::vector<const pb::Descriptor*> out;
  out.reserve(message.nested_type_count());
  for (int i = 0; i < message.nested_type_count(); ++i) out.push_back(message.nested_type(i));
  return out;
}

// A message's fields by tag, and which oneof (by name) holds each.
struct field_layout {
  std::map<int, const pb::FieldDescriptor*> by_tag;
  std::map<int, std::string> oneof_of;
  std::map<std::string, const pb::OneofDescriptor*> oneofs;

  explicit field_layout(const pb::Descriptor& message) {
    for (int i = 0; i < message.field_count(); ++i) {
      const auto* field = message.field(i);
      by_tag[field->number()] = field;
      if (const auto* oneof = field->real_containing_oneof()) {
        oneof_of[field->number()] = oneof->name();
        oneofs[oneof->name()] = oneof;
      }
    }
  }
};

class differ {
 public:
  differ(const pb::FileDescriptor& original, const pb::FileDescriptor& update) : original_(original), update_(update) {}

  std::vector<difference> run() {
    if (original_.package() != update_.package()) add(difference_type::package_changed);
    compare_types(top_level_messages(original_), top_level_messages(update_));
    return std::move(out_);
  }

 private:
  // The path a difference is reported at grows and shrinks with the walk.
  class path_scope {
   public:
    path_scope(differ& owner, std::string part) : owner_(owner) { owner_.path_.push_back(std::move(part)); }
    ~path_scope() { owner_.path_.pop_back(); }
    path_scope(const path_scope&) = delete;
    path_scope& operator=(const path_scope&) = delete;

   private:
    differ& owner_;
  };

  void add(difference_type type) {
    std::string path = "#/";
    for (std::size_t i = 0; i < path_.size(); ++i) path += (i == 0 ? "" : "/") + path_[i];
    add({type, std::move(path)});
  }

  // A type used in many places reports its differences once (Confluent repeats them per use).
  void add(difference diff) {
    if (std::find(out_.begin(), out_.end(), diff) == out_.end()) out_.push_back(std::move(diff));
  }

  void compare_types(const std::vector<const pb::Descriptor*>& original,
                     const std::vector<const pb::Descriptor*>& update) {
    std::map<std::string_view, const pb::Descriptor*> updated;
    for (const auto* message : update) {
      if (!message->options().map_entry()) updated.emplace(message->name(), message);
    }
    for (const auto* message : original) {
      if (message->options().map_entry()) continue;
      const path_scope scope(*this, message->name());
      const auto it = updated.find(message->name());
      if (it == updated.end()) {
        add(difference_type::message_removed);
      } else {
        compare_message(*message, *it->second);
      }
    }
  }

  void compare_message(const pb::Descriptor& original, const pb::Descriptor& update) {
    const field_layout before(original);
    const field_layout after(update);

    // A oneof gone with every member is a deletion Confluent allows; members of a oneof that partly survives are not.
    std::set<std::string> deleted_oneofs;
    for (const auto& [name, oneof] : before.oneofs) {
      if (after.oneofs.count(name) != 0) continue;
      bool survives = false;
      for (int i = 0; i < oneof->field_count(); ++i) survives |= after.by_tag.count(oneof->field(i)->number()) != 0;
      if (!survives) deleted_oneofs.insert(name);
    }

    // Fields that were independent (top-level, or in different oneofs) and now share a oneof.
    for (int i = 0; i < update.real_oneof_decl_count(); ++i) {
      const auto* oneof = update.oneof_decl(i);
      const path_scope scope(*this, oneof->name());
      std::set<std::string> origins;
      int moved_in = 0;
      for (int j = 0; j < oneof->field_count(); ++j) {
        const int tag = oneof->field(j)->number();
        if (const auto it = before.oneof_of.find(tag); it != before.oneof_of.end()) {
          origins.insert("oneof:" + it->second);
        } else if (before.by_tag.count(tag) != 0) {
          origins.insert("field:" + std::to_string(tag));
          ++moved_in;
        }
      }
      if (origins.size() > 1) {
        add(moved_in > 1 ? difference_type::multiple_fields_moved_to_oneof
                         : difference_type::field_moved_to_existing_oneof);
      }
    }

    std::set<int> tags;
    for (const auto& entry : before.by_tag) tags.insert(entry.first);
    for (const auto& entry : after.by_tag) tags.insert(entry.first);
    for (const int tag : tags) {
      const auto old_field = before.by_tag.find(tag);
      const auto new_field = after.by_tag.find(tag);
      const auto old_oneof = before.oneof_of.find(tag);
      const auto new_oneof = after.oneof_of.find(tag);
      if (new_field == after.by_tag.end()) {
        if (old_oneof != before.oneof_of.end()) {
          if (deleted_oneofs.count(old_oneof->second) == 0) {
            const path_scope oneof_scope(*this, old_oneof->second);
            const path_scope tag_scope(*this, std::to_string(tag));
            add(difference_type::oneof_field_removed);
          }
        } else if (label_of(*old_field->second) == field_label::required) {
          const path_scope scope(*this, std::to_string(tag));
          add(difference_type::required_field_removed);
        }
      } else if (old_field == before.by_tag.end()) {
        if (new_oneof == after.oneof_of.end() && label_of(*new_field->second) == field_label::required) {
          const path_scope scope(*this, std::to_string(tag));
          add(difference_type::required_field_added);
        }
      } else if (new_oneof != after.oneof_of.end()) {
        const path_scope oneof_scope(*this, new_oneof->second);
        const path_scope tag_scope(*this, std::to_string(tag));
        compare_field(*old_field->second, *new_field->second);
      } else {
        const path_scope scope(*this, std::to_string(tag));
        compare_field(*old_field->second, *new_field->second);
      }
    }
    compare_types(nested_messages(original), nested_messages(update));
  }

  void compare_field(const pb::FieldDescriptor& original, const pb::FieldDescriptor& update) {
    compare_typed(label_of(original), label_of(update), original, update);
  }

  void compare_typed(field_label original_label, field_label update_label, const pb::FieldDescriptor& original,
                     const pb::FieldDescriptor& update) {
    const auto kind = kind_of(original);
    if (kind != kind_of(update)) {
      add(difference_type::field_kind_changed);
      return;
    }
    switch (kind) {
      case field_kind::scalar: {
        const auto group = group_of(original);
        if (group != group_of(update)) {
          add(difference_type::field_scalar_kind_changed);
        } else if (original_label != field_label::none && update_label != field_label::none &&
                   original_label != update_label && group != scalar_group::string_or_bytes) {
          add(difference_type::field_numeric_label_changed);
        }
        break;
      }
      case field_kind::message:
        compare_message_types(*original.message_type(), *update.message_type());
        break;
      case field_kind::map:
        for (const int tag : {1, 2}) {
          compare_typed(field_label::none, field_label::none, *original.message_type()->FindFieldByNumber(tag),
                        *update.message_type()->FindFieldByNumber(tag));
        }
        break;
    }
  }

  void compare_message_types(const pb::Descriptor& original, const pb::Descriptor& update) {
    auto name = local_name(original);
    if (name != local_name(update)) {
      add(difference_type::field_named_type_changed);
      return;
    }
    // Types of the main files are diffed on their own; a type another file defines is diffed here, into its fields.
    if (original.file() == &original_ && update.file() == &update_) return;
    if (depth_ >= max_reference_depth) return;
    const auto diffs = diff_referenced(original, update, name);
    for (const auto& diff : diffs) add(diff);
    if (!diffs.empty()) add(difference_type::field_named_type_changed);
  }

  // A referenced pair's differences, at paths from the type's own name; each pair is diffed once, and a pair met
  // again while it is being diffed (a recursive type) adds nothing.
  std::vector<difference> diff_referenced(const pb::Descriptor& original, const pb::Descriptor& update,
                                          const std::string& name) {
    const auto key = std::make_pair(&original, &update);
    if (const auto it = done_.find(key); it != done_.end()) return it->second;
    done_.emplace(key, std::vector<difference>{});
    std::vector<std::string> path;
    for (std::size_t start = 0;;) {
      const auto dot = name.find('.', start);
      path.push_back(name.substr(start, dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    auto saved_path = std::exchange(path_, std::move(path));
    auto saved_out = std::exchange(out_, {});
    ++depth_;
    compare_message(original, update);
    --depth_;
    auto diffs = std::exchange(out_, std::move(saved_out));
    path_ = std::move(saved_path);
    done_[key] = diffs;
    return diffs;
  }

  const pb::FileDescriptor& original_;
  const pb::FileDescriptor& update_;
  std::vector<std::string> path_;
  std::vector<difference> out_;
  std::map<std::pair<const pb::Descriptor*, const pb::Descriptor*>, std::vector<difference>> done_;
  int depth_ = 0;
};

}  // namespace

std::vector<difference> incompatible_differences(const pb::FileDescriptor& original, const pb::FileDescriptor& update) {
  return differ(original, update).run();
}

}  // namespace ferry::proto_schema
