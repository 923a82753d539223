#include "kiln/mcp/http_exchange.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>

#include "kiln/mcp/json_rpc.h"

namespace kiln::mcp {
namespace {

using namespace std::chrono_literals;

json request(int id, const std::string& method = "ping") {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
}

json notification(const std::string& method) { return make_notification(method, json::object()); }

// A blocked waiter cannot be unblocked from outside, so a wait that never ends
// fails the whole run at once rather than hanging until the ctest timeout.
[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "FATAL: %s\n", what);
  std::fflush(stderr);
  std::_Exit(1);
}

Exchange::FirstEvent wait_first_within(Exchange& exchange, std::chrono::milliseconds timeout = 5s) {
  auto future = std::async(std::launch::async, [&exchange] { return exchange.wait_first(); });
  if (future.wait_for(timeout) != std::future_status::ready)
    die("wait_first did not return in time");
  return future.get();
}

// Every event the stream would send, in order.
std::vector<json> drain(Exchange& exchange) {
  std::vector<json> events;
  auto future = std::async(std::launch::async, [&] {
    json event;
    while (exchange.next_event(event)) events.push_back(event);
  });
  if (future.wait_for(5s) != std::future_status::ready)
    die("next_event never reported the end of the stream");
  return events;
}

TEST(Exchange, CollectsTheKeysOfRequestsOnly) {
  Exchange exchange(json::array({request(1), request(2), notification("notifications/initialized"),
                                 json{{"jsonrpc", "2.0"}, {"id", 9}, {"result", json::object()}}}),
                    true);
  EXPECT_TRUE(exchange.is_batch());
  EXPECT_TRUE(exchange.has_requests());
  EXPECT_EQ(exchange.pending_keys(), (std::set<std::string>{id_key(1), id_key(2)}));
}

TEST(Exchange, JsonModeWhenTheResponseComesFirst) {
  Exchange exchange(request(1), true);
  exchange.finish(id_key(1), make_result(1, json::object()));
  EXPECT_EQ(wait_first_within(exchange), Exchange::FirstEvent::kAllResponses);
  EXPECT_EQ(exchange.json_body(), make_result(1, json::object()));
}

TEST(Exchange, JsonModeWhenTheResponseArrivesFromAnotherThread) {
  Exchange exchange(request(1), true);
  std::thread worker([&] {
    std::this_thread::sleep_for(20ms);
    exchange.finish(id_key(1), make_result(1, json{{"late", true}}));
  });
  EXPECT_EQ(wait_first_within(exchange), Exchange::FirstEvent::kAllResponses);
  worker.join();
  EXPECT_EQ(exchange.json_body()["result"]["late"], true);
}

TEST(Exchange, StreamModeWhenANotificationComesFirst) {
  Exchange exchange(request(1, "tools/call"), true);
  json progress =
      make_notification("notifications/progress", json{{"progressToken", "t"}, {"progress", 1}});
  exchange.push_notification(progress);
  EXPECT_EQ(wait_first_within(exchange), Exchange::FirstEvent::kStream);
  exchange.finish(id_key(1), make_result(1, json::object()));
  std::vector<json> events = drain(exchange);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0], progress);
  EXPECT_EQ(events[1], make_result(1, json::object()));
}

TEST(Exchange, StreamEndsOnlyAfterTheLastResponse) {
  Exchange exchange(request(1, "tools/call"), true);
  exchange.push_notification(notification("notifications/message"));
  ASSERT_EQ(wait_first_within(exchange), Exchange::FirstEvent::kStream);
  std::thread worker([&] {
    std::this_thread::sleep_for(20ms);
    exchange.push_notification(notification("notifications/progress"));
    exchange.finish(id_key(1), make_result(1, json::object()));
  });
  std::vector<json> events = drain(exchange);
  worker.join();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2]["id"], 1);
}

TEST(Exchange, BatchCollectsAllResponsesIntoAnArray) {
  Exchange exchange(
      json::array({request(1), request(2), notification("notifications/initialized")}), true);
  exchange.finish(id_key(2), make_result(2, json::object()));
  exchange.finish(id_key(1), make_result(1, json::object()));
  EXPECT_EQ(wait_first_within(exchange), Exchange::FirstEvent::kAllResponses);
  json body = exchange.json_body();
  ASSERT_TRUE(body.is_array());
  ASSERT_EQ(body.size(), 2u);
  EXPECT_EQ(body[0]["id"], 2);
  EXPECT_EQ(body[1]["id"], 1);
}

TEST(Exchange, BatchWaitsForEveryRequest) {
  Exchange exchange(json::array({request(1), request(2)}), true);
  exchange.finish(id_key(1), make_result(1, json::object()));
  auto future = std::async(std::launch::async, [&] { return exchange.wait_first(); });
  EXPECT_EQ(future.wait_for(50ms), std::future_status::timeout);
  exchange.finish(id_key(2), make_result(2, json::object()));
  ASSERT_EQ(future.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(future.get(), Exchange::FirstEvent::kAllResponses);
  EXPECT_EQ(exchange.json_body().size(), 2u);
}

TEST(Exchange, CancelledRequestWithNoResponseIsNothing) {
  Exchange exchange(request(4, "tools/call"), true);
  exchange.finish(id_key(4), std::nullopt);
  EXPECT_EQ(wait_first_within(exchange), Exchange::FirstEvent::kNothing);
  EXPECT_TRUE(exchange.json_body().is_null());
}

TEST(Exchange, NotificationsOnlyBodyIsNothingAtOnce) {
  Exchange exchange(notification("notifications/initialized"), true);
  EXPECT_FALSE(exchange.has_requests());
  EXPECT_FALSE(exchange.is_batch());
  EXPECT_EQ(wait_first_within(exchange), Exchange::FirstEvent::kNothing);
}

TEST(Exchange, RejectionOfAnUnreadableMessageIsReturnedAsJson) {
  Exchange exchange(json{{"jsonrpc", "1.0"}}, true);
  exchange.finish(
      "", make_error_response(nullptr, RpcError{error_code::kInvalidRequest, "bad", nullptr}));
  EXPECT_EQ(wait_first_within(exchange), Exchange::FirstEvent::kAllResponses);
  EXPECT_EQ(exchange.json_body()["error"]["code"], error_code::kInvalidRequest);
}

TEST(Exchange, NotificationsAreDroppedWhenSseIsNotAllowed) {
  Exchange exchange(request(1, "tools/call"), /*sse_allowed=*/false);
  exchange.push_notification(notification("notifications/progress"));
  exchange.finish(id_key(1), make_result(1, json::object()));
  EXPECT_EQ(wait_first_within(exchange), Exchange::FirstEvent::kAllResponses);
  EXPECT_EQ(exchange.json_body(), make_result(1, json::object()));
  std::vector<json> events = drain(exchange);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["id"], 1);
}

}  // namespace
}  // namespace kiln::mcp
