// Feeds arbitrary bytes to the path a client quota znode takes from ZooKeeper to the network threads, which any
// client of the ensemble can write: /config/users/<u>, /config/users/<u>/clients/<c> or /config/clients/<c>
// decoded (coord::layout::decode_entity_config), its quotas parsed as Kafka's brokers parse them
// (client_quota_entries), resolved for a connection and recorded against. The first byte picks the entity the
// data is stored at:
//
//   u users/alice   U users/<default>   c clients/app   C clients/<default>   b users/alice/clients/app
//   B users/<default>/clients/<default>
//
// Checks: each value parsed that AlterClientQuotas would accept reads back from the text Ferry would store for it; the
// connection the entity names gets the bound that was stored; recording never yields a negative throttle (UBSan guards
// the arithmetic).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "coord/cluster_view.h"
#include "coord/layout.h"
#include "quota/client_quotas.h"
#include "server/client_quota_entities.h"

namespace ferry::server {
namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

void run(char selector, std::string_view data) {
  auto config = coord::layout::decode_entity_config(data);
  if (!config) return;
  const std::string def(coord::layout::default_entity);
  coord::cluster_view view;
  switch (selector) {
    case 'u':
      view.users["alice"] = std::move(config.value());
      break;
    case 'U':
      view.users[def] = std::move(config.value());
      break;
    case 'c':
      view.client_quotas[{std::nullopt, "app"}] = std::move(config.value());
      break;
    case 'C':
      view.client_quotas[{std::nullopt, def}] = std::move(config.value());
      break;
    case 'b':
      view.client_quotas[{"alice", "app"}] = std::move(config.value());
      break;
    case 'B':
      view.client_quotas[{def, def}] = std::move(config.value());
      break;
    default:
      return;
  }
  auto entries = client_quota_entries(view);
  check(entries.size() <= 1);
  for (const auto& [entity, values] : entries)
    for (const auto& [key, value] : values) {
      if (quota::check_value(quota::name_of(key), value)) continue;  // Ferry never writes it
      const auto again = quota::parse_stored_value(key, quota::stored_text(key, value));
      check(again.has_value() && same(again.value(), value));
    }
  auto table = std::make_shared<const quota::quota_table>(std::move(entries));
  quota::client_quotas quotas;
  quotas.replace_table(table);
  for (const auto kind : {quota::quota_kind::produce, quota::quota_kind::fetch}) {
    const auto resolved = table->resolve("alice", "app", quota::key_of(kind));
    for (const auto& [entity, values] : table->entries())
      if (const auto stored = values.find(quota::key_of(kind)); stored != values.end())
        check(resolved.bound.has_value() && same(*resolved.bound, stored->second));
    for (std::int64_t now_ms : {0, 1, 999, 5000, 60'000}) check(quotas.record(kind, "alice", "app", 1e6, now_ms) >= 0);
  }
}

}  // namespace
}  // namespace ferry::server

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  ferry::server::run(static_cast<char>(data[0]), std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  return 0;
}
