#include "kiln/http/listener.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <future>
#include <thread>

namespace kiln::http {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

constexpr const char* kToken = "a-token-of-twenty-chars";

// Serves `listener` on a thread of its own until stopped; the future is ready when serve()
// has returned.
std::future<void> serve_async(Listener& listener) {
  return std::async(std::launch::async, [&listener] { listener.serve(); });
}

bool answers(int port) {
  httplib::Client client("127.0.0.1", port);
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (client.Get("/")) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(Listener, BindsAFreePortWhenAskedForPortZero) {
  Listener listener(ListenerOptions{});
  auto port = listener.bind();
  ASSERT_TRUE(port.ok()) << port.error().message;
  EXPECT_GT(*port, 0);
  EXPECT_EQ(listener.port(), *port);
}

TEST(Listener, RefusesANonLoopbackBindWithoutATokenAndSaysWhatToDo) {
  ListenerOptions options;
  options.host = "0.0.0.0";
  options.token_advice = "pass --token-file FILE";
  Listener listener(options);
  EXPECT_FALSE(listener.check_address().ok());
  auto port = listener.bind();
  ASSERT_FALSE(port.ok());
  EXPECT_THAT(port.error().message, HasSubstr("refusing to listen on 0.0.0.0"));
  EXPECT_THAT(port.error().message, HasSubstr("without a bearer token: pass --token-file FILE"));

  options.guard.bearer_token = kToken;
  Listener guarded(options);
  EXPECT_TRUE(guarded.check_address().ok());
  EXPECT_TRUE(guarded.bind().ok());
}

TEST(Listener, NamesTheCallersFlagWhenThePortIsInUse) {
  Listener first(ListenerOptions{});
  auto port = first.bind();
  ASSERT_TRUE(port.ok()) << port.error().message;
  ListenerOptions options;
  options.port = *port;
  options.address_flag = "--http HOST:PORT";
  Listener second(options);
  auto taken = second.bind();
  ASSERT_FALSE(taken.ok());
  EXPECT_THAT(taken.error().message,
              HasSubstr("cannot listen on 127.0.0.1:" + std::to_string(*port) + " (in use"));
  EXPECT_THAT(taken.error().message, HasSubstr("pick another with --http HOST:PORT"));
}

TEST(Listener, StopBeforeServeMakesServeReturnAtOnce) {
  Listener listener(ListenerOptions{});
  ASSERT_TRUE(listener.bind().ok());
  listener.stop();
  auto served = serve_async(listener);
  EXPECT_EQ(served.wait_for(5s), std::future_status::ready);
}

TEST(Listener, StopThatRacesStartUpIsNotLost) {
  for (int i = 0; i < 20; ++i) {
    Listener listener(ListenerOptions{});
    ASSERT_TRUE(listener.bind().ok());
    auto served = serve_async(listener);
    listener.stop();
    ASSERT_EQ(served.wait_for(10s), std::future_status::ready) << "round " << i;
  }
}

TEST(Listener, StopEndsAServeThatIsAnswering) {
  Listener listener(ListenerOptions{});
  auto port = listener.bind();
  ASSERT_TRUE(port.ok());
  auto served = serve_async(listener);
  ASSERT_TRUE(answers(*port));
  listener.stop();
  EXPECT_EQ(served.wait_for(5s), std::future_status::ready);
}

class GuardedListenerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ListenerOptions options;
    options.guard.bearer_token = kToken;
    options.max_request_bytes = 1024;
    listener_ = std::make_unique<Listener>(options);
    auto handler = [this](const httplib::Request& q, httplib::Response& r) {
      GuardVerdict verdict = listener_->guard(q, r);
      r.set_content(verdict.status == 0 ? "welcome" : verdict.message, "text/plain");
    };
    listener_->server().Get("/x", handler);
    listener_->server().Post("/x", handler);
    auto port = listener_->bind();
    ASSERT_TRUE(port.ok()) << port.error().message;
    port_ = *port;
    served_ = serve_async(*listener_);
  }
  void TearDown() override {
    listener_->stop();
    if (served_.valid()) served_.wait();
  }

  httplib::Client client() { return httplib::Client("127.0.0.1", port_); }

  std::unique_ptr<Listener> listener_;
  int port_ = 0;
  std::future<void> served_;
};

TEST_F(GuardedListenerTest, RefusesARequestWithoutTheTokenWithWwwAuthenticate) {
  auto response = client().Get("/x");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 401);
  EXPECT_EQ(response->get_header_value("WWW-Authenticate"), "Bearer");
  EXPECT_THAT(response->body, HasSubstr("Authorization: Bearer"));
}

TEST_F(GuardedListenerTest, AdmitsARequestWithTheToken) {
  auto response = client().Get("/x", {{"Authorization", std::string("Bearer ") + kToken}});
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "welcome");
  EXPECT_FALSE(response->has_header("WWW-Authenticate"));
}

TEST_F(GuardedListenerTest, RefusesAForeignOriginEvenWithTheToken) {
  auto response = client().Get("/x", {{"Authorization", std::string("Bearer ") + kToken},
                                      {"Origin", "https://evil.example"}});
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 403);
  EXPECT_THAT(response->body, HasSubstr("--allow-origin https://evil.example"));
}

TEST_F(GuardedListenerTest, AnswersAnOversizedBodyWith413) {
  auto response = client().Post("/x", {{"Authorization", std::string("Bearer ") + kToken}},
                                std::string(4096, 'x'), "text/plain");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 413);
}

TEST(RequestHeader, IsNulloptWhenAbsent) {
  httplib::Request request;
  request.headers.emplace("Origin", "http://localhost");
  EXPECT_EQ(request_header(request, "Origin"), "http://localhost");
  EXPECT_EQ(request_header(request, "Host"), std::nullopt);
}

TEST(ExceptionText, NamesWhatWasThrown) {
  EXPECT_EQ(exception_text(std::make_exception_ptr(std::runtime_error("disk full"))), "disk full");
  EXPECT_EQ(exception_text(std::make_exception_ptr(42)), "internal error");
  EXPECT_EQ(exception_text(nullptr), "internal error");
}

}  // namespace
}  // namespace kiln::http
