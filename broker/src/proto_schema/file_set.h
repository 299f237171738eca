#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include <map>
#include <memory>
#include <string>

#include "schema/schema_format.h"

namespace ferry::proto_schema {

// The references of a schema by import path, parsed.
using reference_files = std::map<std::string, google::protobuf::FileDescriptorProto, std::less<>>;

// A schema's files built into a descriptor pool of their own: the main file and, first, every file it imports
// transitively, from the references or else the built-in files. Immutable once built; the pool owns every descriptor.
struct file_set {
  std::unique_ptr<google::protobuf::DescriptorPool> pool;
  const google::protobuf::FileDescriptor* main = nullptr;
};

// Builds `main` with what it imports. Refused, with libprotobuf's message naming the file, when an import is neither
// a reference nor built in, when imports form a cycle, or when a file does not build (unknown or duplicate types,
// invalid tags...). References nothing imports are left out.
schema::schema_result<file_set> build_file_set(const google::protobuf::FileDescriptorProto& main,
                                               const reference_files& references);

}  // namespace ferry::proto_schema
