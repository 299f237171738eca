#include "proto_schema/normalize.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace ferry::proto_schema {
namespace {

namespace pb = google::protobuf;

template <typename Ranges>
void sort_by_start(Ranges& ranges) {
  std::stable_sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return a.start() < b.start(); });
}

void sort_enum(pb::EnumDescriptorProto& e, bool keep_first) {
  auto& values = *e.mutable_value();
  const auto first = values.begin() + (keep_first && !values.empty() ? 1 : 0);
  std::stable_sort(first, values.end(), [](const auto& a, const auto& b) {
    return a.number() != b.number() ? a.number() < b.number() : a.name() < b.name();
  });
  sort_by_start(*e.mutable_reserved_range());
  std::sort(e.mutable_reserved_name()->begin(), e.mutable_reserved_name()->end());
}

// Fields by tag, a oneof's members together at the place of its smallest tag (libprotobuf wants them consecutive).
void sort_fields(pb::DescriptorProto& message) {
  std::map<int, int> oneof_first_tag;
  for (const auto& field : message.field()) {
    if (!field.has_oneof_index()) continue;
    const auto [it, inserted] = oneof_first_tag.emplace(field.oneof_index(), field.number());
    if (!inserted) it->second = std::min(it->second, field.number());
  }
  auto position = [&](const pb::FieldDescriptorProto& field) {
    return field.has_oneof_index() ? oneof_first_tag[field.oneof_index()] : field.number();
  };
  std::vector<pb::FieldDescriptorProto> fields(message.field().begin(), message.field().end());
  std::stable_sort(fields.begin(), fields.end(), [&](const auto& a, const auto& b) {
    const int pa = position(a);
    const int pb = position(b);
    return pa != pb ? pa < pb : a.number() < b.number();
  });
  message.clear_field();
  for (auto& field : fields) *message.add_field() = std::move(field);
}

void sort_message(pb::DescriptorProto& message, bool proto3) {
  sort_fields(message);
  sort_by_start(*message.mutable_reserved_range());
  sort_by_start(*message.mutable_extension_range());
  std::sort(message.mutable_reserved_name()->begin(), message.mutable_reserved_name()->end());
  for (auto& e : *message.mutable_enum_type()) sort_enum(e, proto3);
  for (auto& nested : *message.mutable_nested_type()) sort_message(nested, proto3);
}

void sort_imports(pb::FileDescriptorProto& file) {
  std::vector<std::string> public_imports;
  for (const int index : file.public_dependency()) public_imports.push_back(file.dependency(index));
  std::vector<std::string> weak_imports;
  for (const int index : file.weak_dependency()) weak_imports.push_back(file.dependency(index));
  std::sort(file.mutable_dependency()->begin(), file.mutable_dependency()->end());
  auto index_of = [&](const std::string& name) {
    return static_cast<int>(std::find(file.dependency().begin(), file.dependency().end(), name) -
                            file.dependency().begin());
  };
  file.clear_public_dependency();
  for (const auto& name : public_imports) file.add_public_dependency(index_of(name));
  file.clear_weak_dependency();
  for (const auto& name : weak_imports) file.add_weak_dependency(index_of(name));
}

}  // namespace

pb::FileDescriptorProto normalized_proto(const pb::FileDescriptor& file) {
  pb::FileDescriptorProto proto;
  file.CopyTo(&proto);
  const bool proto3 = file.syntax() == pb::FileDescriptor::SYNTAX_PROTO3;
  sort_imports(proto);
  for (auto& message : *proto.mutable_message_type()) sort_message(message, proto3);
  for (auto& e : *proto.mutable_enum_type()) sort_enum(e, proto3);
  return proto;
}

}  // namespace ferry::proto_schema
