#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "security/errc.h"
#include "security/password_checker_pool.h"
#include "security/plain.h"
#include "security/sasl_exchange.h"
#include "security/scram_client.h"
#include "security/scram_credential.h"
#include "security/scram_messages.h"
#include "security/scram_server.h"

namespace ferry::security {
namespace {

using namespace std::string_literals;

class user_table final : public credential_source {
 public:
  void add(const std::string& user, scram_mechanism m, scram_credential c) { table_[{user, m}] = std::move(c); }
  [[nodiscard]] std::optional<scram_credential> find(std::string_view user, scram_mechanism m) const override {
    const auto it = table_.find({std::string(user), m});
    if (it == table_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::map<std::pair<std::string, scram_mechanism>, scram_credential> table_;
};

// Runs the awaitable `make` returns to its end on an io_context of its own.
template <typename Make>
auto run(Make make) {
  boost::asio::io_context io;
  std::optional<typename decltype(make())::value_type> out;
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        auto operation = make();
        // NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage): Asio's frame state, analysed without a caller.
        out.emplace(co_await std::move(operation));
      },
      boost::asio::detached);
  io.run();
  return std::move(*out);
}

result<std::string> respond(sasl_server_exchange& exchange, std::string_view token) {
  return run([&] { return exchange.respond(token); });
}

// RFC 7677 §3.
constexpr std::string_view rfc_client_first = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
constexpr std::string_view rfc_server_first =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
constexpr std::string_view rfc_client_final =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
constexpr std::string_view rfc_server_final = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

user_table rfc_users() {
  user_table users;
  users.add("user", scram_mechanism::sha256,
            derive_credential(scram_mechanism::sha256, "pencil", *base64_decode("W22ZaJ0SNY7soEsUEjb6gQ=="), 4096));
  return users;
}

// Written by Kafka's kafka-configs.sh into /config/users/admin, password "adminpwd".
constexpr std::string_view kafka_sha512_credential =
    "salt=MTcxbDF6aGNxOWgwajB2ZG1uOW83c3h6bm4=,stored_key=cmc413tGXiD7hFkdZHiVS7WzAUsC+mRQGyazJnC7S4a/"
    "w8ZrFuk/0cCsVtvWT13qob3QKJpk/pdWq2ODRMQEHw==,server_key=bcXtlsvRZGNqRBUai1TLWe2BIsOLHhTrunVt1OciDRvX2ZccDxFP7uxVZ"
    "Aa8NAInMkciqFyZB6KS9SxfX1XBug==,iterations=4096";
constexpr std::string_view kafka_sha256_credential =
    "salt=a3N5aG4xcTRlc2JieGZ6azZzZHAxMmpmZQ==,stored_key=AWAeqyMrcJZfKwk1OD0VeKA63sd6h1IHPLBPhtpqhmg=,server_key="
    "QR8pt51dmlL08Oqp/s2lo7YtqQXofYIN6pACn8eAdog=,iterations=4096";

// A full client<->server exchange; the server's error, if any.
std::error_code login(scram_mechanism m, const credential_source& users, const std::string& user,
                      const std::string& password) {
  scram_client client(m, user, password);
  auto server = make_scram_exchange(m, users);
  auto server_first = respond(*server, client.first_message());
  if (!server_first) return server_first.error();
  auto client_final = client.final_message(server_first.value());
  EXPECT_TRUE(client_final);
  auto server_final = respond(*server, client_final.value());
  if (!server_final) return server_final.error();
  EXPECT_TRUE(server->complete());
  EXPECT_TRUE(client.verify_server_final(server_final.value()));
  return {};
}

TEST(scram, AProcessFindsItsOwnCredentialMissingMatchingOrOfAnotherPassword) {
  std::map<std::string, std::string> config{{"producer_byte_rate", "1024"}};
  EXPECT_EQ(find_own_credential(scram_mechanism::sha512, config, "pw"), own_credential::missing);
  config["SCRAM-SHA-512"] = new_credential_text(scram_mechanism::sha512, "pw");
  EXPECT_EQ(parse_credential(scram_mechanism::sha512, config["SCRAM-SHA-512"]).value().iterations,
            min_scram_iterations);
  EXPECT_EQ(find_own_credential(scram_mechanism::sha512, config, "pw"), own_credential::matches);
  EXPECT_EQ(find_own_credential(scram_mechanism::sha512, config, "other"), own_credential::differs);
  EXPECT_EQ(find_own_credential(scram_mechanism::sha256, config, "pw"), own_credential::missing);
  config["SCRAM-SHA-512"] = "not a credential";
  EXPECT_EQ(find_own_credential(scram_mechanism::sha512, config, "pw"), own_credential::differs);
}

TEST(scram, Rfc7677ServerSide) {
  const auto users = rfc_users();
  auto server = make_scram_exchange(scram_mechanism::sha256, users, "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0");
  EXPECT_EQ(respond(*server, rfc_client_first).value(), rfc_server_first);
  EXPECT_FALSE(server->complete());
  EXPECT_EQ(respond(*server, rfc_client_final).value(), rfc_server_final);
  EXPECT_TRUE(server->complete());
  EXPECT_EQ(server->user(), "user");
  // Nothing more is accepted after the end.
  EXPECT_EQ(respond(*server, rfc_client_final).error(), errc::unexpected_message);
}

TEST(scram, Rfc7677ClientSide) {
  scram_client client(scram_mechanism::sha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
  EXPECT_EQ(client.first_message(), rfc_client_first);
  EXPECT_EQ(client.final_message(rfc_server_first).value(), rfc_client_final);
  EXPECT_TRUE(client.verify_server_final(rfc_server_final));
  EXPECT_EQ(client.verify_server_final("v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=").error(),
            errc::bad_server_signature);
  EXPECT_EQ(client.verify_server_final("e=invalid-proof").error(), errc::bad_proof);
}

TEST(scram, ClientRefusesAWeakOrForeignServerFirst) {
  scram_client client(scram_mechanism::sha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
  EXPECT_EQ(client.final_message("r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4095").error(),
            errc::bad_credential);
  EXPECT_EQ(client.final_message("r=someoneelse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096").error(), errc::bad_nonce);
  EXPECT_EQ(client.final_message("r=rOprNGfwEbeRWgbNEkqO,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096").error(), errc::bad_nonce);
  EXPECT_EQ(client.final_message("r=rOprNGfwEbeRWgbNEkqOabc,s=***,i=4096").error(), errc::malformed_message);
  EXPECT_EQ(client.verify_server_final(rfc_server_final).error(), errc::bad_server_signature);
}

TEST(scram, Sha512AndSha256RoundTrips) {
  for (const auto m : {scram_mechanism::sha512, scram_mechanism::sha256}) {
    user_table users;
    users.add("alice", m, derive_credential(m, "s3cret", random_bytes(16), 4096));
    EXPECT_FALSE(login(m, users, "alice", "s3cret")) << name_of(m);
    EXPECT_EQ(login(m, users, "alice", "wrong"), errc::bad_proof) << name_of(m);
  }
}

TEST(scram, WrongPasswordFailsAndTheExchangeStaysFailed) {
  const auto users = rfc_users();
  scram_client client(scram_mechanism::sha256, "user", "pen");
  auto server = make_scram_exchange(scram_mechanism::sha256, users);
  const auto server_first = respond(*server, client.first_message());
  const auto client_final = client.final_message(server_first.value()).value();
  EXPECT_EQ(respond(*server, client_final).error(), errc::bad_proof);
  EXPECT_FALSE(server->complete());
  EXPECT_EQ(server->user(), "user");
  EXPECT_EQ(respond(*server, client_final).error(), errc::unexpected_message);
}

TEST(scram, UnknownUserFailsAtClientFirst) {
  const auto users = rfc_users();
  auto server = make_scram_exchange(scram_mechanism::sha256, users);
  EXPECT_EQ(respond(*server, "n,,n=mallory,r=abc").error(), errc::unknown_user);
  EXPECT_EQ(server->user(), "mallory");
  // The user has no SCRAM-SHA-512 credential.
  auto sha512 = make_scram_exchange(scram_mechanism::sha512, users);
  EXPECT_EQ(respond(*sha512, rfc_client_first).error(), errc::unknown_user);
}

TEST(scram, ClientFinalNonceMustBeExactlyTheServers) {
  const auto users = rfc_users();
  // CVE-2024-56128: only the client's part of the nonce, as old franz-go sends.
  auto server = make_scram_exchange(scram_mechanism::sha256, users, "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0");
  ASSERT_TRUE(respond(*server, rfc_client_first));
  EXPECT_EQ(respond(*server, "c=biws,r=rOprNGfwEbeRWgbNEkqO,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=").error(),
            errc::bad_nonce);
  // A nonce that extends the server's, with a proof the client computed over it.
  scram_client client(scram_mechanism::sha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
  auto tampered = make_scram_exchange(scram_mechanism::sha256, users, "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0");
  ASSERT_TRUE(respond(*tampered, client.first_message()));
  const std::string forged_first =
      "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0X,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
  EXPECT_EQ(respond(*tampered, client.final_message(forged_first).value()).error(), errc::bad_nonce);
  EXPECT_FALSE(tampered->complete());
}

// librdkafka before 2.6.1 (Debian's 2.0.2) sends its client nonce once more in front of the server's nonce in
// client-final, with a proof over what it sent; Kafka 3.8.1-3.9 accept it, and so do we. Any other prefix is
// still refused.
TEST(scram, ClientFinalNonceMayRepeatTheClientNonceAsOldLibrdkafkaSendsIt) {
  const auto users = rfc_users();
  const auto m = scram_mechanism::sha256;
  const auto final_with = [&](const std::string& prefix) {
    auto server = make_scram_exchange(m, users, "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0");
    const auto server_first = respond(*server, rfc_client_first).value();
    const auto without_proof =
        format_client_final_without_proof(prefix + parse_server_first(server_first).value().nonce);
    const auto key = client_key(m, salted_password(m, "pencil", users.find("user", m)->salt, 4096));
    const auto auth_message = std::string(rfc_client_first).substr(3) + "," + server_first + "," + without_proof;
    const auto proof = xor_bytes(key, scram_hmac(m, scram_hash(m, key), auth_message));
    auto answer = respond(*server, format_client_final(without_proof, proof));
    return std::pair(answer ? std::error_code() : answer.error(), server->complete());
  };
  EXPECT_EQ(final_with(""), std::pair(std::error_code(), true));
  EXPECT_EQ(final_with("rOprNGfwEbeRWgbNEkqO"), std::pair(std::error_code(), true));
  EXPECT_EQ(final_with("rOprNGfwEbeRWgbNEkqOx"), std::pair(make_error_code(errc::bad_nonce), false));
  EXPECT_EQ(final_with("x"), std::pair(make_error_code(errc::bad_nonce), false));
}

TEST(scram, ChannelBindingMustBeTheGs2HeaderSent) {
  const auto users = rfc_users();
  auto server = make_scram_exchange(scram_mechanism::sha256, users, "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0");
  ASSERT_TRUE(respond(*server, rfc_client_first));
  // "eSws" is "y,,": not the header the client sent.
  EXPECT_EQ(
      respond(*server,
              "c=eSws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz"
              "7AndVQ=")
          .error(),
      errc::bad_channel_binding);
  // A client that asks for channel binding is refused at once.
  auto binding = make_scram_exchange(scram_mechanism::sha256, users);
  EXPECT_EQ(respond(*binding, "p=tls-unique,,n=user,r=abc").error(), errc::bad_channel_binding);
}

TEST(scram, AuthorizationIdMustBeTheUser) {
  const auto users = rfc_users();
  auto other = make_scram_exchange(scram_mechanism::sha256, users);
  EXPECT_EQ(respond(*other, "n,a=admin,n=user,r=abc").error(), errc::authorization_id_mismatch);
  auto same = make_scram_exchange(scram_mechanism::sha256, users);
  EXPECT_TRUE(respond(*same, "n,a=user,n=user,r=abc"));
}

TEST(scram, TokenauthAndReservedAttributesAreRefused) {
  EXPECT_EQ(parse_client_first("n,,n=user,r=abc,tokenauth=true").error(), errc::unsupported_extension);
  EXPECT_EQ(parse_client_first("n,,m=ext,n=user,r=abc").error(), errc::malformed_message);
  EXPECT_TRUE(parse_client_first("n,,n=user,r=abc,other=1"));
  const auto users = rfc_users();
  auto server = make_scram_exchange(scram_mechanism::sha256, users);
  EXPECT_EQ(respond(*server, "n,,n=user,r=abc,tokenauth=true").error(), errc::unsupported_extension);
}

TEST(scram, SaslnameEscapes) {
  const auto first = parse_client_first("n,,n=a=2Cb=3Dc,r=x").value();
  EXPECT_EQ(first.user, "a,b=c");
  EXPECT_EQ(first.gs2_header, "n,,");
  EXPECT_EQ(first.bare, "n=a=2Cb=3Dc,r=x");
  EXPECT_EQ(format_client_first("a,b=c", "x"), "n,,n=a=2Cb=3Dc,r=x");
  EXPECT_EQ(parse_client_first("n,a=a=3Db,n=a=3Db,r=x").value().authorization_id, "a=b");
  for (const auto* bad : {"n,,n=a=2,r=x", "n,,n=a=4D,r=x", "n,,n=a=,r=x", "n,,n=,r=x"})
    EXPECT_EQ(parse_client_first(bad).error(), errc::malformed_message) << bad;
  user_table users;
  users.add("a,b=c", scram_mechanism::sha512, derive_credential(scram_mechanism::sha512, "pw", "salt", 4096));
  EXPECT_FALSE(login(scram_mechanism::sha512, users, "a,b=c", "pw"));
}

TEST(scram, MessageParsers) {
  EXPECT_EQ(parse_client_first("y,,n=user,r=abc").value().gs2_header, "y,,");
  for (const auto* bad : {"", "n", "n,,", "n,,n=user", "x,,n=user,r=abc", "n,,n=user,r=", "n,,n=user,r=a b",
                          "n,,r=abc,n=user", "n,b=x,n=user,r=abc", "n,,n=user,r=abc,", "n,,n=user,r=abc,1=2"})
    EXPECT_EQ(parse_client_first(bad).error(), errc::malformed_message) << bad;
  EXPECT_EQ(parse_client_first(std::string(max_scram_message_bytes + 1, 'n')).error(), errc::malformed_message);

  const auto final_message = parse_client_final("c=biws,r=abc,ext=1,p=AAAA").value();
  EXPECT_EQ(final_message.channel_binding, "n,,");
  EXPECT_EQ(final_message.nonce, "abc");
  EXPECT_EQ(final_message.proof, "\0\0\0"s);
  EXPECT_EQ(final_message.without_proof, "c=biws,r=abc,ext=1");
  for (const auto* bad :
       {"c=biws,r=abc", "c=biws,p=AAAA", "c=biw,r=abc,p=AAAA", "c=biws,r=abc,p=", "r=abc,c=biws,p=AAAA"})
    EXPECT_EQ(parse_client_final(bad).error(), errc::malformed_message) << bad;

  const auto server_first = parse_server_first(rfc_server_first).value();
  EXPECT_EQ(server_first.iterations, 4096);
  EXPECT_EQ(format_server_first(server_first), rfc_server_first);
  for (const auto* bad : {"r=abc,s=AAAA,i=0", "r=abc,s=AAAA,i=-1", "r=abc,s=AAAA,i=99999999999", "r=abc,s=,i=4096",
                          "r=abc,s=AAAA", "m=x,r=abc,s=AAAA,i=4096"})
    EXPECT_EQ(parse_server_first(bad).error(), errc::malformed_message) << bad;

  EXPECT_EQ(parse_server_final("e=unknown-user").value().error, "unknown-user");
  EXPECT_EQ(parse_server_final("v=AAAA").value().signature, "\0\0\0"s);
  for (const auto* bad : {"", "v=", "e=", "x=AAAA", "v=AA"})
    EXPECT_EQ(parse_server_final(bad).error(), errc::malformed_message) << bad;
}

TEST(credential, KafkaTextRoundTrip) {
  const auto sha512 = parse_credential(scram_mechanism::sha512, kafka_sha512_credential).value();
  EXPECT_EQ(sha512.iterations, 4096);
  EXPECT_EQ(format_credential(sha512), kafka_sha512_credential);
  EXPECT_TRUE(password_matches(scram_mechanism::sha512, sha512, "adminpwd"));
  EXPECT_FALSE(password_matches(scram_mechanism::sha512, sha512, "adminpwe"));

  const auto sha256 = parse_credential(scram_mechanism::sha256, kafka_sha256_credential).value();
  EXPECT_EQ(derive_credential(scram_mechanism::sha256, "adminpwd", sha256.salt, 4096), sha256);
  EXPECT_EQ(format_credential(sha256), kafka_sha256_credential);
  // The same from the salted password a client sends in AlterUserScramCredentials.
  const auto salted = salted_password(scram_mechanism::sha256, "adminpwd", sha256.salt, 4096);
  EXPECT_EQ(credential_from_salted_password(scram_mechanism::sha256, sha256.salt, salted, 4096), sha256);
  // Keys of SHA-512's size are not a SHA-256 credential.
  EXPECT_EQ(parse_credential(scram_mechanism::sha256, kafka_sha512_credential).error(), errc::bad_credential);
}

TEST(credential, MalformedTextIsRefused) {
  const std::string keys =
      "stored_key=AWAeqyMrcJZfKwk1OD0VeKA63sd6h1IHPLBPhtpqhmg=,server_key="
      "QR8pt51dmlL08Oqp/s2lo7YtqQXofYIN6pACn8eAdog=";
  EXPECT_TRUE(parse_credential(scram_mechanism::sha256, "iterations=8192,salt=AAAA," + keys));
  for (const auto& bad :
       {"salt=AAAA," + keys, "salt=AAAA," + keys + ",iterations=4095", "salt=AAAA," + keys + ",iterations=16385",
        "salt=AAAA," + keys + ",iterations=4k", "salt=AA," + keys + ",iterations=4096",
        "salt=AAAA," + keys + ",iterations=4096,x=1", "salt=AAAA,salt=AAAA," + keys + ",iterations=4096",
        "=AAAA," + keys + ",iterations=4096", "salt=," + keys + ",iterations=4096", std::string()})
    EXPECT_EQ(parse_credential(scram_mechanism::sha256, bad).error(), errc::bad_credential) << bad;
}

TEST(credential, Base64) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("n,,"), "biws");
  EXPECT_EQ(base64_encode("ab"), "YWI=");
  EXPECT_EQ(base64_decode("YWI=").value(), "ab");
  EXPECT_EQ(base64_decode("YQ==").value(), "a");
  EXPECT_EQ(base64_decode("").value(), "");
  for (const auto* bad : {"YWI", "Y===", "====", "YW I", "YW\nI=", "YWI=YWI=", "Y-I="})
    EXPECT_FALSE(base64_decode(bad)) << bad;
  EXPECT_EQ(random_bytes(24).size(), 24U);
  EXPECT_NE(random_bytes(24), random_bytes(24));
}

TEST(plain, Parser) {
  const auto plain = parse_plain_message("\0user\0pass"s).value();
  EXPECT_EQ(plain.user, "user");
  EXPECT_EQ(plain.password, "pass");
  EXPECT_EQ(plain.authorization_id, "");
  // kafka-python sends the user as the authzid too.
  EXPECT_EQ(parse_plain_message("user\0user\0pass"s).value().authorization_id, "user");
  EXPECT_EQ(parse_plain_message("admin\0user\0pass"s).error(), errc::authorization_id_mismatch);
  for (const auto& bad : {"\0\0pass"s, "\0user\0"s, "user\0pass"s, "\0user\0pa\0ss"s, ""s, "userpass"s})
    EXPECT_EQ(parse_plain_message(bad).error(), errc::malformed_message);
  EXPECT_EQ(parse_plain_message("\0user\0"s + std::string(max_plain_message_bytes, 'p')).error(),
            errc::malformed_message);
}

TEST(plain, ExchangeChecksTheStoredScramCredential) {
  user_table users;
  users.add("alice", scram_mechanism::sha256, derive_credential(scram_mechanism::sha256, "old", "salt", 4096));
  users.add("alice", scram_mechanism::sha512, derive_credential(scram_mechanism::sha512, "new", "salt", 4096));
  users.add("bob", scram_mechanism::sha256, derive_credential(scram_mechanism::sha256, "bobpw", "salt", 4096));
  password_checker_pool checker(1, 4);

  auto good = make_plain_exchange(users, checker);
  EXPECT_EQ(respond(*good, "alice\0alice\0new"s).value(), "");
  EXPECT_TRUE(good->complete());
  EXPECT_EQ(good->user(), "alice");
  EXPECT_EQ(respond(*good, "alice\0alice\0new"s).error(), errc::unexpected_message);

  // SCRAM-SHA-512 wins when the user has both.
  auto older = make_plain_exchange(users, checker);
  EXPECT_EQ(respond(*older, "\0alice\0old"s).error(), errc::bad_password);
  EXPECT_FALSE(older->complete());

  auto sha256_only = make_plain_exchange(users, checker);
  EXPECT_TRUE(respond(*sha256_only, "\0bob\0bobpw"s));

  auto unknown = make_plain_exchange(users, checker);
  EXPECT_EQ(respond(*unknown, "\0carol\0pw"s).error(), errc::unknown_user);
  EXPECT_EQ(unknown->user(), "carol");

  auto impersonation = make_plain_exchange(users, checker);
  EXPECT_EQ(respond(*impersonation, "alice\0bob\0bobpw"s).error(), errc::authorization_id_mismatch);
  EXPECT_FALSE(impersonation->complete());
}

TEST(password_checker_pool, ChecksAndResumesOnTheCallersThread) {
  const auto credential = derive_credential(scram_mechanism::sha256, "pw", "salt", 4096);
  password_checker_pool checker(2, 2);
  boost::asio::io_context io;
  std::vector<std::optional<result<bool>>> results(2);
  bool same_thread = true;
  const auto caller = std::this_thread::get_id();
  for (std::size_t i = 0; i < results.size(); ++i) {
    boost::asio::co_spawn(
        io,
        [&, i]() -> boost::asio::awaitable<void> {
          auto check = checker.check(scram_mechanism::sha256, credential, i == 0 ? "pw" : "nope");
          results[i].emplace(co_await std::move(check));
          same_thread = same_thread && std::this_thread::get_id() == caller;
        },
        boost::asio::detached);
  }
  io.run();
  EXPECT_TRUE(same_thread);
  EXPECT_TRUE(results[0]->value());
  EXPECT_FALSE(results[1]->value());
}

TEST(password_checker_pool, RefusesWhenFull) {
  const auto credential = derive_credential(scram_mechanism::sha256, "pw", "salt", 4096);
  // One thread, nobody may wait: of three checks started together, the first runs and the others are refused.
  password_checker_pool checker(1, 0);
  boost::asio::io_context io;
  std::vector<std::optional<result<bool>>> results(3);
  for (std::size_t i = 0; i < results.size(); ++i) {
    boost::asio::co_spawn(
        io,
        [&, i]() -> boost::asio::awaitable<void> {
          auto check = checker.check(scram_mechanism::sha256, credential, "pw");
          results[i].emplace(co_await std::move(check));
        },
        boost::asio::detached);
  }
  io.run();
  EXPECT_TRUE(results[0]->value());
  EXPECT_EQ(results[1]->error(), errc::busy);
  EXPECT_EQ(results[2]->error(), errc::busy);
  // Once the first has finished, the pool takes checks again.
  EXPECT_TRUE(run([&] { return checker.check(scram_mechanism::sha256, credential, "pw"); }).value());
}

TEST(password_checker_pool, DestructionWaitsForChecksInFlight) {
  const auto credential = derive_credential(scram_mechanism::sha512, "pw", "salt", 16384);
  boost::asio::io_context io;
  std::optional<result<bool>> outcome;
  {
    password_checker_pool checker(1, 4);
    bool started = false;
    boost::asio::co_spawn(
        io,
        [&]() -> boost::asio::awaitable<void> {
          auto check = checker.check(scram_mechanism::sha512, credential, "pw");
          started = true;  // the check reaches the pool within this same handler
          outcome.emplace(co_await std::move(check));
        },
        boost::asio::detached);
    while (!started) io.run_one();
  }
  io.run();
  ASSERT_TRUE(outcome);
  EXPECT_TRUE(outcome->value());
}

}  // namespace
}  // namespace ferry::security
