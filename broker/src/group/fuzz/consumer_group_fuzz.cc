// A model-based fuzz target for the consumer protocol's group (KIP-848, group/consumer_group.h): the input is
// a sequence of ConsumerGroupHeartbeats from five clients (three static members, two dynamic ones), clock
// ticks, topics appearing, growing and going, and the coordinator moving (the group loaded back from every
// record it wrote, through their encoding). Clients act as Kafka's consumer does: they send the epoch and the
// partitions of their last answer, rejoin at epoch 0 when fenced, leave with -1 (or -2 when static) and
// restart under a new member id; sometimes they send a stale epoch.
//
// After every event: the group's bookkeeping holds (consumer_group::broken_invariant), no partition is owned by
// two clients that were told they have it, and the group epoch never goes back. An exception or a sanitizer
// report is a failure too.
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "group/consumer_group.h"
#include "group/errc.h"
#include "group/fuzz/fuzz_input.h"
#include "group/offsets_records.h"

namespace ferry::group::fuzz {
namespace {

constexpr int clients = 5;
constexpr int static_clients = 3;

struct client {
  std::optional<std::string> instance_id;
  int incarnation = 0;
  std::string member_id;
  std::int32_t epoch = 0;  // 0: (re)joining
  topic_id_partitions owned;
  std::vector<std::string> topics;
};

topic_uuid uuid_of(std::uint8_t n) {
  topic_uuid id{};
  id[15] = n;
  return id;
}

class model {
 public:
  explicit model(fuzz_input& in) : in_(in) {
    config_.session_timeout_ms = 45000;
    config_.max_size = in.flip() ? 3 : 100;
    topics_["a"] = {uuid_of(1), 3};
    topics_["b"] = {uuid_of(2), 2};
    for (int i = 0; i < clients; ++i) {
      if (i < static_clients) clients_[i].instance_id = "instance-" + std::to_string(i);
      clients_[i].member_id = "member-" + std::to_string(i) + "-0";
    }
    group_ = std::make_unique<consumer_group>("g", config_);
  }

  void run() {
    while (!in_.done()) {
      step();
      check();
    }
    reload();
  }

 private:
  void step() {
    switch (in_.pick(8)) {
      case 0:
      case 1:
      case 2:
        heartbeat(clients_[in_.pick(clients)]);
        return;
      case 3:
        leave(clients_[in_.pick(clients)]);
        return;
      case 4: {
        static constexpr std::int64_t steps[] = {0, 1000, 10000, 50000};
        now_ += steps[in_.pick(4)];
        std::vector<stored_record> records;
        group_->tick(now_, records);
        written(records);
        return;
      }
      case 5:
        change_topics();
        return;
      case 6: {
        // The client process restarts: a new member id, the same instance id, nothing owned.
        client& c = clients_[in_.pick(clients)];
        c.member_id = "member-" + std::to_string(&c - clients_) + "-" + std::to_string(++c.incarnation);
        c.epoch = 0;
        c.owned.clear();
        return;
      }
      default:
        reload();
        return;
    }
  }

  void change_topics() {
    switch (in_.pick(3)) {
      case 0:
        if (topics_.contains("c"))
          topics_.erase("c");
        else
          topics_["c"] = {uuid_of(static_cast<std::uint8_t>(3 + in_.pick(2))), 1 + in_.pick(3)};
        return;
      case 1:
        topics_["a"].partitions = std::min(topics_["a"].partitions + 1, 6);
        return;
      default:
        return;
    }
  }

  std::optional<std::vector<std::string>> subscription() {
    switch (in_.pick(5)) {
      case 0:
        return std::vector<std::string>{"a"};
      case 1:
        return std::vector<std::string>{"a", "b"};
      case 2:
        return std::vector<std::string>{"b", "c"};
      case 3:
        return std::vector<std::string>{};
      default:
        return std::nullopt;
    }
  }

