#include "manager/crd_check.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <set>
#include <string>

namespace ferry::manager {
namespace {

kube::http_response crd_with(const std::string& annotations) {
  return {200, R"({"kind":"CustomResourceDefinition","metadata":{"name":"topics.ferry.dev","annotations":)" +
                   annotations + "}}"};
}

kube::http_response stamped(const std::string& revision) {
  return crd_with(R"({"ferry.dev/crd-version":")" + revision + R"("})");
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(JudgeCrd, TheRevisionNeededIsUsableSilently) {
  const auto verdict = judge_crd("topics.ferry.dev", stamped("3"), 3);
  EXPECT_TRUE(verdict.usable);
  EXPECT_EQ(verdict.message, "");
}

TEST(JudgeCrd, ANewerRevisionIsUsableWithAWarning) {
  const auto verdict = judge_crd("topics.ferry.dev", stamped("4"), 3);
  EXPECT_TRUE(verdict.usable);
  EXPECT_TRUE(contains(verdict.message, "topics.ferry.dev is at revision 4, newer than this operator's 3"))
      << verdict.message;
}

TEST(JudgeCrd, AnOlderRevisionIsRefusedNamingBothAndTheUpgrade) {
  const auto verdict = judge_crd("topics.ferry.dev", stamped("2"), 3);
  EXPECT_FALSE(verdict.usable);
  EXPECT_TRUE(contains(verdict.message, "CustomResourceDefinition topics.ferry.dev is at revision 2"))
      << verdict.message;
  EXPECT_TRUE(contains(verdict.message, "this operator needs revision 3")) << verdict.message;
  EXPECT_TRUE(contains(verdict.message, "kubectl apply --server-side --force-conflicts -f charts/ferry/crds/"))
      << verdict.message;
}

TEST(JudgeCrd, AnUnstampedOrMalformedRevisionIsRefused) {
  for (const auto& answer :
       {crd_with("{}"), crd_with("null"), crd_with(R"({"other":"1"})"), crd_with(R"({"ferry.dev/crd-version":3})")}) {
    const auto verdict = judge_crd("topics.ferry.dev", answer, 3);
    EXPECT_FALSE(verdict.usable) << answer.body;
    EXPECT_TRUE(contains(verdict.message, "has no ferry.dev/crd-version annotation")) << verdict.message;
    EXPECT_TRUE(contains(verdict.message, "kubectl apply --server-side")) << verdict.message;
  }
  for (const auto* revision : {"", "two", "2x", "0", "-1", "99999999999"}) {
    const auto verdict = judge_crd("topics.ferry.dev", stamped(revision), 3);
    EXPECT_FALSE(verdict.usable) << revision;
    EXPECT_TRUE(contains(verdict.message, std::string("ferry.dev/crd-version '") + revision + "', not a revision"))
        << verdict.message;
  }
}

TEST(JudgeCrd, AMissingOrUnreadableCrdIsRefused) {
  const auto missing = judge_crd("consumergroups.ferry.dev", {404, R"({"kind":"Status"})"}, 3);
  EXPECT_FALSE(missing.usable);
  EXPECT_TRUE(contains(missing.message, "consumergroups.ferry.dev is not installed")) << missing.message;
  EXPECT_TRUE(contains(missing.message, "kubectl apply --server-side")) << missing.message;

  const auto forbidden = judge_crd("topics.ferry.dev", {403, "{}"}, 3);
  EXPECT_FALSE(forbidden.usable);
  EXPECT_TRUE(contains(forbidden.message, "needs get on customresourcedefinitions topics.ferry.dev"))
      << forbidden.message;

  EXPECT_FALSE(judge_crd("topics.ferry.dev", {500, "etcd is down"}, 3).usable);
  EXPECT_TRUE(contains(judge_crd("topics.ferry.dev", {500, "etcd is down"}, 3).message, "HTTP 500: etcd is down"));
  EXPECT_FALSE(judge_crd("topics.ferry.dev", {200, "not json"}, 3).usable);
}

// The CRDs in the chart are the revision this operator is built for: bumping one without the other fails here.
TEST(CrdRevision, EqualsTheChartsCrds) {
  for (const auto name : served_crds) {
    const auto crd = YAML::LoadFile(std::string(FERRY_CRD_DIR) + "/" + std::string(name) + ".yaml");
    EXPECT_EQ(crd["metadata"]["annotations"][std::string(crd_revision_annotation)].as<std::string>(""),
              std::to_string(crd_revision))
        << name;
  }
}

// Every CRD of the chart is one the operator checks at startup (and needs `get` on): adding a CRD without adding
// it to served_crds fails here.
TEST(CrdRevision, EveryChartCrdIsChecked) {
  std::set<std::string> in_chart;
  for (const auto& entry : std::filesystem::directory_iterator(FERRY_CRD_DIR)) {
    if (entry.path().extension() != ".yaml") continue;
    in_chart.insert(YAML::LoadFile(entry.path().string())["metadata"]["name"].as<std::string>(""));
  }
  const std::set<std::string> checked(served_crds.begin(), served_crds.end());
  EXPECT_EQ(in_chart, checked);
  EXPECT_TRUE(checked.contains("users.ferry.dev"));
}

}  // namespace
}  // namespace ferry::manager
