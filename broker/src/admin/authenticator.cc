#include "admin/authenticator.h"

#include <algorithm>

#include "base/log.h"
#include "security/errc.h"
#include "security/scram_credential.h"

namespace ferry::admin {
namespace {

prometheus::Counter& counter(prometheus::Registry& registry, const authenticator_names& names, const char* method,
                             const char* result) {
  return prometheus::BuildCounter()
      .Name(names.metric)
      .Help("Authentications on the " + names.listener + ", by method (basic, mtls) and result (success, failure)")
      .Register(registry)
      .Add({{"method", method}, {"result", result}});
}

// The credentials of an "Authorization: Basic <base64(user:password)>" header (RFC 7617); the scheme is
// case-insensitive.
struct basic_credentials {
  std::string user;
  std::string password;
};
std::optional<basic_credentials> parse_basic(std::string_view authorization) {
  constexpr std::string_view scheme = "basic ";
  if (authorization.size() < scheme.size() ||
      !std::equal(scheme.begin(), scheme.end(), authorization.begin(),
                  [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); }))
    return std::nullopt;
  auto encoded = authorization.substr(scheme.size());
  encoded.remove_prefix(std::min(encoded.find_first_not_of(' '), encoded.size()));
  auto decoded = security::base64_decode(encoded);
  if (!decoded) return std::nullopt;
  const auto colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  return basic_credentials{decoded->substr(0, colon), decoded->substr(colon + 1)};
}

}  // namespace

security::tls_result<std::unique_ptr<authenticator>> authenticator::create(const config::admin_api_security& settings,
                                                                           const security::credential_source& users,
                                                                           security::password_checker& checker,
                                                                           prometheus::Registry& registry,
                                                                           const authenticator_names& names) {
  std::optional<security::principal_mapper> principals;
  if (settings.mtls) {
    auto parsed = security::principal_mapper::parse(settings.tls.principal_mapping_rules, names.setting_prefix);
    if (!parsed) return parsed.error();
    principals = std::move(parsed).value();
  }
  return std::unique_ptr<authenticator>(
      new authenticator(settings, std::move(principals), users, checker, registry, names));
}

authenticator::authenticator(const config::admin_api_security& settings,
                             std::optional<security::principal_mapper> principals,
                             const security::credential_source& users, security::password_checker& checker,
                             prometheus::Registry& registry, const authenticator_names& names)
    : basic_(settings.basic),
      exempt_paths_(settings.exempt_paths),
      principals_(std::move(principals)),
      users_(users),
      checker_(checker),
      basic_successes_(counter(registry, names, "basic", "success")),
      basic_failures_(counter(registry, names, "basic", "failure")),
      mtls_successes_(counter(registry, names, "mtls", "success")),
      mtls_failures_(counter(registry, names, "mtls", "failure")) {}

bool authenticator::protects(std::string_view path) const {
  if (!basic_ && !principals_) return false;
  return std::find(exempt_paths_.begin(), exempt_paths_.end(), path) == exempt_paths_.end();
}

boost::asio::awaitable<authentication> authenticator::authenticate(request_credentials credentials) {
  if (principals_ && credentials.certificate != nullptr) {
    const auto principal = certificate_principal(credentials.certificate, credentials.client);
    if (principal) co_return authentication{authentication::outcome::allowed, *principal};
  }
  // Without credentials the answer is the challenge itself, not a failed login.
  if (basic_ && !credentials.authorization.empty())
    co_return co_await check_basic(credentials.authorization, credentials.client);
  co_return authentication{};
}

std::optional<std::string> authenticator::certificate_principal(const X509* certificate, std::string_view client) {
  const auto subject = security::distinguished_name(certificate);
  if (auto principal = principals_->map(subject)) {
    mtls_successes_.Increment();
    FERRY_LOG(debug, "admin") << "admin API client " << client << " authenticated as " << *principal
                              << " by its certificate";
    return principal;
  }
  mtls_failures_.Increment();
  FERRY_LOG_LIMITED(warn, "admin", 1000) << "admin API client " << client << ": no admin.ssl.principal.mapping.rules "
                                         << "rule maps its certificate's subject " << log::client_text(subject);
  return std::nullopt;
}

boost::asio::awaitable<authentication> authenticator::check_basic(std::string_view authorization,
                                                                  std::string_view client) {
  const auto refuse = [&](std::string_view user, std::string_view reason) {
    basic_failures_.Increment();
    FERRY_LOG_LIMITED(warn, "admin", 1000) << "failed admin API authentication (basic) of user '"
                                           << log::client_text(user) << "' from " << client << ": " << reason;
    return authentication{authentication::outcome::refused, {}, true};
  };
  auto presented = parse_basic(authorization);
  if (!presented) co_return refuse("", "the Authorization header is not Basic credentials");
  auto mechanism = security::scram_mechanism::sha512;
  auto credential = users_.find(presented->user, mechanism);
  if (!credential) {
    mechanism = security::scram_mechanism::sha256;
    credential = users_.find(presented->user, mechanism);
  }
  if (!credential) co_return refuse(presented->user, "no such user (or no SCRAM credential)");
  const auto matches = co_await checker_.check(mechanism, std::move(*credential), std::move(presented->password));
  if (!matches && matches.error() == security::errc::busy) {
    FERRY_LOG_LIMITED(warn, "admin", 1000) << "admin API login of user '" << log::client_text(presented->user)
                                           << "' from " << client << " refused: too many password checks waiting";
    co_return authentication{authentication::outcome::busy};
  }
  if (!matches) co_return refuse(presented->user, matches.error().message());
  if (!matches.value()) co_return refuse(presented->user, "wrong password");
  basic_successes_.Increment();
  FERRY_LOG(debug, "admin") << "admin API client " << client << " authenticated as "
                            << log::client_text(presented->user) << " (basic)";
  co_return authentication{authentication::outcome::allowed, std::move(presented->user)};
}

}  // namespace ferry::admin