  void heartbeat(client& c) {
    consumer_heartbeat_request request;
    request.member_id = c.member_id;
    request.instance_id = c.instance_id;
    request.client_id = "client";
    request.client_host = "/127.0.0.1";
    static constexpr std::int32_t rebalance_timeouts[] = {1000, 30000};
    if (c.epoch == 0) {
      request.member_epoch = 0;
      request.rebalance_timeout_ms = rebalance_timeouts[in_.pick(2)];
      request.subscribed_topic_names = subscription().value_or(std::vector<std::string>{"a"});
      if (in_.pick(3) == 0) request.subscribed_topic_regex = in_.flip() ? "a|c" : "b.*";
      request.owned = topic_id_partitions{};
      static const std::optional<std::string> assignors[] = {std::nullopt, "uniform", "range"};
      request.server_assignor = assignors[in_.pick(3)];
    } else {
      switch (in_.pick(6)) {
        case 0:
          request.member_epoch = c.epoch - 1;  // an answer it acted on was lost, or arrives out of order
          break;
        case 1:
          request.member_epoch = c.epoch + 1;
          break;
        default:
          request.member_epoch = c.epoch;
      }
      if (in_.pick(4) == 0) request.subscribed_topic_names = subscription();
      if (in_.pick(8) == 0) request.subscribed_topic_regex = in_.flip() ? "" : "c";
      if (in_.flip()) request.owned = c.owned;
      if (in_.pick(4) == 0) request.rebalance_timeout_ms = rebalance_timeouts[in_.pick(2)];
    }
    std::string message;
    if (consumer_group::check_request(request, config_, message)) return;  // the handler answers these
    const auto lookup = [this](const std::string& name) -> std::optional<topic_metadata> {
      const auto it = topics_.find(name);
      if (it == topics_.end()) return std::nullopt;
      return it->second;
    };
    const topic_names names = [this] {
      std::vector<std::string> out;
      for (const auto& [name, topic] : topics_) out.push_back(name);
      return out;
    };
    std::vector<stored_record> records;
    const auto r = group_->heartbeat(request, lookup, now_, records, names);
    written(records);
    if (r.error == errc::fenced_member_epoch || r.error == errc::unknown_member_id) {
      c.epoch = 0;
      c.owned.clear();
      return;
    }
    if (r.error) return;
    c.epoch = r.member_epoch;
    if (r.assignment) c.owned = *r.assignment;
    if (request.subscribed_topic_names) c.topics = *request.subscribed_topic_names;
  }

  void leave(client& c) {
    if (c.epoch == 0) return;
    consumer_heartbeat_request request;
    request.member_id = c.member_id;
    request.instance_id = c.instance_id;
    request.member_epoch = c.instance_id && in_.flip() ? -2 : -1;
    std::string message;
    if (consumer_group::check_request(request, config_, message)) return;
    std::vector<stored_record> records;
    const auto r = group_->heartbeat(request, {}, now_, records);
    written(records);
    if (!r.error) {
      c.epoch = 0;
      c.owned.clear();
    }
  }

  void written(const std::vector<stored_record>& records) { log_.insert(log_.end(), records.begin(), records.end()); }

  // The coordinator moves: a new group from every record written, as group_coordinator::load reads them.
  void reload() {
    auto loaded = std::make_unique<consumer_group>("g", config_);
    for (const auto& r : log_) {
      auto decoded = decode_record(r.key, r.value ? std::optional<std::span<const std::byte>>(*r.value) : std::nullopt);
      if (!decoded) {
        std::fprintf(stderr, "a record the group wrote does not decode: %s\n", decoded.error().message().c_str());
        fail();
      }
      const auto* record = std::get_if<consumer_group_record>(&decoded.value());
      if (record == nullptr) fail();
      loaded->replay(*record);
    }
    loaded->loaded(now_);
    group_ = std::move(loaded);
    epoch_ = 0;
    check();
  }

  void check() {
    if (const auto broken = group_->broken_invariant(); !broken.empty()) {
      std::fprintf(stderr, "consumer group: %s\n", broken.c_str());
      fail();
    }
    const auto d = group_->describe();
    if (d.group_epoch < epoch_) {
      std::fprintf(stderr, "group epoch went back from %d to %d\n", epoch_, d.group_epoch);
      fail();
    }
    epoch_ = d.group_epoch;
    (void)group_->subscribed_topics();
    (void)group_->state();
  }

  fuzz_input& in_;
  consumer_group_config config_;
  std::int64_t now_ = 1'000'000;
  std::map<std::string, topic_metadata> topics_;
  client clients_[clients];
  std::unique_ptr<consumer_group> group_;
  std::vector<stored_record> log_;
  std::int32_t epoch_ = 0;
};

}  // namespace
}  // namespace ferry::group::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ferry::group::fuzz::fuzz_input in(data, size);
  ferry::group::fuzz::model(in).run();
  return 0;
}
