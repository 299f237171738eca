#include "group/topic_regex.h"

#include <re2/re2.h>

namespace ferry::group {
namespace {

bool internal_topic(std::string_view topic) { return topic == "__consumer_offsets" || topic == "__transaction_state"; }

RE2::Options options() {
  RE2::Options o;
  o.set_log_errors(false);  // a client's bad pattern is its error, not the broker's log line
  return o;
}

}  // namespace

std::optional<std::string> invalid_topic_regex(std::string_view regex) {
  const RE2 compiled(regex, options());
  if (compiled.ok()) return std::nullopt;
  return compiled.error();
}

std::vector<std::string> topics_matching(std::string_view regex, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  const RE2 compiled(regex, options());
  if (!compiled.ok()) return out;
  for (const auto& name : names)
    if (!internal_topic(name) && RE2::FullMatch(name, compiled)) out.push_back(name);
  return out;
}

bool topic_matches(std::string_view regex, std::string_view topic) {
  const RE2 compiled(regex, options());
  return compiled.ok() && !internal_topic(topic) && RE2::FullMatch(topic, compiled);
}

}  // namespace ferry::group
