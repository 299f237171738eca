#include "kube/api_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kube/informer.h"

namespace ferry::kube {
namespace {

namespace fs = std::filesystem;

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kubeconfig-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  fs::path dir_;
};

TEST_F(KubeconfigTest, ReadsTheCurrentContextWithFilesAndInlineData) {
  write("ca.crt", "CA PEM");
  const auto path = write("config", R"(apiVersion: v1
kind: Config
current-context: test
clusters:
- name: other
  cluster: {server: "https://10.0.0.1:443"}
- name: c
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: ca.crt
users:
- name: u
  user:
    client-certificate-data: Q0VSVCBQRU0=
    client-key-data: S0VZ
    token: abc
contexts:
- name: test
  context: {cluster: c, user: u}
)");
  const auto config = load_kubeconfig(path);
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ(config.value().host, "127.0.0.1");
  EXPECT_EQ(config.value().port, "6443");
  EXPECT_EQ(config.value().ca_pem, "CA PEM");
  EXPECT_EQ(config.value().client_cert_pem, "CERT PEM");
  EXPECT_EQ(config.value().client_key_pem, "KEY");
  EXPECT_EQ(config.value().token, "abc");
}

TEST_F(KubeconfigTest, RefusesAMissingContextOrServer) {
  EXPECT_FALSE(load_kubeconfig(write("a", "current-context: nope\ncontexts: []\n")));
  EXPECT_FALSE(load_kubeconfig(write("b",
                                     "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
                                     "clusters:\n- name: c\n  cluster: {server: 'http://plain:80'}\n")));
  EXPECT_FALSE(load_kubeconfig(write("c", "{{{ not yaml")));
  EXPECT_FALSE(load_kubeconfig((dir_ / "missing").string()));
}

TEST_F(KubeconfigTest, TokenFilesAreReadAgainWhenTheyChange) {
  api_config config;
  config.token_file = write("token", "first\n");
  token_source tokens(config);
  EXPECT_EQ(tokens.current(), "first");
  write("token", "second");
  fs::last_write_time(config.token_file, fs::last_write_time(config.token_file) + std::chrono::seconds(5));
  EXPECT_EQ(tokens.current(), "second");
}

TEST(UrlEncode, EscapesQueryValues) {
  EXPECT_EQ(url_encode("ferry.dev/cluster=a b"), "ferry.dev/cluster%3Da%20b");
  EXPECT_EQ(url_encode("x&y"), "x%26y");
}

}  // namespace
}  // namespace ferry::kube
