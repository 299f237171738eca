#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::group {

// The regular expressions of KIP-848 subscriptions (ConsumerGroupHeartbeat's SubscribedTopicRegex), in the RE2
// syntax Kafka 4 takes them in (RE2/J): a topic matches when its whole name does. Internal topics
// (__consumer_offsets, __transaction_state) never match, as in Kafka.

// Why `regex` is not one RE2 can compile, or nullopt when it is.
[[nodiscard]] std::optional<std::string> invalid_topic_regex(std::string_view regex);
// The topics of `names` that `regex` matches (none when it does not compile).
[[nodiscard]] std::vector<std::string> topics_matching(std::string_view regex, const std::vector<std::string>& names);
[[nodiscard]] bool topic_matches(std::string_view regex, std::string_view topic);

}  // namespace ferry::group
