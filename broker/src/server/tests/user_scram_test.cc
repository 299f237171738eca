// DescribeUserScramCredentials (50) and AlterUserScramCredentials (51): see handlers_fixture.h.
#include <cstring>
#include <map>

#include "security/scram_credential.h"
#include "server/tests/handlers_fixture.h"

namespace ferry::server::testing {
namespace {

using security::scram_mechanism;

// The users' entities as ZooKeeper would hold them; each write reaches the store, as the broker's views bring it.
class test_user_configs final : public user_configs {
 public:
  explicit test_user_configs(security::credential_store& store) : store_(store) {}

  result<coord::layout::config_map> read_user_config(std::string_view user) override {
    if (error) return error;
    const auto it = entities.find(user);
    return it == entities.end() ? coord::layout::config_map{} : it->second;
  }
  result<void> set_user_config(std::string_view user, const coord::layout::config_map& config) override {
    if (error) return error;
    ++writes;
    entities[std::string(user)] = config;
    store_.update(user, config);
    return success();
  }

  std::map<std::string, coord::layout::config_map, std::less<>> entities;
  int writes = 0;
  std::error_code error;  // what every call fails with, when set

 private:
  security::credential_store& store_;
};

class user_scram_test : public handlers_test {
 protected:
  void SetUp() override {
    handlers_test::SetUp();
    context_->credentials = &store_;
    context_->users = &users_;
  }

  static p::alter_user_scram_credentials_request::credential_upsertion upsertion(const std::string& user,
                                                                                 scram_mechanism m,
                                                                                 std::int32_t iterations = 4096) {
    p::alter_user_scram_credentials_request::credential_upsertion u;
    u.name = user;
    u.mechanism = static_cast<std::int8_t>(m);
    u.iterations = iterations;
    u.salt = bytes("salt of " + user);
    u.salted_password = bytes(std::string(security::digest_bytes(m), 'p'));
    return u;
  }
  static p::alter_user_scram_credentials_request::credential_deletion deletion(const std::string& user,
                                                                               std::int8_t mechanism) {
    return {user, mechanism};
  }
  static std::vector<std::byte> bytes(const std::string& text) {
    std::vector<std::byte> out(text.size());
    std::memcpy(out.data(), text.data(), text.size());
    return out;
  }
  // The credential an upsertion() makes.
  static security::scram_credential expected(const std::string& user, scram_mechanism m,
                                             std::int32_t iterations = 4096) {
    return security::credential_from_salted_password(m, "salt of " + user, std::string(security::digest_bytes(m), 'p'),
                                                     iterations);
  }

  p::alter_user_scram_credentials_response alter(p::alter_user_scram_credentials_request request) {
    return run(handlers::handle_alter_user_scram_credentials, request, 0);
  }
  p::describe_user_scram_credentials_response describe(std::optional<std::vector<std::string>> names) {
    p::describe_user_scram_credentials_request request;
    if (names) {
      request.users.emplace();
      for (auto& n : *names) request.users->push_back({std::move(n)});
    }
    return run(handlers::handle_describe_user_scram_credentials, request, 0);
  }

