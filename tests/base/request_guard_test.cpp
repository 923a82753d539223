#include "kiln/http/request_guard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln::http {
namespace {

using ::testing::HasSubstr;

// The verdict for a request from `origin` to a loopback-bound server with default options.
GuardVerdict from_origin(const std::string& origin, const HttpGuardOptions& options = {}) {
  return check_http_request(options, origin, std::string("127.0.0.1:8765"), std::nullopt);
}

TEST(IsLoopbackOrigin, AcceptsLocalhostAndLoopbackAddressesOnAnyPort) {
  EXPECT_TRUE(is_loopback_origin("http://localhost:3000"));
  EXPECT_TRUE(is_loopback_origin("http://localhost"));
  EXPECT_TRUE(is_loopback_origin("http://127.0.0.1"));
  EXPECT_TRUE(is_loopback_origin("https://127.0.0.1:443"));
  EXPECT_TRUE(is_loopback_origin("https://[::1]:8080"));
  EXPECT_TRUE(is_loopback_origin("HTTP://LOCALHOST:1"));
}

TEST(IsLoopbackOrigin, RejectsForeignOriginsAndOtherSchemes) {
  EXPECT_FALSE(is_loopback_origin("http://evil.example"));
  EXPECT_FALSE(is_loopback_origin("http://localhost.evil.example"));
  EXPECT_FALSE(is_loopback_origin("http://10.0.0.1:8765"));
  EXPECT_FALSE(is_loopback_origin("file://localhost"));
  EXPECT_FALSE(is_loopback_origin("localhost:3000"));
  EXPECT_FALSE(is_loopback_origin("http://localhost:3000/path"));
  EXPECT_FALSE(is_loopback_origin("null"));
}

// A DNS name that starts with "127." is still a name an attacker can point
// anywhere (DNS rebinding); only the numeric 127.0.0.0/8 addresses are loopback.
TEST(IsLoopbackOrigin, RejectsDnsNamesThatStartWith127) {
  EXPECT_FALSE(is_loopback_origin("http://127.0.0.1.evil.example"));
  EXPECT_FALSE(is_loopback_origin("http://127.evil.example:8765"));
}

TEST(IsLoopbackHost, AcceptsLoopbackNamesWithOrWithoutPort) {
  EXPECT_TRUE(is_loopback_host("localhost"));
  EXPECT_TRUE(is_loopback_host("localhost:8765"));
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("127.0.0.2:80"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_TRUE(is_loopback_host("[::1]:8765"));
  EXPECT_FALSE(is_loopback_host("0.0.0.0"));
  EXPECT_FALSE(is_loopback_host("10.0.0.1:9"));
  EXPECT_FALSE(is_loopback_host("example.com"));
}

TEST(IsLoopbackHost, RejectsDnsNamesThatStartWith127) {
  EXPECT_FALSE(is_loopback_host("127.0.0.1.nip.example"));
  EXPECT_FALSE(is_loopback_host("127.attacker.example:8765"));
}

TEST(CheckHttpRequest, AllowsLoopbackOrigins) {
  for (const char* origin : {"http://localhost:3000", "http://127.0.0.1", "https://[::1]:8080"})
    EXPECT_EQ(from_origin(origin).status, 0) << origin;
}

TEST(CheckHttpRequest, AllowsARequestWithoutOrigin) {
  EXPECT_EQ(
      check_http_request({}, std::nullopt, std::string("localhost:8765"), std::nullopt).status, 0);
  EXPECT_EQ(check_http_request({}, std::string(""), std::nullopt, std::nullopt).status, 0);
}

TEST(CheckHttpRequest, ForeignOriginIsForbiddenWithAHint) {
  GuardVerdict verdict = from_origin("http://evil.example");
  EXPECT_EQ(verdict.status, 403);
  EXPECT_THAT(verdict.message, HasSubstr("http://evil.example"));
  EXPECT_THAT(verdict.message, HasSubstr("--allow-origin"));
}

TEST(CheckHttpRequest, NullOriginIsForbidden) {
  GuardVerdict verdict = from_origin("null");
  EXPECT_EQ(verdict.status, 403);
  EXPECT_THAT(verdict.message, HasSubstr("null"));
}

TEST(CheckHttpRequest, AllowListedOriginIsAllowed) {
  HttpGuardOptions options;
  options.allowed_origins = {"https://inspector.example"};
  EXPECT_EQ(from_origin("https://inspector.example", options).status, 0);
  EXPECT_EQ(from_origin("https://other.example", options).status, 403);
  EXPECT_EQ(from_origin("https://inspector.example:444", options).status, 403);
}

TEST(CheckHttpRequest, NonLoopbackHostIsForbiddenOnALoopbackBind) {
  GuardVerdict verdict =
      check_http_request({}, std::nullopt, std::string("evil.example:8765"), std::nullopt);
  EXPECT_EQ(verdict.status, 403);
  EXPECT_THAT(verdict.message, HasSubstr("evil.example"));
}

TEST(CheckHttpRequest, AnyHostIsAllowedOnANonLoopbackBind) {
  HttpGuardOptions options;
  options.loopback_bind = false;
  EXPECT_EQ(check_http_request(options, std::nullopt, std::string("gpu-box.lan:8765"), std::nullopt)
                .status,
            0);
}

TEST(CheckHttpRequest, MissingBearerTokenIsUnauthorized) {
  HttpGuardOptions options;
  options.bearer_token = "0123456789abcdef";
  GuardVerdict verdict =
      check_http_request(options, std::nullopt, std::string("127.0.0.1"), std::nullopt);
  EXPECT_EQ(verdict.status, 401);
  EXPECT_THAT(verdict.message, HasSubstr("Authorization: Bearer"));
}

TEST(CheckHttpRequest, WrongBearerTokenIsUnauthorized) {
  HttpGuardOptions options;
  options.bearer_token = "0123456789abcdef";
  for (const char* header :
       {"Bearer 0123456789abcdeX", "Bearer 0123456789abcde", "Bearer ", "Basic 0123456789abcdef",
        "0123456789abcdef", "Bearer 0123456789abcdef0"}) {
    EXPECT_EQ(check_http_request(options, std::nullopt, std::nullopt, std::string(header)).status,
              401)
        << header;
  }
}

TEST(CheckHttpRequest, RightBearerTokenIsAllowed) {
  HttpGuardOptions options;
  options.bearer_token = "0123456789abcdef";
  EXPECT_EQ(check_http_request(options, std::nullopt, std::string("127.0.0.1"),
                               std::string("Bearer 0123456789abcdef"))
                .status,
            0);
}

TEST(CheckHttpRequest, ForbiddenOriginIsRefusedEvenWithTheRightToken) {
  HttpGuardOptions options;
  options.bearer_token = "0123456789abcdef";
  EXPECT_EQ(check_http_request(options, std::string("http://evil.example"), std::nullopt,
                               std::string("Bearer 0123456789abcdef"))
                .status,
            403);
}

TEST(TokensEqual, ComparesWholeStrings) {
  EXPECT_TRUE(tokens_equal("secret", "secret"));
  EXPECT_TRUE(tokens_equal("", ""));
  EXPECT_FALSE(tokens_equal("secret", "secreT"));
  EXPECT_FALSE(tokens_equal("secret", "secret2"));
  EXPECT_FALSE(tokens_equal("secret2", "secret"));
  EXPECT_FALSE(tokens_equal("", "x"));
  EXPECT_FALSE(tokens_equal(std::string("a\0b", 3), std::string("a\0c", 3)));
}

}  // namespace
}  // namespace kiln::http
