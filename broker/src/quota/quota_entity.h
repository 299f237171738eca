#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "quota/quota_config.h"

namespace ferry::quota {

// Entity types as AlterClientQuotas and DescribeClientQuotas name them.
inline constexpr std::string_view user_entity_type = "user";
inline constexpr std::string_view client_id_entity_type = "client-id";
inline constexpr std::string_view ip_entity_type = "ip";
// The name ZooKeeper gives a default entity: /config/users/<default>, /config/users/<u>/clients/<default>.
inline constexpr std::string_view default_entity_name = "<default>";

// One part of an entity: a user or a client id by its name, or the default, which applies to every name that
// has no quota of its own at that level.
struct entity_name {
  std::string name;  // empty for the default
  bool is_default = false;

  [[nodiscard]] static entity_name of(std::string name) { return {std::move(name), false}; }
  [[nodiscard]] static entity_name default_name() noexcept { return {{}, true}; }

  auto operator<=>(const entity_name&) const = default;
};

// What a quota is set on: a user, a client id, or both (Kafka's ClientQuotaEntity; ip entities are refused).
struct quota_entity {
  std::optional<entity_name> user;
  std::optional<entity_name> client_id;

  auto operator<=>(const quota_entity&) const = default;
};

// The entity as its path under /config/ reads, with names unsanitized: "users/alice/clients/<default>",
// "clients/app". For logs and messages; coord/layout.h owns the znode names.
[[nodiscard]] std::string to_string(const quota_entity& entity);

// The eight levels of ClientQuotaManager, in precedence order: for a connection of user u and client id c, the
// first level with a quota for the key decides (with the exceptions quota_table::resolve describes).
enum class quota_level : std::uint8_t {
  user_client = 1,              // users/<u>/clients/<c>
  user_default_client,          // users/<u>/clients/<default>
  user,                         // users/<u>
  default_user_client,          // users/<default>/clients/<c>
  default_user_default_client,  // users/<default>/clients/<default>
  default_user,                 // users/<default>
  client,                       // clients/<c>
  default_client,               // clients/<default>
};
inline constexpr std::array<quota_level, 8> levels_by_precedence{quota_level::user_client,
                                                                 quota_level::user_default_client,
                                                                 quota_level::user,
                                                                 quota_level::default_user_client,
                                                                 quota_level::default_user_default_client,
                                                                 quota_level::default_user,
                                                                 quota_level::client,
                                                                 quota_level::default_client};

// The level an entity sits at; nullopt for an entity with neither part.
[[nodiscard]] std::optional<quota_level> level_of(const quota_entity& entity);
// The entity at `level` that applies to a connection of `user` and `client_id`.
[[nodiscard]] quota_entity entity_at(quota_level level, std::string_view user, std::string_view client_id);

using quota_values = std::map<quota_key, double>;
using quota_entries = std::map<quota_entity, quota_values>;

// The tags of the sensor a connection records into (Kafka's "user" and "client-id" metric tags, the user there
// sanitized). Connections with equal tags share one budget: a quota on users/alice gives {alice, ""}, so all of
// alice's client ids share it; one on users/<default> gives each user {u, ""}, a budget of their own.
// Views of the names resolve() was given, or empty.
struct metric_tags {
  std::string_view user;
  std::string_view client_id;

  bool operator==(const metric_tags&) const = default;
};

struct quota_resolution {
  std::optional<double> bound;  // nullopt: no quota applies
  metric_tags tags;
};

// DescribeClientQuotas's filter (match_type's wire codes).
enum class match_type : std::int8_t {
  exact = 0,           // the entity type's part is the name `match`
  default_entity = 1,  // the part is the default
  any = 2,             // the part is present, named or default
};

struct filter_component {
  std::string entity_type;
  match_type match = match_type::exact;
  std::optional<std::string> match_name;  // with exact only
};

// A filter that passed check_filter.
struct quota_filter {
  struct part {
    match_type match = match_type::any;
    std::string name;  // with exact
  };
  std::optional<part> user;
  std::optional<part> client_id;
  bool ip = false;  // an ip component: no user or client-id entity matches
  // Only entities with exactly the filter's entity types; otherwise entities may have more.
  bool strict = false;

  [[nodiscard]] bool matches(const quota_entity& entity) const;
};

// The filter DescribeClientQuotas describes, or why Kafka refuses it (ClientQuotasImage.describe): an empty or
// repeated entity type, an exact match without a name, a name with another match type, an unknown match type,
// ip beside user or client-id (INVALID_REQUEST), or an entity type Kafka does not know (UNSUPPORTED_VERSION).
[[nodiscard]] std::variant<quota_filter, refusal> check_filter(std::span<const filter_component> components,
                                                               bool strict);

// One entry of AlterClientQuotas.
struct entity_component {
  std::string entity_type;
  std::optional<std::string> name;  // nullopt: the default
};
struct quota_op {
  std::string key;
  double value = 0;
  bool remove = false;
};
// What an accepted entry changes: a key set to a value, or removed (nullopt).
struct quota_change {
  quota_key key = quota_key::producer_byte_rate;
  std::optional<double> value;

