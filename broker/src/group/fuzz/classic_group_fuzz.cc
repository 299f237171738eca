// A model-based fuzz target for the classic group's state machine (group/classic_group.h): the input is a
// sequence of events from six clients (four static members, by group.instance.id, and two dynamic ones) and
// from the group's owner: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, clock ticks, writes to
// __consumer_offsets completing (or failing) in order, and the coordinator moving (the group unloaded and
// loaded back from what was written). Clients act as real ones do: they use the member id and generation of
// their last answers, sometimes an old or a made-up id, and restart under their instance id.
//
// After every event: the group's own bookkeeping holds (classic_group::broken_invariant), no request is
// answered twice, the generation never goes back (within one load), and unloading answers every parked request.
// An exception or a sanitizer report is a failure too.
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "group/classic_group.h"
#include "group/consumer_protocol.h"
#include "group/errc.h"
#include "group/fuzz/fuzz_input.h"

namespace ferry::group::fuzz {
namespace {

constexpr int clients = 6;
constexpr int static_clients = 4;

struct client {
  std::optional<std::string> instance_id;
  std::string member_id;               // what it joins, syncs and heartbeats with
  std::vector<std::string> known_ids;  // every id it was given, for stale requests
  std::int32_t generation = -1;
  bool leader = false;
  std::vector<std::string> members;  // the leader's last JoinGroup answer
};

std::vector<std::byte> subscription_bytes(int variant) {
  subscription s;
  s.topics = variant == 0 ? std::vector<std::string>{"a"} : std::vector<std::string>{"a", "b"};
  return encode_subscription(s);
}

// The protocols a member offers: some shared by all, some not.
std::vector<protocol_metadata> protocols(int variant) {
  switch (variant) {
    case 0:
      return {{"range", subscription_bytes(0)}};
    case 1:
      return {{"range", subscription_bytes(1)}};
    case 2:
      return {{"roundrobin", subscription_bytes(0)}, {"range", subscription_bytes(0)}};
    case 3:
      return {{"roundrobin", subscription_bytes(1)}};
    default:
      return {{"sticky", {}}};
  }
}

class model {
 public:
  explicit model(fuzz_input& in)
      : in_(in),
        limits_{.min_session_timeout_ms = 10,
                .max_session_timeout_ms = 100000,
                .initial_rebalance_delay_ms = in.flip() ? 3000 : 0,
                .max_size = in.flip() ? 3 : 100},
        group_(std::make_unique<classic_group>("g", limits_, now_)) {
    for (int i = 0; i < clients; ++i)
      if (i < static_clients) clients_[i].instance_id = "instance-" + std::to_string(i);
  }

  void run() {
    while (!in_.done()) {
      step();
      check();
    }
    reload();  // every parked request is answered when the group goes away
  }

 private:
  void step() {
    switch (in_.pick(10)) {
      case 0:
      case 1:
        join(clients_[in_.pick(clients)]);
        return;
      case 2:
        sync(clients_[in_.pick(clients)]);
        return;
      case 3:
        heartbeat(clients_[in_.pick(clients)]);
        return;
      case 4:
        leave(clients_[in_.pick(clients)]);
        return;
      case 5: {
        static constexpr std::int64_t steps[] = {0, 50, 1000, 3000, 20000, 120000};
        now_ += steps[in_.pick(6)];
        group_->tick(now_);
        return;
      }
      case 6:
        complete_store();
        return;
      case 7: {
        client& c = clients_[in_.pick(clients)];
        (void)group_->validate_commit(id_for(c), c.instance_id, in_.flip() ? c.generation : -1, now_);
        return;
      }
      case 8:
        restart(clients_[in_.pick(clients)]);
        return;
      default:
        if (in_.pick(4) == 0) reload();
        return;
    }
  }

  // The member id a request carries: usually the client's own, sometimes one it had before or none.
  std::string id_for(const client& c) {
    switch (in_.pick(8)) {
      case 0:
        return c.known_ids.empty()
                   ? std::string()
                   : c.known_ids[static_cast<std::size_t>(in_.pick(static_cast<int>(c.known_ids.size())))];
      case 1:
        return "made-up";
      default:
        return c.member_id;
    }
  }

  // A callback that must run at most once.
  template <typename Result>
  std::function<void(Result)> once(std::function<void(Result)> on_answer) {
    const auto token = next_token_++;
    parked_.insert(token);
    return [this, token, on_answer = std::move(on_answer)](Result r) {
      if (parked_.erase(token) == 0) {
        std::fprintf(stderr, "request %llu answered twice\n", static_cast<unsigned long long>(token));
        fail();
      }
      on_answer(std::move(r));
    };
  }

