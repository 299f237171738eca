#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

namespace ferry::proto_schema {

// The main file in Confluent's normalized form (ProtobufSchemaUtils.toNormalizedString), as a proto to build again:
// type names fully qualified (the built descriptor's), imports sorted, fields by tag with each oneof's members kept
// together and the oneof placed at its first tag, enum values by number (in proto3 the zero value stays first, as the
// syntax requires), reserved and extension ranges by start, reserved names sorted. Messages, enums and services keep
// their order, as Confluent keeps it (message indexes in the wire format count them). Options are rendered in
// field-number order by any rendering, so they need no sorting here.
google::protobuf::FileDescriptorProto normalized_proto(const google::protobuf::FileDescriptor& file);

}  // namespace ferry::proto_schema
