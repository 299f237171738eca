#include "kube/exec_credential.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kube/api_config.h"
#include "kube/errc.h"
#include "kube/time_format.h"

namespace ferry::kube {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto v1 = "client.authentication.k8s.io/v1";

class ExecCredentialTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("exec-credential-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // An executable shell script in the test's directory.
  std::string script(const std::string& name, const std::string& body) {
    const auto path = dir_ / name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    fs::permissions(path, fs::perms::owner_all);
    return path.string();
  }
  exec_plugin plugin(const std::string& command) {
    return {.user = "eks-admin", .api_version = v1, .command = command, .timeout = 10s};
  }
  // A plugin that counts its runs in DIR/runs and prints the token t-<run>, expiring at $EXPIRES.
  exec_plugin counting_plugin(const std::string& expires) {
    auto p = plugin(script("counting", R"(n=$(( $(cat "$DIR/runs" 2>/dev/null || echo 0) + 1 ))
echo $n > "$DIR/runs"
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t-%s","expirationTimestamp":"%s"}}' $n "$EXPIRES"
)"));
    p.env = {{"DIR", dir_.string()}, {"EXPIRES", expires}};
    return p;
  }
  fs::path dir_;
};

TEST_F(ExecCredentialTest, RunsThePluginWithArgsEnvAndExecInfoAndReadsItsToken) {
  auto p = plugin(script("plugin", R"(printf '%s|%s|%s' "$1" "$2" "$REGION" > "$DIR/args"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$DIR/info"
cat <<EOF
{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
 "status": {"token": "secret-token", "expirationTimestamp": "2030-01-02T03:04:05Z"}}
EOF
)"));
  p.args = {"token", "--cluster-name=prod"};
  p.env = {{"REGION", "eu-west-1"}, {"DIR", dir_.string()}};
  const auto credential = run_exec_plugin(p);
  ASSERT_TRUE(credential) << credential.error().message();
  EXPECT_EQ(credential.value().token, "secret-token");
  EXPECT_EQ(credential.value().expires, parse_time("2030-01-02T03:04:05Z"));
  std::ifstream args(dir_ / "args");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(args), {}), "token|--cluster-name=prod|eu-west-1");
  std::ifstream info(dir_ / "info");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(info), {}),
            R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}})");
}

