#pragma once

#include <google/protobuf/descriptor.h>

#include <vector>

#include "proto_schema/difference.h"

namespace ferry::proto_schema {

// Confluent's protobuf-provider SchemaDiff (`diff/SchemaDiff.java`, `MessageSchemaDiff.java`,
// `FieldSchemaDiff.java`) from `original` to `update`, keeping only the differences that break BACKWARD
// compatibility. Messages match by name (map entries left out, as in `.proto` text), fields by tag across the
// message whatever oneof holds them, and the field kinds and scalar groups are Confluent's: {int32, int64, uint32,
// uint64, bool, enum}, {sint32, sint64}, {string, bytes}, {fixed32, sfixed32}, {fixed64, sfixed64}, float, double. A
// field whose message type is defined outside the main file (a reference or a built-in file) is diffed into that type,
// once per pair of types, to at most 16 such types deep (deeper ones count as compatible, as Confluent counts a type
// it is already inside). Labels follow Confluent's model of the text: none for proto3 singular fields and oneof
// members, so only an explicit label change of a numeric field is FIELD_NUMERIC_LABEL_CHANGED.
std::vector<difference> incompatible_differences(const google::protobuf::FileDescriptor& original,
                                                 const google::protobuf::FileDescriptor& update);

}  // namespace ferry::proto_schema