  bool operator==(const quota_change&) const = default;
};
struct quota_alteration {
  quota_entity entity;
  std::vector<quota_change> changes;  // in request order; removals of keys Kafka does not know are dropped
};

// The entry's changes, or why Kafka refuses it, with its messages and in its order
// (ClientQuotaControlManager): a repeated key; an empty entity, a repeated or unknown entity type, an empty
// name; ip beside user or client-id; then each value (check_value). An entity of ip alone is refused by name:
// Ferry does not enforce connection_creation_rate. Removals are not checked, as in Kafka.
[[nodiscard]] std::variant<quota_alteration, refusal> check_alteration(std::span<const entity_component> entity,
                                                                       std::span<const quota_op> ops);
// An entity's values after `changes`; empty when the last one is removed (Kafka then deletes the znode).
[[nodiscard]] quota_values apply(quota_values values, std::span<const quota_change> changes);

// The client quotas in force at one moment, immutable once built, indexed so that resolve() costs a few hash
// lookups of the names it is given and allocates nothing. Shared between threads read-only.
class quota_table {
 public:
  quota_table() = default;
  // Entities without values and names that are empty are left out: Kafka cannot store either.
  explicit quota_table(quota_entries entries);

  // The bound on `key` for a connection of `user` (the principal's name; "ANONYMOUS" for unauthenticated
  // connections, as Kafka's KafkaPrincipal.ANONYMOUS, so users/<default> applies to them) and `client_id`, and
  // the tags of the budget it shares. Exactly Kafka's DefaultQuotaCallback: quotaMetricTags picks the tags from
  // which levels hold a quota, and quotaLimit then looks the bound up from the tags alone. Hence:
  //   - with a non-empty user and client id, the first level in precedence order with a quota decides;
  //   - an empty client id reaches only users/<u> and users/<default> (its tags are {u, ""}); an empty user only
  //     clients/<c> and clients/<default>, and not even those when users/<default> has a quota for the key and
  //     neither users/<default>/clients/<c> nor users/<default>/clients/<default> does (its tags are then
  //     {"", ""}, which no quota has); both empty, no quota at all;
  //   - when every entity with a quota sits at one kind of level (client-id only, user only, or user +
  //     client-id only), the tags are fixed ({"", c}, {u, ""}, {u, c}) even for connections no quota applies to.
  //     Kafka decides that from every level ever configured since it started; here it is the levels of this
  //     table, which differs only in the tags of unbounded connections.
  [[nodiscard]] quota_resolution resolve(std::string_view user, std::string_view client_id, quota_key key) const;
  // The quota for `key` set on the entity at `level` for `user` and `client_id`, if any.
  [[nodiscard]] std::optional<double> bound_at(quota_level level, std::string_view user, std::string_view client_id,
                                               quota_key key) const;

  // The entities DescribeClientQuotas returns for `filter`, with their values.
  [[nodiscard]] quota_entries select(const quota_filter& filter) const;

  [[nodiscard]] const quota_entries& entries() const { return entries_; }
  [[nodiscard]] bool empty() const { return entries_.empty(); }

 private:
  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  template <typename Value>
  using by_name = std::unordered_map<std::string, Value, string_hash, std::equal_to<>>;
  using key_bounds = std::array<std::optional<double>, quota_key_count>;
  // The levels under one user part (a name, or the default).
  struct user_levels {
    key_bounds alone;             // users/<u>
    key_bounds default_client;    // users/<u>/clients/<default>
    by_name<key_bounds> clients;  // users/<u>/clients/<c>
  };
  // Kafka's QuotaTypes: which kinds of level hold a quota.
  enum kinds : std::uint8_t { no_kinds = 0, client_kind = 1, user_kind = 2, user_client_kind = 4 };

  [[nodiscard]] bool has(quota_level level, std::string_view user, std::string_view client_id, quota_key key) const {
    return bound_at(level, user, client_id, key).has_value();
  }
  [[nodiscard]] metric_tags tags_for(std::string_view user, std::string_view client_id, quota_key key) const;
  [[nodiscard]] std::optional<double> limit_for(const metric_tags& tags, quota_key key) const;

  quota_entries entries_;
  by_name<user_levels> users_;
  user_levels default_user_;
  by_name<key_bounds> clients_;  // clients/<c>
  key_bounds default_client_;    // clients/<default>
  std::uint8_t kinds_ = no_kinds;
};

}  // namespace ferry::quota
