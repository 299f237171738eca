#include "proto_schema/proto_schema.h"

#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "proto_schema/difference.h"
#include "proto_schema/file_set.h"
#include "proto_schema/normalize.h"
#include "proto_schema/proto_source.h"
#include "proto_schema/schema_diff.h"

namespace ferry::proto_schema {
namespace {

namespace pb = google::protobuf;

// A parsed Protobuf schema: its files' descriptors, kept for the diff, and its two texts, rendered once.
class protobuf_schema final : public schema::parsed_schema {
 public:
  protobuf_schema(file_set files, std::string canonical, std::string normalized)
      : files_(std::move(files)), canonical_(std::move(canonical)), normalized_(std::move(normalized)) {}

  [[nodiscard]] schema::schema_type type() const override { return schema::schema_type::protobuf; }
  [[nodiscard]] std::string canonical() const override { return canonical_; }
  [[nodiscard]] std::string normalized() const override { return normalized_; }

  [[nodiscard]] std::vector<std::string> backward_incompatibilities(
      const schema::parsed_schema& previous) const override {
    const auto* earlier = dynamic_cast<const protobuf_schema*>(&previous);
    if (earlier == nullptr) return {"Incompatible because of different schema type"};
    std::vector<std::string> messages;
    for (const auto& diff : incompatible_differences(*earlier->files_.main, *files_.main)) {
      messages.push_back(to_message(diff));
    }
    return messages;
  }

 private:
  file_set files_;
  std::string canonical_;
  std::string normalized_;
};

// One schema text built with its references: the descriptors and the canonical text.
struct built_file {
  file_set files;
  std::string canonical;
};

schema::schema_result<built_file> build(std::string_view text, const reference_files& imports,
                                        const schema::parse_limits& limits, std::size_t elements) {
  auto main = read_proto_file(text, limits);
  if (!main) return main.error();
  if (auto checked = check_limits(main.value(), limits, "the schema", elements); !checked) return checked.error();
  auto files = build_file_set(main.value(), imports);
  if (!files) return files.error();
  auto canonical = files.value().main->DebugString();
  return built_file{std::move(files).value(), std::move(canonical)};
}

schema::schema_result<schema::schema_ptr> parse_checked(std::string_view text,
                                                        const std::vector<schema::named_schema>& references,
                                                        const schema::parse_limits& limits) {
  std::size_t elements = 0;
  reference_files imports;
  for (const auto& reference : references) {
    auto proto = read_proto_file(reference.text, limits);
    const auto what = "reference \"" + reference.name.substr(0, 120) + "\"";
    if (!proto) return schema::schema_error{what + ": " + proto.error().message};
    if (auto checked = check_limits(proto.value(), limits, what, elements); !checked) return checked.error();
    // A later reference of the same name replaces an earlier one, as Confluent's map of references does.
    imports.insert_or_assign(reference.name, std::move(proto).value());
  }
  auto built = build(text, imports, limits, elements);
  if (!built) return built.error();
  // The registry keeps the canonical text and reads it back later, so it must read back as the same schema. A
  // descriptor may hold what no .proto text can say (a field named "2x"), and is refused for it.
  const auto again = build(built.value().canonical, imports, limits, elements);
  if (!again || again.value().canonical != built.value().canonical) {
    return schema::schema_error{"Protobuf schema has no .proto text that reads back as the same schema" +
                                (again ? std::string() : ": " + again.error().message)};
  }
  // Normalizing only reorders a file that built, so it builds again.
  auto normalized_files = build_file_set(normalized_proto(*built.value().files.main), imports);
  if (!normalized_files) return normalized_files.error();
  auto normalized = normalized_files.value().main->DebugString();
  return std::make_shared<const protobuf_schema>(std::move(built.value().files), std::move(built.value().canonical),
                                                 std::move(normalized));
}

}  // namespace

schema::schema_result<schema::schema_ptr> parse(std::string_view text,
                                                const std::vector<schema::named_schema>& references,
                                                const schema::parse_limits& limits) {
  silence_protobuf_logs();
  // libprotobuf reports a broken invariant by throwing from its fatal log; no input is known to reach one, and should
  // one, it is a refusal of that schema rather than the end of the broker.
  try {
    return parse_checked(text, references, limits);
  } catch (const std::exception&) {
    return schema::schema_error{"Could not parse Protobuf schema: libprotobuf refused it"};
  }
}

}  // namespace ferry::proto_schema
