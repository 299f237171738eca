#include "proto_schema/proto_source.h"

#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>

#include <array>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ferry::proto_schema {
namespace {

namespace pb = google::protobuf;

// Messages go back to the client: a few errors, each cut short, never the text itself.
constexpr std::size_t max_reported_errors = 3;
constexpr std::size_t max_message_length = 160;

std::string excerpt(std::string_view text) {
  if (text.size() <= max_message_length) return std::string(text);
  return std::string(text.substr(0, max_message_length)) + "...";
}

class error_list final : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    ++count_;
    if (lines_.size() < max_reported_errors) {
      lines_.push_back(std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + excerpt(message));
    }
  }
  void AddWarning(int /*line*/, pb::io::ColumnNumber /*column*/, const std::string& /*message*/) override {}

  [[nodiscard]] bool empty() const { return count_ == 0; }
  [[nodiscard]] std::string summary() const {
    std::string out;
    for (const auto& line : lines_) out += (out.empty() ? "" : "; ") + line;
    if (count_ > lines_.size()) out += " (" + std::to_string(count_ - lines_.size()) + " more)";
    return out;
  }

 private:
  std::size_t count_ = 0;
  std::vector<std::string> lines_;
};

// libprotobuf's .proto parser and its text-format reader of option values recurse once per brace with no bound of
// their own, so the nesting is measured on tokens first. Messages nest inside oneofs and hold option values, hence the
// slack over max_depth; the exact bound on messages is check_limits's.
std::size_t max_braces(const schema::parse_limits& limits) { return 2 * limits.max_depth + 16; }

bool nesting_within(std::string_view text, std::size_t bound) {
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  error_list ignored;
  pb::io::Tokenizer tokenizer(&input, &ignored);
  std::size_t depth = 0;
  while (tokenizer.Next()) {
    const auto& token = tokenizer.current();
    if (token.type != pb::io::Tokenizer::TYPE_SYMBOL) continue;
    if (token.text == "{" || token.text == "<") {
      if (++depth > bound) return false;
    } else if ((token.text == "}" || token.text == ">") && depth > 0) {
      --depth;
    }
  }
  return true;
}

// A descriptor sent in binary may carry options still in text form; they are read with the same unbounded reader.
bool option_values_within(const pb::Message& message, std::size_t bound) {
  if (const auto* option = dynamic_cast<const pb::UninterpretedOption*>(&message)) {
    return nesting_within(option->aggregate_value(), bound);
  }
  const auto* reflection = message.GetReflection();
  std::vector<const pb::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const auto* field : fields) {
    if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (field->is_repeated()) {
      for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
        if (!option_values_within(reflection->GetRepeatedMessage(message, field, i), bound)) return false;
      }
    } else if (!option_values_within(reflection->GetMessage(message, field), bound)) {
      return false;
    }
  }
  return true;
}

std::string default_json_name(const std::string& name) {
  std::string out;
  bool upper_next = false;
  for (const char c : name) {
    if (c == '_') {
      upper_next = true;
    } else {
      out.push_back(upper_next && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c);
      upper_next = false;
    }
  }
  return out;
}

void drop_default_json_names(pb::FieldDescriptorProto& field) {
  if (field.has_json_name() && field.json_name() == default_json_name(field.name())) field.clear_json_name();
}

void drop_default_json_names(pb::DescriptorProto& message) {
  for (auto& field : *message.mutable_field()) drop_default_json_names(field);
  for (auto& field : *message.mutable_extension()) drop_default_json_names(field);
  for (auto& nested : *message.mutable_nested_type()) drop_default_json_names(nested);
}

std::optional<std::string> decode_base64(std::string_view text) {
  static constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.empty() || text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() * 3 / 4);
  std::uint32_t bits = 0;
  int count = 0;
  for (const char c : text) {
    const auto value = alphabet.find(c);
    if (value == std::string_view::npos) return std::nullopt;
    bits = (bits << 6) | static_cast<std::uint32_t>(value);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return out;
}

std::string_view trim(std::string_view text) {
  constexpr std::string_view space = " \t\r\n";
  const auto first = text.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(space) - first + 1);
}

std::optional<pb::FileDescriptorProto> read_descriptor(std::string_view text, const schema::parse_limits& limits) {
  const auto bytes = decode_base64(trim(text));
  if (!bytes) return std::nullopt;
  pb::FileDescriptorProto proto;
  if (!proto.ParseFromString(*bytes) || !option_values_within(proto, max_braces(limits))) return std::nullopt;
  return proto;
}

void drop_log_line(pb::LogLevel /*level*/, const char* /*filename*/, int /*line*/, const std::string& /*message*/) {}

}  // namespace

schema::schema_result<pb::FileDescriptorProto> read_proto_file(std::string_view text,
                                                               const schema::parse_limits& limits) {
  if (text.size() > static_cast<std::size_t>(INT_MAX)) return schema::schema_error{"Protobuf schema is too large"};
  if (!nesting_within(text, max_braces(limits))) {
    return schema::schema_error{"Protobuf schema nests blocks deeper than " + std::to_string(max_braces(limits))};
  }
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  error_list errors;
  pb::io::Tokenizer tokenizer(&input, &errors);
  pb::compiler::Parser parser;
  parser.RecordErrorsTo(&errors);
  pb::FileDescriptorProto proto;
  if (!parser.Parse(&tokenizer, &proto) || !errors.empty()) {
    auto descriptor = read_descriptor(text, limits);
    if (!descriptor) return schema::schema_error{"Could not parse Protobuf schema: " + errors.summary()};
    proto = std::move(*descriptor);
  }
  proto.clear_source_code_info();
  for (auto& message : *proto.mutable_message_type()) drop_default_json_names(message);
  for (auto& field : *proto.mutable_extension()) drop_default_json_names(field);
  return proto;
}

schema::schema_result<void> check_limits(const pb::FileDescriptorProto& file, const schema::parse_limits& limits,
                                         std::string_view what, std::size_t& elements) {
  std::vector<std::pair<const pb::DescriptorProto*, std::size_t>> pending;
  for (const auto& message : file.message_type()) pending.emplace_back(&message, 1);
  auto count_enum = [&](const pb::EnumDescriptorProto& e) { elements += 1 + e.value_size(); };
  for (const auto& e : file.enum_type()) count_enum(e);
  elements += file.extension_size();
  for (const auto& service : file.service()) elements += 1 + service.method_size();
  while (!pending.empty()) {
    const auto [message, depth] = pending.back();
    pending.pop_back();
    if (depth > limits.max_depth) {
      return schema::schema_error{"Protobuf message " + excerpt(message->name()) + " in " + std::string(what) +
                                  " is nested deeper than " + std::to_string(limits.max_depth) + " levels"};
    }
    elements += 1 + message->field_size() + message->extension_size();
    for (const auto& e : message->enum_type()) count_enum(e);
    for (const auto& nested : message->nested_type()) pending.emplace_back(&nested, depth + 1);
    if (elements > limits.max_elements) break;
  }
  if (elements > limits.max_elements) {
    return schema::schema_error{"Protobuf schema and its references hold more than " +
                                std::to_string(limits.max_elements) + " messages, fields and enums"};
  }
  return schema::schema_result<void>(boost::outcome_v2::success());
}

void silence_protobuf_logs() {
  // SetLogHandler is not thread-safe; a function-local static runs it once, under the initialization guard.
  static const bool installed = (pb::SetLogHandler(&drop_log_line), true);
  (void)installed;
}

}  // namespace ferry::proto_schema