  security::credential_store store_;
  test_user_configs users_{store_};
};

// Upsertions become Kafka's stored form in the user's entity, beside its other keys, and logins see them.
TEST_F(user_scram_test, alter_writes_credentials_in_kafkas_form) {
  users_.entities["alice"] = {{"producer_byte_rate", "1024"}};
  p::alter_user_scram_credentials_request request;
  request.upsertions = {upsertion("alice", scram_mechanism::sha256, 8192), upsertion("alice", scram_mechanism::sha512),
                        upsertion("bob", scram_mechanism::sha512)};
  const auto response = alter(request);
  ASSERT_EQ(response.results.size(), 2u);  // one per user
  EXPECT_EQ(response.results[0].user, "alice");
  EXPECT_EQ(response.results[1].user, "bob");
  for (const auto& r : response.results) {
    EXPECT_EQ(r.error_code, 0) << r.user;
    EXPECT_FALSE(r.error_message);
  }
  EXPECT_EQ(users_.writes, 2);
  const auto& alice = users_.entities.at("alice");
  EXPECT_EQ(alice.at("producer_byte_rate"), "1024");
  EXPECT_EQ(alice.at("SCRAM-SHA-256"), security::format_credential(expected("alice", scram_mechanism::sha256, 8192)));
  EXPECT_EQ(alice.at("SCRAM-SHA-512"), security::format_credential(expected("alice", scram_mechanism::sha512)));
  EXPECT_EQ(store_.find("bob", scram_mechanism::sha512), expected("bob", scram_mechanism::sha512));

  // Only mechanism and iterations come back; every user with credentials, sorted, when none is named.
  for (const auto& names : {std::optional<std::vector<std::string>>{}, std::optional(std::vector<std::string>{})}) {
    const auto described = describe(names);
    EXPECT_EQ(described.error_code, 0);
    ASSERT_EQ(described.results.size(), 2u);
    EXPECT_EQ(described.results[0].user, "alice");
    ASSERT_EQ(described.results[0].credential_infos.size(), 2u);
    EXPECT_EQ(described.results[0].credential_infos[0].mechanism, 1);
    EXPECT_EQ(described.results[0].credential_infos[0].iterations, 8192);
    EXPECT_EQ(described.results[0].credential_infos[1].mechanism, 2);
    EXPECT_EQ(described.results[0].credential_infos[1].iterations, 4096);
    EXPECT_EQ(described.results[1].user, "bob");
  }
}

// Each refused entry refuses its user's whole change with Kafka's code; the other users' changes are made.
TEST_F(user_scram_test, alter_refuses_bad_entries_per_user) {
  users_.entities["dave"] = {{"SCRAM-SHA-256", security::format_credential(expected("dave", scram_mechanism::sha256))}};
  store_.replace_all(users_.entities);
  p::alter_user_scram_credentials_request request;
  request.upsertions = {upsertion("", scram_mechanism::sha256),
                        upsertion("few", scram_mechanism::sha256, 4095),
                        upsertion("many", scram_mechanism::sha512, 16385),
                        upsertion("twice", scram_mechanism::sha256),
                        upsertion("twice", scram_mechanism::sha256),
                        upsertion("both", scram_mechanism::sha512),
                        upsertion("fine", scram_mechanism::sha256, 16384)};
  auto unknown = upsertion("unknown", scram_mechanism::sha256);
  unknown.mechanism = 3;
  request.upsertions.push_back(unknown);
  auto no_salt = upsertion("no-salt", scram_mechanism::sha256);
  no_salt.salt.clear();
  request.upsertions.push_back(no_salt);
  request.deletions = {deletion("both", 2), deletion("missing", 1), deletion("dave", 2)};
  const auto response = alter(request);

  std::map<std::string, std::int16_t> codes;
  for (const auto& r : response.results) {
    EXPECT_TRUE(codes.emplace(r.user, r.error_code).second) << "two results for " << r.user;
    if (r.error_code != 0) {
      EXPECT_TRUE(r.error_message) << r.user;
    }
  }
  EXPECT_EQ(codes, (std::map<std::string, std::int16_t>{{"", 93},
                                                        {"few", 93},
                                                        {"many", 93},
                                                        {"unknown", 33},
                                                        {"no-salt", 93},
                                                        {"twice", 92},
                                                        {"both", 92},
                                                        {"missing", 91},
                                                        {"dave", 91},
                                                        {"fine", 0}}));
  EXPECT_EQ(users_.writes, 1);
  EXPECT_TRUE(users_.entities.contains("fine"));
  EXPECT_TRUE(store_.find("dave", scram_mechanism::sha256));  // its refused change left it as it was
}

// A deletion removes that mechanism's key only; the last one leaves the entity empty, as Kafka does.
TEST_F(user_scram_test, alter_deletes_credentials) {
  users_.entities["alice"] = {
      {"SCRAM-SHA-256", security::format_credential(expected("alice", scram_mechanism::sha256))},
      {"SCRAM-SHA-512", security::format_credential(expected("alice", scram_mechanism::sha512))},
      {"consumer_byte_rate", "10"}};
  users_.entities["bob"] = {{"SCRAM-SHA-512", security::format_credential(expected("bob", scram_mechanism::sha512))}};
  store_.replace_all(users_.entities);

  p::alter_user_scram_credentials_request request;
  request.deletions = {deletion("alice", 1), deletion("bob", 2)};
  const auto response = alter(request);
  ASSERT_EQ(response.results.size(), 2u);
  for (const auto& r : response.results) EXPECT_EQ(r.error_code, 0) << r.user;
  EXPECT_EQ(users_.entities.at("alice").size(), 2u);
  EXPECT_FALSE(users_.entities.at("alice").contains("SCRAM-SHA-256"));
  EXPECT_TRUE(users_.entities.at("bob").empty());
  EXPECT_FALSE(store_.find("alice", scram_mechanism::sha256));
  EXPECT_TRUE(store_.find("alice", scram_mechanism::sha512));
  EXPECT_FALSE(store_.find("bob", scram_mechanism::sha512));

  const auto described = describe(std::nullopt);
  ASSERT_EQ(described.results.size(), 1u);
  EXPECT_EQ(described.results[0].user, "alice");
}

TEST_F(user_scram_test, alter_reports_zookeeper_failures) {
  users_.error = coord::errc::connection_loss;
  p::alter_user_scram_credentials_request request;
  request.upsertions = {upsertion("alice", scram_mechanism::sha256)};
  const auto response = alter(request);
  ASSERT_EQ(response.results.size(), 1u);
  EXPECT_NE(response.results[0].error_code, 0);
  EXPECT_TRUE(response.results[0].error_message);
}

// Named users: a user without credentials or an empty name is RESOURCE_NOT_FOUND, a name given twice
// DUPLICATE_RESOURCE (answered once).
TEST_F(user_scram_test, describe_named_users) {
  store_.replace_all(
      {{"alice", {{"SCRAM-SHA-512", security::format_credential(expected("alice", scram_mechanism::sha512))}}},
       {"quota-only", {{"producer_byte_rate", "1"}}}});
  const auto response = describe(std::vector<std::string>{"alice", "nobody", "quota-only", "", "twice", "twice"});
  EXPECT_EQ(response.error_code, 0);
  ASSERT_EQ(response.results.size(), 5u);
  EXPECT_EQ(response.results[0].user, "alice");
  EXPECT_EQ(response.results[0].error_code, 0);
  ASSERT_EQ(response.results[0].credential_infos.size(), 1u);
  EXPECT_EQ(response.results[0].credential_infos[0].mechanism, 2);
  EXPECT_EQ(response.results[0].credential_infos[0].iterations, 4096);
  EXPECT_EQ(response.results[1].error_code, 91);
  EXPECT_EQ(response.results[2].error_code, 91);
  EXPECT_EQ(response.results[3].user, "");
  EXPECT_EQ(response.results[3].error_code, 91);
  EXPECT_EQ(response.results[4].user, "twice");
  EXPECT_EQ(response.results[4].error_code, 92);
  for (std::size_t i = 1; i < response.results.size(); ++i) {
    EXPECT_TRUE(response.results[i].credential_infos.empty());
    EXPECT_TRUE(response.results[i].error_message);
  }
}

}  // namespace
}  // namespace ferry::server::testing
