#pragma once

#include <google/protobuf/descriptor.pb.h>

#include <cstddef>
#include <string_view>

#include "schema/schema_format.h"

namespace ferry::proto_schema {

// Reads one file of a schema as Confluent accepts it: `.proto` source first, and when that does not parse, the base64
// of a serialized FileDescriptorProto; the refusal then gives the source's errors (as Confluent's "Could not parse
// Protobuf"). Braces nested deeper than the limits allow are refused before the recursive parser sees them. The
// proto comes back without source info and without json_names that only repeat the default, so that a schema sent as
// text and the same schema sent as a descriptor become the same file.
schema::schema_result<google::protobuf::FileDescriptorProto> read_proto_file(std::string_view text,
                                                                             const schema::parse_limits& limits);

// Counts the file's messages, fields, extensions, enums, enum values, services and methods into `elements` and refuses
// the file when the count passes `limits.max_elements` or its messages nest deeper than `limits.max_depth`. `what`
// names the file in the message.
schema::schema_result<void> check_limits(const google::protobuf::FileDescriptorProto& file,
                                         const schema::parse_limits& limits, std::string_view what,
                                         std::size_t& elements);

// Routes libprotobuf's log lines away from stderr (to nothing) so that no input can make the broker write there.
// Idempotent and thread-safe.
void silence_protobuf_logs();

}  // namespace ferry::proto_schema
