#pragma once

#include <string_view>
#include <vector>

#include "schema/schema_format.h"

namespace ferry::proto_schema {

// Parses a Protobuf schema as Confluent's registry accepts one: `text` is `.proto` source, or the base64 of a
// serialized FileDescriptorProto (what confluent-kafka's ProtobufSerializer registers). `references` are the files
// it imports, named by import path, in dependency order, each also text or base64. The well-known
// `google/protobuf/*.proto`, Confluent's `confluent/meta.proto` and `confluent/type/*.proto` and the common
// `google/type/*.proto` resolve without a reference (a reference of the same name takes precedence, as in Confluent).
//
// The parsed schema's texts are libprotobuf's rendering of the main file (`FileDescriptor::DebugString()`: every
// type name fully qualified, options in field-number order, default json_names dropped), not Confluent's own
// layout; `normalized()` is that rendering after Confluent's normalization (imports sorted, fields and oneofs by tag,
// enum values by number, reserved ranges sorted). `backward_incompatibilities` is Confluent's SchemaDiff by field tag
// (see schema_diff.h). A schema whose canonical text would not read back as the same schema (a descriptor with a
// field named "2x") is refused, since the registry keeps that text. Thread-safe: the result is immutable. Nothing
// throws and nothing the input holds aborts; libprotobuf's log lines are dropped (proto_source.h).
schema::schema_result<schema::schema_ptr> parse(std::string_view text,
                                                const std::vector<schema::named_schema>& references,
                                                const schema::parse_limits& limits);

}  // namespace ferry::proto_schema
