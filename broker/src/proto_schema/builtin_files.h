#pragma once

#include <google/protobuf/descriptor.pb.h>

#include <string_view>

namespace ferry::proto_schema {

// The files a schema may import without a reference, as Confluent's ProtobufSchema knows them: the well-known
// `google/protobuf/*.proto` (libprotobuf's own descriptors), Confluent's `confluent/meta.proto`,
// `confluent/type/decimal.proto` and `confluent/type/variant.proto`, and the common `google/type/*.proto`. Null for
// any other name. Built once on first use; the protos are immutable after that and shared by every thread.
const google::protobuf::FileDescriptorProto* builtin_file(std::string_view name);

}  // namespace ferry::proto_schema
