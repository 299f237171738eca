#include "registry/registry_reply.h"

#include "base/percent_encoding.h"

namespace ferry::registry {

registry_reply json_reply(const nlohmann::json& body, int status) {
  // Replies quote what clients sent, which need not be UTF-8: such bytes become U+FFFD rather than throwing.
  return {status, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

registry_reply error_reply(int code, const std::string& message) {
  int status = code;
  while (status >= 1000) status /= 10;
  return json_reply({{"error_code", code}, {"message", message}}, status);
}

bool request_target::flag(const std::string& name) const {
  const auto it = query.find(name);
  return it != query.end() && it->second == "true";
}

std::optional<std::string> request_target::param(const std::string& name) const {
  const auto it = query.find(name);
  if (it == query.end()) return std::nullopt;
  return it->second;
}

std::optional<request_target> parse_target(std::string_view target) {
  request_target out;
  const auto question = target.find('?');
  const auto path = target.substr(0, question);
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end > start) {
      auto segment = percent_decoded(path.substr(start, end - start), false);
      if (!segment) return std::nullopt;
      out.segments.push_back(std::move(*segment));
    }
    start = end + 1;
  }
  if (question == std::string_view::npos) return out;
  auto query = target.substr(question + 1);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    const auto eq = pair.find('=');
    auto name = percent_decoded(pair.substr(0, eq), true);
    auto value =
        eq == std::string_view::npos ? std::optional<std::string>("") : percent_decoded(pair.substr(eq + 1), true);
    if (!name || !value) return std::nullopt;
    out.query[*name] = std::move(*value);
    if (amp == std::string_view::npos) break;
    query = query.substr(amp + 1);
  }
  return out;
}

}  // namespace ferry::registry
