#include "json_schema/json_document.h"

#include <string>
#include <vector>

namespace ferry::json_schema {
namespace {

// nlohmann's DOM builder, with the nesting counted on the way in: the parse stops at the first container too deep.
class bounded_dom_builder {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  bounded_dom_builder(json& root, std::size_t max_nesting) : dom_(root, false), max_nesting_(max_nesting) {}

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(number_integer_t v) { return value() && dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& text) { return value() && dom_.number_float(v, text); }
  bool string(string_t& v) { return value() && dom_.string(v); }
  bool binary(binary_t& v) { return value() && dom_.binary(v); }
  bool key(string_t& k) {
    frames_.back().token = k;
    return dom_.key(k);
  }
  bool start_object(std::size_t n) { return open(false) && dom_.start_object(n); }
  bool end_object() {
    frames_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return open(true) && dom_.start_array(n); }
  bool end_array() {
    frames_.pop_back();
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& ex) {
    if (error_.empty()) error_ = ex.what();
    return dom_.parse_error(position, token, ex);
  }

  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  struct frame {
    bool array = false;
    std::size_t elements = 0;
    std::string token;
  };

  // Arrays name their elements by index in the pointer of an error.
  bool value() {
    if (!frames_.empty() && frames_.back().array) frames_.back().token = std::to_string(frames_.back().elements++);
    return true;
  }
  bool open(bool array) {
    value();
    if (frames_.size() >= max_nesting_) {
      std::vector<std::string> tokens;
      tokens.reserve(frames_.size());
      for (const auto& f : frames_) tokens.push_back(f.token);
      error_ = "nesting deeper than " + std::to_string(max_nesting_) + " levels at " + pointer_text(tokens);
      return false;
    }
    frames_.push_back(frame{array, 0, {}});
    return true;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::size_t max_nesting_;
  std::vector<frame> frames_;
  std::string error_;
};

}  // namespace

std::string pointer_text(const std::vector<std::string>& tokens) {
  std::string out = "#";
  for (const auto& token : tokens) {
    out += '/';
    for (char c : token) {
      if (c == '~') {
        out += "~0";
      } else if (c == '/') {
        out += "~1";
      } else {
        out += c;
      }
    }
  }
  return out;
}

schema::schema_result<json> parse_document(std::string_view text, std::size_t max_nesting, std::string_view what) {
  json root;
  bounded_dom_builder builder(root, max_nesting);
  const bool ok = json::sax_parse(text, &builder, json::input_format_t::json, true, false);
  if (!ok || !builder.error().empty()) {
    // nlohmann's messages quote the last token read: keep them short, the client's text comes back in them.
    constexpr std::size_t max_reason = 200;
    std::string reason = builder.error().empty() ? std::string("not JSON") : builder.error();
    if (reason.size() > max_reason) reason = reason.substr(0, max_reason) + "...";
    return schema::schema_error{"Invalid JSON in " + std::string(what) + ": " + reason};
  }
  return root;
}

}  // namespace ferry::json_schema
