#include "lag/consumer_lag.h"

#include <algorithm>
#include <map>
#include <utility>

namespace ferry::lag {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily gauge_family(std::string name, std::string help) {
  return MetricFamily{std::move(name), std::move(help), MetricType::Gauge, {}};
}

void add_gauge(MetricFamily& family, std::vector<ClientMetric::Label> labels, double value) {
  ClientMetric& m = family.metric.emplace_back();
  m.label = std::move(labels);
  m.gauge.value = value;
}

}  // namespace

std::vector<partition_lag> consumer_lag::lag_of(
    const std::vector<std::pair<topic_partition, offset>>& committed) const {
  std::vector<partition_lag> out;
  out.reserve(committed.size());
  for (const auto& [tp, at] : committed) {
    partition_lag& p = out.emplace_back(partition_lag{tp, at, watermarks_.high_watermark(tp), std::nullopt});
    if (p.high_watermark) p.lag = std::max<std::int64_t>(0, p.high_watermark->value() - at.value());
  }
  return out;
}

std::vector<group_lag> consumer_lag::groups() const {
  std::vector<group_lag> out;
  for (auto& g : groups_.overview()) {
    group_lag& entry = out.emplace_back();
    entry.partitions = lag_of(g.committed);
    for (const auto& p : entry.partitions) entry.total += p.lag.value_or(0);
    entry.group = std::move(g);
  }
  return out;
}

std::set<topic_partition> consumer_lag::committed_partitions() const {
  std::set<topic_partition> out;
  for (const auto& g : groups_.overview())
    for (const auto& [tp, at] : g.committed) out.insert(tp);
  return out;
}

std::vector<MetricFamily> consumer_lag::Collect() const {
  auto current = gauge_family("kafka_consumergroup_current_offset",
                              "The offset the consumer group has committed for the partition");
  auto lag = gauge_family("kafka_consumergroup_lag",
                          "The partition's high watermark minus the group's committed offset (approximate for "
                          "partitions led by other brokers: their high watermarks are polled every few seconds)");
  auto lag_sum = gauge_family("kafka_consumergroup_lag_sum", "The group's lag summed over the topic's partitions");
  auto members = gauge_family("kafka_consumergroup_members", "Members of the consumer group");
  auto state =
      gauge_family("ferry_consumergroup_state", "The consumer group's state, as a label of a series that is always 1");
  auto commits = MetricFamily{"ferry_consumergroup_offset_commits_total",
                              "Offsets the group committed through this coordinator (one per partition committed)",
                              MetricType::Counter,
                              {}};
  for (const auto& g : groups()) {
    const std::string& id = g.group.group_id;
    add_gauge(members, {{"consumergroup", id}}, static_cast<double>(g.group.members));
    add_gauge(state, {{"consumergroup", id}, {"state", std::string(group::state_name(g.group.state))}}, 1);
    ClientMetric& committed = commits.metric.emplace_back();
    committed.label = {{"consumergroup", id}};
    committed.counter.value = static_cast<double>(g.group.offset_commits);
    std::map<std::string, std::int64_t> by_topic;
    for (const auto& p : g.partitions) {
      std::vector<ClientMetric::Label> labels{{"consumergroup", id},
                                              {"topic", p.partition.topic},
                                              {"partition", std::to_string(p.partition.partition.value())}};
      add_gauge(current, labels, static_cast<double>(p.committed.value()));
      if (!p.lag) continue;
      add_gauge(lag, std::move(labels), static_cast<double>(*p.lag));
      by_topic[p.partition.topic] += *p.lag;
    }
    for (const auto& [topic, sum] : by_topic)
      add_gauge(lag_sum, {{"consumergroup", id}, {"topic", topic}}, static_cast<double>(sum));
  }
  return {std::move(current), std::move(lag),   std::move(lag_sum),
          std::move(members), std::move(state), std::move(commits)};
}

}  // namespace ferry::lag