  void join(client& c) {
    static constexpr std::int32_t sessions[] = {10, 3000, 10000, 60000};
    static constexpr std::int32_t rebalances[] = {10, 5000, 30000};
    join_request request{.member_id = id_for(c),
                         .group_instance_id = c.instance_id,
                         .client_id = "client",
                         .client_host = "/127.0.0.1",
                         .session_timeout_ms = sessions[in_.pick(4)],
                         .rebalance_timeout_ms = rebalances[in_.pick(3)],
                         .protocol_type = in_.pick(8) == 0 ? "connect" : "consumer",
                         .protocols = protocols(in_.pick(5)),
                         .require_known_member_id = in_.flip(),
                         .supports_skip_assignment = in_.flip()};
    client* self = &c;
    group_->join(request, now_, once<join_result>([self](const join_result& r) {
                   if (r.error == errc::member_id_required) {
                     self->member_id = r.member_id;
                     self->known_ids.push_back(r.member_id);
                   } else if (!r.error) {
                     self->member_id = r.member_id;
                     self->known_ids.push_back(r.member_id);
                     self->generation = r.generation;
                     self->leader = r.leader == r.member_id;
                     self->members.clear();
                     for (const auto& m : r.members) self->members.push_back(m.member_id);
                   } else if (r.error == errc::unknown_member_id || r.error == errc::fenced_instance_id) {
                     self->member_id.clear();
                   }
                 }));
  }

  void sync(client& c) {
    sync_request request{.member_id = id_for(c),
                         .group_instance_id = c.instance_id,
                         .generation = c.generation + (in_.pick(6) == 0 ? 1 : 0),
                         .protocol_type = std::nullopt,
                         .protocol_name = std::nullopt,
                         .assignments = {}};
    if (c.leader)
      for (const auto& m : c.members) request.assignments.emplace_back(m, std::vector<std::byte>{std::byte{1}});
    client* self = &c;
    group_->sync(request, now_, once<sync_result>([self](const sync_result& r) {
                   if (r.error == errc::unknown_member_id || r.error == errc::fenced_instance_id)
                     self->member_id.clear();
                 }));
  }

  void heartbeat(client& c) { (void)group_->heartbeat(id_for(c), c.instance_id, c.generation, now_); }

  void leave(client& c) {
    // A static member leaves by instance id (with or without its member id); a dynamic one by member id.
    const auto instance = in_.pick(4) == 0 ? std::nullopt : c.instance_id;
    std::string member_id = instance && in_.flip() ? std::string() : id_for(c);
    (void)group_->leave(member_id, instance, now_);
  }

  // The client process restarts: it forgets its member id (a static member comes back under its instance id).
  void restart(client& c) {
    c.member_id.clear();
    c.generation = -1;
    c.leader = false;
  }

  void complete_store() {
    if (stores_.empty()) return;
    auto store = std::move(stores_.front());
    stores_.pop_front();
    const bool written = in_.pick(4) != 0;
    if (written) durable_ = store.value;
    group_->stored(store.generation, written ? std::error_code() : std::error_code(errc::not_coordinator), now_);
  }

  // The coordinator moves: the group is unloaded, and loaded back from what reached the log.
  void reload() {
    group_->unload(errc::not_coordinator);
    if (!parked_.empty()) {
      std::fprintf(stderr, "%zu requests still parked after unload\n", parked_.size());
      fail();
    }
    stores_.clear();
    group_ = std::make_unique<classic_group>(durable_ ? classic_group::loaded("g", *durable_, limits_, now_)
                                                      : classic_group("g", limits_, now_));
    generation_ = group_->generation();
    check();
  }

  void check() {
    for (auto& s : group_->take_stores()) stores_.push_back(std::move(s));
    if (const auto broken = group_->broken_invariant(); !broken.empty()) {
      std::fprintf(stderr, "classic group: %s\n", broken.c_str());
      fail();
    }
    if (group_->generation() < generation_) {
      std::fprintf(stderr, "generation went back from %d to %d\n", generation_, group_->generation());
      fail();
    }
    generation_ = group_->generation();
    // What the admin API, DescribeGroups and offset expiry read must not trip on any state either.
    (void)group_->describe();
    (void)group_->snapshot(now_);
    (void)group_->subscribed_topics();
    (void)group_->expired_offsets(now_, 1000);
  }

  fuzz_input& in_;
  std::int64_t now_ = 1'000'000;
  group_limits limits_;
  std::unique_ptr<classic_group> group_;
  client clients_[clients];
  std::deque<classic_group::pending_store> stores_;
  std::optional<group_metadata_value> durable_;
  std::int32_t generation_ = 0;
  std::uint64_t next_token_ = 0;
  std::set<std::uint64_t> parked_;
};

}  // namespace
}  // namespace ferry::group::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ferry::group::fuzz::fuzz_input in(data, size);
  ferry::group::fuzz::model(in).run();
  return 0;
}
