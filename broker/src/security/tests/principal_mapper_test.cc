// ssl.principal.mapping.rules against the vectors of Kafka's SslPrincipalMapperTest, and the subject names of
// certificates in the form Java's X500Principal.getName() gives.
#include "security/principal_mapper.h"

#include <gtest/gtest.h>

#include <string>

#include "security/testing/test_certificates.h"

namespace ferry::security {
namespace {

std::string parsed(std::string_view rules) {
  auto mapper = principal_mapper::parse(rules);
  EXPECT_TRUE(mapper) << rules << ": " << (mapper ? "" : mapper.error());
  return mapper ? mapper.value().to_string() : "";
}

TEST(PrincipalMapperTest, AcceptsKafkasValidRules) {
  for (const char* rules : {
           "DEFAULT",
           "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
           "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
           "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
           "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
           "RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
           "RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/",
           "RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/",
       }) {
    EXPECT_TRUE(principal_mapper::parse(rules)) << rules;
  }
}

TEST(PrincipalMapperTest, RefusesKafkasInvalidRulesNamingTheSettingAndTheRule) {
  for (const char* rules : {
           "default",
           "DEFAUL",
           "DEFAULT/L",
           "DEFAULT/U",
           "RULE:CN=(.*?),OU=ServiceUsers.*/$1",
           "rule:^CN=(.*?),OU=ServiceUsers.*$/$1/",
           "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
           "RULE:^CN=(.*?),OU=ServiceUsers.*$/L",
           "RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
           "RULE:^CN=(.*?),OU=ServiceUsers.*$/LU",
       }) {
    auto mapper = principal_mapper::parse(rules, "listener.name.external.");
    ASSERT_FALSE(mapper) << rules;
    EXPECT_NE(mapper.error().find("listener.name.external.ssl.principal.mapping.rules: rule \""), std::string::npos)
        << mapper.error();
  }
}

TEST(PrincipalMapperTest, MapsAsKafka) {
  auto mapper = principal_mapper::parse(
      "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, "
      "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L, "
      "RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U, "
      "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U, "
      "DEFAULT");
  ASSERT_TRUE(mapper) << mapper.error();
  EXPECT_EQ(mapper.value().map("CN=Duke,OU=ServiceUsers,O=Org,C=US"), "duke");
  EXPECT_EQ(mapper.value().map("CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US"), "duke@sme");
  EXPECT_EQ(mapper.value().map("cn=duke,ou=sme,dc=mycp,dc=com"), "DUKE@SME");
  EXPECT_EQ(mapper.value().map("cN=duke,OU=JavaSoft,O=Sun Microsystems"), "DUKE");
  EXPECT_EQ(mapper.value().map("OU=JavaSoft,O=Sun Microsystems,C=US"), "OU=JavaSoft,O=Sun Microsystems,C=US");
}

TEST(PrincipalMapperTest, SplitsRulesAsKafka) {
  EXPECT_EQ(parsed(""), "[]");
  EXPECT_EQ(parsed("DEFAULT"), "[DEFAULT]");
  EXPECT_EQ(parsed("RULE://"), "[RULE:/]");
  EXPECT_EQ(parsed("RULE:/.*/"), "[RULE:/.*]");
  EXPECT_EQ(parsed("RULE:/.*/L"), "[RULE:/.*/L]");
  EXPECT_EQ(parsed("RULE://,DEFAULT"), "[RULE:/, DEFAULT]");
  EXPECT_EQ(parsed("  RULE:// ,  DEFAULT  "), "[RULE:/, DEFAULT]");
  EXPECT_EQ(parsed("  RULE:   /     / ,  DEFAULT  "), "[RULE:   /     , DEFAULT]");
  EXPECT_EQ(parsed("  RULE:  /     /U   ,DEFAULT  "), "[RULE:  /     /U, DEFAULT]");
  EXPECT_EQ(parsed("  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  "),
            "[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]");
  // Empty rules are ignored.
  EXPECT_EQ(parsed(",   , , ,      , , ,   "), "[]");
  EXPECT_EQ(parsed(",,RULE://,,,DEFAULT,,"), "[RULE:/, DEFAULT]");
  EXPECT_EQ(parsed(",  , RULE: /   /    ,,,   DEFAULT, ,   "), "[RULE: /   , DEFAULT]");
  EXPECT_EQ(parsed("     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,"), "[RULE:   /  /U, DEFAULT]");
  // Escapes.
  EXPECT_EQ(parsed(R"(RULE:\/\\\(\)\n\t/\/\//)"), R"([RULE:\/\\\(\)\n\t/\/\/])");
  EXPECT_EQ(parsed(R"(RULE:\**\/+/*/L,RULE:\/*\**/**/)"), R"([RULE:\**\/+/*/L, RULE:\/*\**/**])");
  // Commas and keywords inside rules.
  EXPECT_EQ(
      parsed(R"(RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT)"),
      R"([RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT])");
}

TEST(PrincipalMapperTest, RegexMayHoldEscapedCommasAndSpaces) {
  auto mapper = principal_mapper::parse(R"(RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT)");
  ASSERT_TRUE(mapper) << mapper.error();
  EXPECT_EQ(mapper.value().map(R"(CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz)"), R"(Tkac\, Adam)");
}

TEST(PrincipalMapperTest, NoMatchingRuleGivesNoName) {
  auto mapper = principal_mapper::parse("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/");
  ASSERT_TRUE(mapper);
  EXPECT_EQ(mapper.value().map("CN=alice,OU=Other"), std::nullopt);
  EXPECT_EQ(principal_mapper::parse("").value().map("CN=alice"), std::nullopt);
}

TEST(PrincipalMapperTest, ReplacementFollowsJava) {
  // Every match is replaced, empty ones included; a group beyond the regex's is literal text, as in Kafka.
  EXPECT_EQ(principal_mapper::parse("RULE:(.*?)/[$1]/").value().map("ab"), "[]a[]b[]");
  EXPECT_EQ(principal_mapper::parse("RULE:^CN=(\\w+),O=(\\w+)$/$2.$1.$3/").value().map("CN=alice,O=acme"),
            "acme.alice.$3");
  EXPECT_EQ(principal_mapper::parse("RULE:^CN=(\\w+)$/\\$1 is $1/").value().map("CN=bob"), "$1 is bob");
  EXPECT_EQ(principal_mapper::parse("RULE:^CN=(?P<user>\\w+)$/${user}/U").value().map("CN=bob"), "BOB");
}

TEST(PrincipalMapperTest, RefusesWhatCannotBeApplied) {
  for (const char* rules : {"RULE:^CN=.*$/$1/", "RULE:^CN=(.*)$/$x/", "RULE:^CN=(.*)$/x\\/", "RULE:(?<=a)b/x/",
                            "RULE:(a)\\1/x/", "RULE:^CN=(.*)$/${nope}/"}) {
    auto mapper = principal_mapper::parse(rules);
    ASSERT_FALSE(mapper) << rules;
    EXPECT_NE(mapper.error().find("ssl.principal.mapping.rules: rule"), std::string::npos) << mapper.error();
  }
}

std::string subject_of(std::string_view subject) {
  const testing::test_ca ca;
  return distinguished_name(ca.client_certificate(subject).certificate());
}

TEST(DistinguishedNameTest, ReversedRdnsWithoutSpaces) {
  EXPECT_EQ(subject_of("/C=US/ST=Unknown/L=Unknown/O=Unknown/OU=Unknown/CN=writeuser"),
            "CN=writeuser,OU=Unknown,O=Unknown,L=Unknown,ST=Unknown,C=US");
  EXPECT_EQ(subject_of("/DC=com/DC=example/UID=jdoe/CN=John Doe"), "CN=John Doe,UID=jdoe,DC=example,DC=com");
}

TEST(DistinguishedNameTest, MultiValuedRdnJoinedWithPlus) {
  EXPECT_EQ(subject_of("/O=Acme/OU=Ops+CN=alice"), "OU=Ops+CN=alice,O=Acme");
}

TEST(DistinguishedNameTest, EscapesAsRfc2253) {
  EXPECT_EQ(subject_of(R"(/O=Tkac, Adam/CN= x;y<z>"q"#1=2\ )"), R"(CN=\ x\;y\<z\>\"q\"\#1\=2\\\ ,O=Tkac\, Adam)");
  EXPECT_EQ(subject_of("/CN=Zo\xC3\xAB"), "CN=Zo\xC3\xAB");  // UTF-8 as it is
}

TEST(DistinguishedNameTest, AttributesWithoutRfc2253KeywordAreOidAndHexDer) {
  EXPECT_EQ(subject_of("/emailAddress=john@example.com/CN=john"),
            "CN=john,1.2.840.113549.1.9.1=#16106a6f686e406578616d706c652e636f6d");
}

}  // namespace
}  // namespace ferry::security
