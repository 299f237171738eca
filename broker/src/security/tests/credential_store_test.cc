#include "security/credential_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace ferry::security {
namespace {

scram_credential credential(scram_mechanism m, std::int32_t iterations, char fill = 'p') {
  return credential_from_salted_password(m, "salt-bytes", std::string(digest_bytes(m), fill), iterations);
}

std::string text(scram_mechanism m, std::int32_t iterations, char fill = 'p') {
  return format_credential(credential(m, iterations, fill));
}

TEST(CredentialStore, ParsesTheScramEntriesOfEachUserAndIgnoresOtherKeys) {
  credential_store store;
  store.replace_all({{"alice",
                      {{"SCRAM-SHA-256", text(scram_mechanism::sha256, 4096)},
                       {"SCRAM-SHA-512", text(scram_mechanism::sha512, 8192)},
                       {"producer_byte_rate", "1024"}}},
                     {"bob", {{"SCRAM-SHA-512", text(scram_mechanism::sha512, 4096)}}},
                     {"quota-only", {{"consumer_byte_rate", "2048"}}}});

  EXPECT_EQ(store.find("alice", scram_mechanism::sha256), credential(scram_mechanism::sha256, 4096));
  EXPECT_EQ(store.find("alice", scram_mechanism::sha512), credential(scram_mechanism::sha512, 8192));
  EXPECT_EQ(store.find("bob", scram_mechanism::sha512), credential(scram_mechanism::sha512, 4096));
  EXPECT_FALSE(store.find("bob", scram_mechanism::sha256));
  EXPECT_FALSE(store.find("quota-only", scram_mechanism::sha256));
  EXPECT_FALSE(store.find("nobody", scram_mechanism::sha512));

  EXPECT_EQ(store.describe("alice"),
            (std::vector<credential_info>{{scram_mechanism::sha256, 4096}, {scram_mechanism::sha512, 8192}}));
  EXPECT_TRUE(store.describe("quota-only").empty());
  const auto listed = store.list();
  ASSERT_EQ(listed.size(), 2u);  // users without credentials are not listed
  EXPECT_EQ(listed.begin()->first, "alice");
  EXPECT_EQ(listed.rbegin()->first, "bob");
}

// A credential that does not parse (or whose iterations are out of range) is skipped; the user's others stay.
TEST(CredentialStore, SkipsMalformedCredentials) {
  credential_store store;
  store.replace_all(
      {{"alice", {{"SCRAM-SHA-256", "salt=nonsense"}, {"SCRAM-SHA-512", text(scram_mechanism::sha512, 4096)}}},
       {"carol", {{"SCRAM-SHA-256", text(scram_mechanism::sha256, 1000)}}},
       // A SHA-256 credential's keys are too short for SHA-512.
       {"dave", {{"SCRAM-SHA-512", text(scram_mechanism::sha256, 4096)}}}});
  EXPECT_FALSE(store.find("alice", scram_mechanism::sha256));
  EXPECT_TRUE(store.find("alice", scram_mechanism::sha512));
  EXPECT_FALSE(store.find("carol", scram_mechanism::sha256));
  EXPECT_FALSE(store.find("dave", scram_mechanism::sha512));
  EXPECT_EQ(store.list().size(), 1u);
}

TEST(CredentialStore, UpdatesAndRemovesOneUser) {
  credential_store store;
  store.replace_all({{"alice", {{"SCRAM-SHA-256", text(scram_mechanism::sha256, 4096)}}}});

  store.update("bob", {{"SCRAM-SHA-256", text(scram_mechanism::sha256, 4096, 'b')}});
  store.update("alice", {{"SCRAM-SHA-512", text(scram_mechanism::sha512, 4096)}});
  EXPECT_FALSE(store.find("alice", scram_mechanism::sha256));  // the whole entity is replaced
  EXPECT_TRUE(store.find("alice", scram_mechanism::sha512));
  EXPECT_EQ(store.find("bob", scram_mechanism::sha256), credential(scram_mechanism::sha256, 4096, 'b'));

  store.update("alice", {{"producer_byte_rate", "1"}});  // no credential left
  EXPECT_FALSE(store.find("alice", scram_mechanism::sha512));
  store.remove("bob");
  store.remove("nobody");
  EXPECT_TRUE(store.list().empty());

  store.update("erin", {{"SCRAM-SHA-256", text(scram_mechanism::sha256, 4096)}});
  store.replace_all({});
  EXPECT_FALSE(store.find("erin", scram_mechanism::sha256));
}

// Logins look users up while the users change (run under ThreadSanitizer in CI).
TEST(CredentialStore, LookupsRunBesideUpdates) {
  credential_store store;
  const credential_store::users_config one = {{"alice", {{"SCRAM-SHA-256", text(scram_mechanism::sha256, 4096)}}}};
  const credential_store::users_config two = {{"alice", {{"SCRAM-SHA-256", text(scram_mechanism::sha256, 8192)}}}};
  store.replace_all(one);
  std::atomic<bool> stop{false};
  std::atomic<int> missing{0};
  std::vector<std::thread> readers;
  readers.reserve(2);
  for (int i = 0; i < 2; ++i)
    readers.emplace_back([&] {
      while (!stop.load())
        if (!store.find("alice", scram_mechanism::sha256)) missing.fetch_add(1);
    });
  for (int i = 0; i < 500; ++i) {
    store.replace_all(i % 2 == 0 ? two : one);
    store.update("bob", {{"SCRAM-SHA-256", text(scram_mechanism::sha256, 4096)}});
    store.remove("bob");
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(missing.load(), 0);  // a user present before and after is never missing in between
}

}  // namespace
}  // namespace ferry::security