TEST_F(ExecCredentialTest, ReadsAClientCertificate) {
  const auto credential = run_exec_plugin(plugin(script("cert", R"(cat <<EOF
{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
 "status": {"clientCertificateData": "CERT PEM", "clientKeyData": "KEY PEM"}}
EOF
)")));
  ASSERT_TRUE(credential) << credential.error().message();
  EXPECT_EQ(credential.value().client_cert_pem, "CERT PEM");
  EXPECT_EQ(credential.value().client_key_pem, "KEY PEM");
  EXPECT_TRUE(credential.value().token.empty());
  EXPECT_FALSE(credential.value().expires);
}

TEST_F(ExecCredentialTest, FailuresNameTheUserAndTheCommandButNotTheToken) {
  const auto failure = [](const exec_plugin& p) {
    testing::internal::CaptureStderr();
    const auto credential = run_exec_plugin(p);
    const auto log = testing::internal::GetCapturedStderr();
    EXPECT_FALSE(credential);
    EXPECT_NE(log.find("kubeconfig user 'eks-admin'"), std::string::npos) << log;
    EXPECT_NE(log.find("'" + p.command + "'"), std::string::npos) << log;
    EXPECT_EQ(log.find("secret-token"), std::string::npos) << log;
    return log;
  };
  EXPECT_NE(failure(plugin(script("fails", "echo 'the SSO session has expired' >&2\nexit 3\n")))
                .find("exited with status 3: the SSO session has expired"),
            std::string::npos);
  EXPECT_NE(failure(plugin(script("garbage", "echo 'not json'\n"))).find("did not print an ExecCredential"),
            std::string::npos);
  EXPECT_NE(failure(plugin(script("old", R"(echo '{"apiVersion":"client.authentication.k8s.io/v1beta1",
"kind":"ExecCredential","status":{"token":"secret-token"}}')")))
                .find("the kubeconfig asks for"),
            std::string::npos);
  auto missing = plugin("ferry-no-such-auth-plugin");
  missing.install_hint = "Install it with: apt-get install ferry-auth";
  EXPECT_NE(failure(missing).find("was not found. Install it with: apt-get install ferry-auth"), std::string::npos);
}

TEST_F(ExecCredentialTest, APluginThatHangsIsKilledAtItsTimeout) {
  auto p = plugin(script("hangs", "exec sleep 60\n"));
  p.timeout = 200ms;
  const auto start = std::chrono::steady_clock::now();
  testing::internal::CaptureStderr();
  const auto credential = run_exec_plugin(p);
  const auto log = testing::internal::GetCapturedStderr();
  ASSERT_FALSE(credential);
  EXPECT_EQ(credential.error(), make_error_code(errc::timeout));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_NE(log.find("gave no answer within 200 ms"), std::string::npos) << log;
}

TEST_F(ExecCredentialTest, ACredentialIsCachedUntilShortlyBeforeItExpires) {
  api_config config;
  config.exec = counting_plugin(format_time(std::chrono::system_clock::now() + 1h));
  token_source tokens(config);
  EXPECT_EQ(tokens.current(), "t-1");
  EXPECT_EQ(tokens.current(), "t-1");
  EXPECT_FALSE(tokens.unauthorized()) << "a credential given moments ago is what the plugin gives now";
  EXPECT_EQ(tokens.current(), "t-1");
}

TEST_F(ExecCredentialTest, ACredentialAboutToExpireIsFetchedAgain) {
  api_config config;
  config.exec = counting_plugin(format_time(std::chrono::system_clock::now() + 5s));  // within the margin
  token_source tokens(config);
  EXPECT_EQ(tokens.current(), "t-1");
  EXPECT_EQ(tokens.current(), "t-2");
}

TEST_F(ExecCredentialTest, KubeconfigExecSections) {
  const auto kubeconfig = [this](const std::string& exec) {
    std::ofstream(dir_ / "config") << R"(current-context: c
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
contexts: [{name: c, context: {cluster: c, user: eks}}]
users:
- name: eks
  user:
    exec:
)" << exec;
    return load_kubeconfig((dir_ / "config").string());
  };
  const auto config = kubeconfig(R"(      apiVersion: client.authentication.k8s.io/v1beta1
      command: bin/aws
      args: [eks, get-token]
      env: [{name: AWS_PROFILE, value: prod}]
      installHint: install the AWS CLI
)");
  ASSERT_TRUE(config) << config.error().message();
  ASSERT_TRUE(config.value().exec);
  const auto& exec = *config.value().exec;
  EXPECT_EQ(exec.user, "eks");
  EXPECT_EQ(exec.api_version, "client.authentication.k8s.io/v1beta1");
  EXPECT_EQ(exec.command, (dir_ / "bin/aws").string()) << "relative to the kubeconfig, as kubectl";
  EXPECT_EQ(exec.args, (std::vector<std::string>{"eks", "get-token"}));
  EXPECT_EQ(exec.env, (std::vector<std::pair<std::string, std::string>>{{"AWS_PROFILE", "prod"}}));
  EXPECT_EQ(exec.install_hint, "install the AWS CLI");
  EXPECT_EQ(kubeconfig("      apiVersion: client.authentication.k8s.io/v1\n      command: aws\n").value().exec->command,
            "aws")
      << "a bare name is looked up in PATH";
  EXPECT_FALSE(kubeconfig("      apiVersion: client.authentication.k8s.io/v1alpha1\n      command: aws\n"));
  EXPECT_FALSE(kubeconfig("      apiVersion: client.authentication.k8s.io/v1\n"));
}

}  // namespace
}  // namespace ferry::kube
