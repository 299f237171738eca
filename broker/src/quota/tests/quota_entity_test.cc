#include "quota/quota_entity.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace ferry::quota {
namespace {

constexpr auto produce = quota_key::producer_byte_rate;
constexpr auto consume = quota_key::consumer_byte_rate;

entity_name named(std::string name) { return entity_name::of(std::move(name)); }
const entity_name default_name = entity_name::default_name();
quota_entity users(entity_name u) { return {std::move(u), std::nullopt}; }
quota_entity clients(entity_name c) { return {std::nullopt, std::move(c)}; }
quota_entity users_clients(entity_name u, entity_name c) { return {std::move(u), std::move(c)}; }

// The bound and tags of a connection under a table of producer_byte_rate quotas.
quota_resolution resolve(const quota_entries& entries, std::string_view user, std::string_view client_id) {
  return quota_table(entries).resolve(user, client_id, produce);
}

TEST(quota_entity, the_eight_levels_read_as_their_zookeeper_paths) {
  const std::vector<std::string> paths{"users/alice/clients/app",
                                       "users/alice/clients/<default>",
                                       "users/alice",
                                       "users/<default>/clients/app",
                                       "users/<default>/clients/<default>",
                                       "users/<default>",
                                       "clients/app",
                                       "clients/<default>"};
  for (std::size_t i = 0; i < levels_by_precedence.size(); ++i) {
    const quota_level level = levels_by_precedence[i];
    EXPECT_EQ(static_cast<int>(level), static_cast<int>(i) + 1);
    const quota_entity entity = entity_at(level, "alice", "app");
    EXPECT_EQ(to_string(entity), paths[i]);
    EXPECT_EQ(level_of(entity), level);
  }
  EXPECT_FALSE(level_of(quota_entity{}));
}

TEST(quota_entity, every_level_applies_and_each_beats_the_ones_after_it) {
  quota_entries all;
  for (std::size_t i = 0; i < levels_by_precedence.size(); ++i)
    all[entity_at(levels_by_precedence[i], "alice", "app")] = {{produce, 100.0 * static_cast<double>(i + 1)}};
  // Drop the levels from the top one at a time: the next one down decides each time.
  for (std::size_t i = 0; i < levels_by_precedence.size(); ++i) {
    const auto r = resolve(all, "alice", "app");
    EXPECT_EQ(r.bound, 100.0 * static_cast<double>(i + 1))
        << to_string(entity_at(levels_by_precedence[i], "alice", "app"));
    all.erase(entity_at(levels_by_precedence[i], "alice", "app"));
  }
  EXPECT_FALSE(resolve(all, "alice", "app").bound);
}

TEST(quota_entity, a_named_entity_beats_the_default_and_user_levels_beat_client_levels) {
  const quota_entries entries{
      {users(named("alice")), {{produce, 1000}}},
      {users(default_name), {{produce, 2000}}},
      {clients(named("app")), {{produce, 3000}}},
  };
  EXPECT_EQ(resolve(entries, "alice", "app").bound, 1000);
  // users/<default> outranks even a quota on the client id itself.
  EXPECT_EQ(resolve(entries, "bob", "app").bound, 2000);
  // A connection that sends no client id does not reach client-id levels at all.
  EXPECT_EQ(resolve(entries, "bob", "").bound, 2000);
}

TEST(quota_entity, quotas_are_per_key) {
  const quota_entries entries{
      {users(named("alice")), {{consume, 1000}}},
      {clients(default_name), {{produce, 500}}},
  };
  const quota_table table(entries);
  EXPECT_EQ(table.resolve("alice", "app", consume).bound, 1000);
  EXPECT_EQ(table.resolve("alice", "app", produce).bound, 500);
  EXPECT_FALSE(table.resolve("alice", "app", quota_key::request_percentage).bound);
}

TEST(quota_entity, tags_decide_which_connections_share_a_budget) {
  // users/alice: one budget for all of alice's client ids.
  const quota_entries user{{users(named("alice")), {{produce, 1000}}}};
  EXPECT_EQ(resolve(user, "alice", "app1").tags, (metric_tags{"alice", ""}));
  EXPECT_EQ(resolve(user, "alice", "app2").tags, (metric_tags{"alice", ""}));
  EXPECT_EQ(resolve(user, "alice", "app2").bound, 1000);

  // users/<default>: a budget per user.
  const quota_entries default_user{{users(default_name), {{produce, 1000}}}};
  EXPECT_EQ(resolve(default_user, "bob", "app").tags, (metric_tags{"bob", ""}));
  EXPECT_EQ(resolve(default_user, "carol", "app").tags, (metric_tags{"carol", ""}));

  // clients/<default>: a budget per client id, whoever the user.
  const quota_entries default_client{{clients(default_name), {{produce, 1000}}}};
  EXPECT_EQ(resolve(default_client, "alice", "app").tags, (metric_tags{"", "app"}));
  EXPECT_EQ(resolve(default_client, "bob", "app").tags, (metric_tags{"", "app"}));

  // users/<default>/clients/<default> and users/<u>/clients/<default>: a budget per user and client id.
  const quota_entries both_default{{users_clients(default_name, default_name), {{produce, 1000}}}};
  EXPECT_EQ(resolve(both_default, "alice", "app1").tags, (metric_tags{"alice", "app1"}));
  EXPECT_EQ(resolve(both_default, "alice", "app2").tags, (metric_tags{"alice", "app2"}));
  const quota_entries user_default_client{{users_clients(named("alice"), default_name), {{produce, 1000}}}};
  EXPECT_EQ(resolve(user_default_client, "alice", "app1").tags, (metric_tags{"alice", "app1"}));

  // Several kinds of level: the level that applies picks the tags.
  const quota_entries mixed{{users(named("alice")), {{produce, 1000}}}, {clients(default_name), {{produce, 500}}}};
  EXPECT_EQ(resolve(mixed, "alice", "app").tags, (metric_tags{"alice", ""}));
  EXPECT_EQ(resolve(mixed, "bob", "app").tags, (metric_tags{"", "app"}));
  EXPECT_EQ(resolve(mixed, "bob", "app").bound, 500);
}

TEST(quota_entity, unbounded_connections_get_the_tags_of_the_one_kind_of_level_in_use) {
  EXPECT_EQ(resolve({}, "bob", "app").tags, (metric_tags{"", "app"}));
  EXPECT_EQ(resolve({{users(named("alice")), {{produce, 1}}}}, "bob", "app").tags, (metric_tags{"bob", ""}));
  EXPECT_EQ(resolve({{users_clients(named("alice"), named("x")), {{produce, 1}}}}, "bob", "app").tags,
            (metric_tags{"bob", "app"}));
  EXPECT_EQ(resolve({{clients(named("x")), {{produce, 1}}}}, "bob", "app").tags, (metric_tags{"", "app"}));
  // Two kinds: Kafka walks the levels and falls through to {"", c}.
  const quota_entries mixed{{users(named("alice")), {{produce, 1}}}, {clients(named("x")), {{produce, 1}}}};
  EXPECT_EQ(resolve(mixed, "bob", "app").tags, (metric_tags{"", "app"}));
  EXPECT_FALSE(resolve(mixed, "bob", "app").bound);
  // The kinds count every key: a consumer quota on a user makes producer tags {u, ""} too.
  EXPECT_EQ(resolve({{users(named("alice")), {{consume, 1}}}}, "bob", "app").tags, (metric_tags{"bob", ""}));
}

TEST(quota_entity, empty_names_reach_fewer_levels_as_in_kafka) {
  // ANONYMOUS, the unauthenticated principal, is a user like any other.
  EXPECT_EQ(resolve({{users(default_name), {{produce, 500}}}}, "ANONYMOUS", "app").bound, 500);
  // No client id: client-id levels do not apply, nor users/<u>/clients/<default>.
  EXPECT_FALSE(resolve({{clients(default_name), {{produce, 500}}}}, "alice", "").bound);
  const quota_entries user_default_client{{users_clients(named("alice"), default_name), {{produce, 300}}}};
  EXPECT_FALSE(resolve(user_default_client, "alice", "").bound);
  const quota_entries with_user{{users_clients(named("alice"), default_name), {{produce, 300}}},
                                {users(default_name), {{produce, 600}}}};
  EXPECT_EQ(resolve(with_user, "alice", "").bound, 600);
  EXPECT_EQ(resolve(with_user, "alice", "").tags, (metric_tags{"alice", ""}));
  // No user: only client-id levels, and not even those when users/<default> applies first (tags {"", ""}).
  const quota_entries defaults{{users(default_name), {{produce, 600}}}, {clients(default_name), {{produce, 500}}}};
  EXPECT_FALSE(resolve(defaults, "", "app").bound);
  EXPECT_EQ(resolve(defaults, "", "app").tags, (metric_tags{"", ""}));
  const quota_entries default_pair{{users_clients(default_name, default_name), {{produce, 700}}},
                                   {clients(default_name), {{produce, 500}}}};
  EXPECT_EQ(resolve(default_pair, "", "app").bound, 500);
  EXPECT_FALSE(resolve(defaults, "", "").bound);
}

TEST(quota_entity, the_table_leaves_out_what_kafka_cannot_store) {
  const quota_table table({
      {users(named("")), {{produce, 1}}},
      {users_clients(named("alice"), named("")), {{produce, 1}}},
      {clients(named("app")), {}},
      {quota_entity{}, {{produce, 1}}},
  });
  EXPECT_TRUE(table.empty());
  EXPECT_FALSE(table.resolve("", "app", produce).bound);
}

// --- AlterClientQuotas

std::string refusal_message(std::vector<entity_component> entity, std::vector<quota_op> ops) {
  const auto checked = check_alteration(entity, ops);
  const auto* refused = std::get_if<refusal>(&checked);
  EXPECT_NE(refused, nullptr);
  if (refused == nullptr) return {};
  EXPECT_EQ(refused->code, errc::invalid_request);
  return refused->message;
}

TEST(quota_entity, alterations_become_changes_of_an_entity) {
  const std::vector<entity_component> entity{{"user", "alice"}, {"client-id", std::nullopt}};
  const std::vector<quota_op> ops{
      {"producer_byte_rate", 1048576, false}, {"request_percentage", 0, true}, {"no_such_key", 0, true}};
  const auto checked = check_alteration(entity, ops);
  ASSERT_TRUE(std::holds_alternative<quota_alteration>(checked));
  const auto& alteration = std::get<quota_alteration>(checked);
  EXPECT_EQ(alteration.entity, users_clients(named("alice"), default_name));
  // Removing a key Kafka does not know is accepted and changes nothing.
  EXPECT_EQ(alteration.changes,
            (std::vector<quota_change>{{produce, 1048576}, {quota_key::request_percentage, std::nullopt}}));

  const auto after = apply({{quota_key::request_percentage, 50}, {consume, 10}}, alteration.changes);
  EXPECT_EQ(after, (quota_values{{produce, 1048576}, {consume, 10}}));
  EXPECT_TRUE(apply({{produce, 1}}, std::vector<quota_change>{{produce, std::nullopt}}).empty());
}

TEST(quota_entity, alterations_are_refused_with_kafkas_messages) {
  const std::vector<quota_op> set{{"producer_byte_rate", 1024, false}};
  EXPECT_EQ(refusal_message({}, set), "Invalid empty client quota entity");
  EXPECT_EQ(refusal_message({{"user", "a"}, {"user", "b"}}, set),
            "Invalid client quota entity, duplicate entity entry user");
  EXPECT_EQ(refusal_message({{"group", "g"}}, set), "Unhandled client quota entity type: group");
  EXPECT_EQ(refusal_message({{"user", ""}}, set), "Empty user not supported");
  EXPECT_EQ(refusal_message({{"client-id", ""}}, set), "Empty client-id not supported");
  EXPECT_EQ(refusal_message({{"ip", "10.0.0.1"}, {"user", "a"}}, set),
            "Invalid quota entity combination, IP entity should not be used with user/client ID entity.");
  EXPECT_EQ(refusal_message({{"client-id", std::nullopt}, {"ip", std::nullopt}}, set),
            "Invalid quota entity combination, IP entity should not be used with user/client ID entity.");
  EXPECT_EQ(refusal_message({{"ip", "10.0.0.1"}}, {{"connection_creation_rate", 10, false}}),
            "Ferry does not enforce connection_creation_rate: quotas on ip entities are not supported");
  EXPECT_EQ(refusal_message({{"user", "a"}}, {{"connection_creation_rate", 10, false}}),
            "Invalid configuration key connection_creation_rate");
  EXPECT_EQ(refusal_message({{"user", "a"}}, {{"producer_byte_rate", 1, false}, {"producer_byte_rate", 0, true}}),
            "Duplicate quota key producer_byte_rate not updating quota for this entity "
            "ClientQuotaEntity(entries={user=a})");
  // Repeated keys are found before anything else.
  EXPECT_EQ(refusal_message({}, {{"x", 1, false}, {"x", 1, false}}),
            "Duplicate quota key x not updating quota for this entity ClientQuotaEntity(entries={})");
  EXPECT_EQ(refusal_message({{"user", std::nullopt}}, {{"producer_byte_rate", 10.5, false}}),
            "producer_byte_rate cannot be a fractional value.");
  EXPECT_EQ(refusal_message({{"client-id", "c"}}, {{"request_percentage", 0, false}}),
            "Quota request_percentage must be greater than 0");
  EXPECT_EQ(refusal_message({{"client-id", "c"}}, {{"request_percentage", 5, false}, {"bytes", 5, false}}),
            "Invalid configuration key bytes");
}

// --- DescribeClientQuotas

refusal filter_refusal(std::vector<filter_component> components) {
  const auto checked = check_filter(components, false);
  const auto* refused = std::get_if<refusal>(&checked);
  EXPECT_NE(refused, nullptr);
  return refused != nullptr ? *refused : refusal{};
}

TEST(quota_entity, filters_are_refused_with_kafkas_messages) {
  EXPECT_EQ(filter_refusal({{"", match_type::any, {}}}).message, "Invalid empty entity type.");
  EXPECT_EQ(filter_refusal({{"user", match_type::any, {}}, {"user", match_type::exact, "a"}}).message,
            "Entity type user cannot appear more than once in the filter.");
  const auto unknown = filter_refusal({{"group", match_type::any, {}}});
  EXPECT_EQ(unknown.code, errc::unsupported_entity_type);
  EXPECT_EQ(unknown.message, "Unsupported entity type group");
  EXPECT_EQ(filter_refusal({{"user", match_type::exact, {}}}).message,
            "Request specified MATCH_TYPE_EXACT, but set match string to null.");
  EXPECT_EQ(filter_refusal({{"user", match_type::default_entity, "a"}}).message,
            "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.");
  EXPECT_EQ(filter_refusal({{"client-id", match_type::any, "a"}}).message,
            "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.");
  EXPECT_EQ(filter_refusal({{"user", static_cast<match_type>(7), {}}}).message, "Unknown match type 7");
  EXPECT_EQ(filter_refusal({{"ip", match_type::any, {}}, {"client-id", match_type::any, {}}}).message,
            "Invalid entity filter component combination. IP filter component should not be used with user or "
            "clientId filter component.");
}

std::set<std::string> described(const quota_table& table, std::vector<filter_component> components, bool strict) {
  const auto checked = check_filter(components, strict);
  EXPECT_TRUE(std::holds_alternative<quota_filter>(checked));
  std::set<std::string> out;
  if (const auto* filter = std::get_if<quota_filter>(&checked))
    for (const auto& [entity, values] : table.select(*filter)) out.insert(to_string(entity));
  return out;
}

TEST(quota_entity, describe_selects_entities_as_kafka_does) {
  const quota_table table({
      {users(named("alice")), {{produce, 1}}},
      {users(default_name), {{produce, 1}}},
      {users_clients(named("alice"), named("app")), {{produce, 1}}},
      {users_clients(default_name, default_name), {{produce, 1}}},
      {clients(named("app")), {{produce, 1}}},
      {clients(default_name), {{produce, 1}}},
  });
  using set = std::set<std::string>;
  EXPECT_EQ(described(table, {}, false).size(), 6U);
  EXPECT_EQ(described(table, {}, true), set{});
  EXPECT_EQ(described(table, {{"user", match_type::exact, "alice"}}, false),
            (set{"users/alice", "users/alice/clients/app"}));
  EXPECT_EQ(described(table, {{"user", match_type::exact, "alice"}}, true), (set{"users/alice"}));
  EXPECT_EQ(described(table, {{"user", match_type::default_entity, {}}}, true), (set{"users/<default>"}));
  EXPECT_EQ(described(table, {{"user", match_type::any, {}}}, true), (set{"users/alice", "users/<default>"}));
  EXPECT_EQ(described(table, {{"client-id", match_type::any, {}}}, false),
            (set{"users/alice/clients/app", "users/<default>/clients/<default>", "clients/app", "clients/<default>"}));
  EXPECT_EQ(described(table, {{"user", match_type::any, {}}, {"client-id", match_type::default_entity, {}}}, true),
            (set{"users/<default>/clients/<default>"}));
  EXPECT_EQ(described(table, {{"client-id", match_type::exact, "app"}}, true), (set{"clients/app"}));
  EXPECT_EQ(described(table, {{"ip", match_type::any, {}}}, false), set{});
}

// --- resolve against a scan of the eight levels

// The quota on `key` of the entity at `level`, looked up in the entries themselves.
std::optional<double> lookup(const quota_entries& entries, quota_level level, std::string_view user,
                             std::string_view client_id, quota_key key) {
  const auto it = entries.find(entity_at(level, user, client_id));
  if (it == entries.end()) return std::nullopt;
  const auto value = it->second.find(key);
  return value == it->second.end() ? std::nullopt : std::optional<double>(value->second);
}

// The bound Kafka applies, found by scanning the entries themselves: the first level in precedence order with
// a quota, among the levels a connection with these names reaches (see quota_table::resolve).
std::optional<double> scan(const quota_entries& entries, std::string_view user, std::string_view client_id,
                           quota_key key, std::optional<quota_level>* found) {
  const auto at = [&](quota_level level) { return lookup(entries, level, user, client_id, key); };
  std::vector<quota_level> reached;
  using level = quota_level;
  if (!user.empty() && !client_id.empty()) {
    reached.assign(levels_by_precedence.begin(), levels_by_precedence.end());
  } else if (!user.empty()) {
    reached = {level::user, level::default_user};
  } else if (!client_id.empty()) {
    const bool default_user_first =
        at(level::default_user) && !at(level::default_user_client) && !at(level::default_user_default_client);
    if (!default_user_first) reached = {level::client, level::default_client};
  }
  for (const quota_level l : reached) {
    if (auto bound = at(l)) {
      *found = l;
      return bound;
    }
  }
  return std::nullopt;
}

TEST(quota_entity, resolve_matches_a_scan_of_the_levels_on_random_tables) {
  std::mt19937 random(48);
  const std::vector<std::optional<entity_name>> user_parts{std::nullopt, named("alice"), named("bob"), default_name};
  const std::vector<std::optional<entity_name>> client_parts{std::nullopt, named("app"), named("cli"), default_name};
  const std::vector<std::string> users{"alice", "bob", "carol", ""};
  const std::vector<std::string> client_ids{"app", "cli", "other", ""};
  std::bernoulli_distribution present(0.3);
  std::bernoulli_distribution has_key(0.5);
  std::uniform_int_distribution<int> value(1, 1000);
  for (int round = 0; round < 500; ++round) {
    quota_entries entries;
    for (const auto& u : user_parts) {
      for (const auto& c : client_parts) {
        if ((!u && !c) || !present(random)) continue;
        quota_values values;
        for (const quota_key key : {produce, consume})
          if (has_key(random)) values[key] = value(random);
        entries[{u, c}] = values;
      }
    }
    const quota_table table(entries);
    for (const auto& user : users) {
      for (const auto& client_id : client_ids) {
        for (const quota_key key : {produce, consume}) {
          std::optional<quota_level> found;
          const auto expected = scan(entries, user, client_id, key, &found);
          const auto r = table.resolve(user, client_id, key);
          ASSERT_EQ(r.bound, expected) << "round " << round << " user '" << user << "' client '" << client_id << "'";
          for (const quota_level l : levels_by_precedence)
            ASSERT_EQ(table.bound_at(l, user, client_id, key), lookup(entries, l, user, client_id, key));
          if (!found) continue;
          // A bound's tags: a user and client-id level has both names, a user level the user, a client level the
          // client id.
          metric_tags tags;
          switch (*found) {
            case quota_level::user:
            case quota_level::default_user:
              tags = {user, {}};
              break;
            case quota_level::client:
            case quota_level::default_client:
              tags = {{}, client_id};
              break;
            default:
              tags = {user, client_id};
          }
          ASSERT_EQ(r.tags, tags) << "round " << round;
        }
      }
    }
  }
}

}  // namespace
}  // namespace ferry::quota
