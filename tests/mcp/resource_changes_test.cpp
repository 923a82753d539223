// resources/subscribe of the 2025 revisions: a session hears of the changes of the resources it
// subscribed to (notifications/resources/updated), from a tool's CallContext::resource_changed
// or straight from the registry's ResourceChanges.
#include "kiln/mcp/resource_changes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/mcp/session.h"
#include "recording_outbox.h"
#include "test_server.h"

namespace kiln::mcp {
namespace {

using namespace std::chrono_literals;

TEST(ResourceChanges, EveryListenerHearsOfAChangeUntilItIsRemoved) {
  ResourceChanges changes;
  std::vector<std::string> first, second;
  const uint64_t a = changes.add_listener([&](const std::string& uri) { first.push_back(uri); });
  changes.add_listener([&](const std::string& uri) { second.push_back(uri); });
  changes.changed("kiln://frontier");
  changes.remove_listener(a);
  changes.changed("kiln://task");
  EXPECT_EQ(first, std::vector<std::string>{"kiln://frontier"});
  EXPECT_EQ(second, (std::vector<std::string>{"kiln://frontier", "kiln://task"}));
  changes.remove_listener(12345);  // unknown: nothing happens
}

// touch {uri}: marks a resource changed, as record_candidate does for kiln://frontier.
Tool touch_tool() {
  Tool tool = testing::make_tool("touch");
  tool.input_schema = testing::flat_object_schema({{"uri", {{"type", "string"}}}}, {"uri"});
  tool.handler = [](const json& arguments, CallContext& context) {
    context.resource_changed(arguments["uri"].get<std::string>());
    ToolResult result;
    result.text = "touched";
    return result;
  };
  return tool;
}

class SubscriptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server->tools().add(touch_tool()));
    session = open(outbox);
  }

  std::unique_ptr<Session> open(testing::RecordingOutbox& to) {
    auto opened = std::make_unique<Session>(*server, to);
    opened->handle(json{{"jsonrpc", "2.0"},
                        {"id", "init"},
                        {"method", "initialize"},
                        {"params", {{"protocolVersion", "2025-11-25"}}}});
    init_result = (*to.wait_reply("init")->response)["result"];
    opened->handle(make_notification("notifications/initialized", nullptr));
    return opened;
  }

  json exchange(Session& on, testing::RecordingOutbox& to, const json& id,
                const std::string& method, json params) {
    on.handle(
        json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
    auto reply = to.wait_reply(id);
    return reply && reply->response ? *reply->response : json();
  }
  json exchange(const json& id, const std::string& method, json params) {
    return exchange(*session, outbox, id, method, std::move(params));
  }

  std::vector<std::string> updated(testing::RecordingOutbox& from) {
    std::vector<std::string> uris;
    for (const auto& note : from.notes())
      if (note.message.value("method", "") == "notifications/resources/updated") {
        EXPECT_TRUE(note.about.is_null()) << "a session's notification, of no request";
        uris.push_back(note.message["params"]["uri"]);
      }
    return uris;
  }

  std::shared_ptr<testing::SlowProbe> probe = std::make_shared<testing::SlowProbe>();
  std::unique_ptr<Server> server = testing::make_test_server(probe);
  testing::RecordingOutbox outbox;
  json init_result;
  std::unique_ptr<Session> session;
};

TEST_F(SubscriptionTest, InitializeDeclaresSubscribeAndDiscoverDoesNot) {
  EXPECT_EQ(init_result["capabilities"]["resources"]["subscribe"], true);
  json discover = exchange(2, "server/discover",
                           {{"_meta",
                             {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                              {"io.modelcontextprotocol/clientCapabilities", json::object()}}}});
  EXPECT_EQ(discover["result"]["capabilities"]["resources"]["subscribe"], false);
}

TEST_F(SubscriptionTest, ASubscribedResourceThatChangesSendsUpdated) {
  EXPECT_EQ(exchange(2, "resources/subscribe", {{"uri", "kiln://task"}})["result"], json::object());
  server->resources().changes().changed("kiln://task");
  server->resources().changes().changed("kiln://zoo/a/kernel.cu");  // not subscribed
  EXPECT_EQ(updated(outbox), std::vector<std::string>{"kiln://task"});
}

TEST_F(SubscriptionTest, AToolMarksAResourceChangedForEverySubscribedSession) {
  testing::RecordingOutbox other_outbox, quiet_outbox;
  auto other = open(other_outbox);
  auto quiet = open(quiet_outbox);
  exchange(*other, other_outbox, 2, "resources/subscribe", {{"uri", "kiln://task"}});
  exchange(2, "resources/subscribe", {{"uri", "kiln://task"}});
  json result =
      exchange(3, "tools/call", {{"name", "touch"}, {"arguments", {{"uri", "kiln://task"}}}});
  EXPECT_EQ(result["result"]["isError"], false);
  EXPECT_EQ(updated(outbox), std::vector<std::string>{"kiln://task"});
  EXPECT_EQ(updated(other_outbox), std::vector<std::string>{"kiln://task"});
  EXPECT_TRUE(updated(quiet_outbox).empty());
}

TEST_F(SubscriptionTest, UnsubscribeStopsTheUpdates) {
  exchange(2, "resources/subscribe", {{"uri", "kiln://task"}});
  EXPECT_EQ(exchange(3, "resources/unsubscribe", {{"uri", "kiln://task"}})["result"],
            json::object());
  server->resources().changes().changed("kiln://task");
  EXPECT_TRUE(updated(outbox).empty());
  // Unsubscribing from what was never subscribed is fine too.
  EXPECT_EQ(exchange(4, "resources/unsubscribe", {{"uri", "kiln://nothing"}})["result"],
            json::object());
}

TEST_F(SubscriptionTest, SubscribingToAnUnknownResourceIsResourceNotFound) {
  json error = exchange(2, "resources/subscribe", {{"uri", "kiln://nothing"}})["error"];
  EXPECT_EQ(error["code"], error_code::kResourceNotFound);
  EXPECT_EQ(error["data"]["uri"], "kiln://nothing");
  EXPECT_EQ(exchange(3, "resources/subscribe", json::object())["error"]["code"],
            error_code::kInvalidParams);
}

TEST_F(SubscriptionTest, AnEndedSessionHearsNothing) {
  exchange(2, "resources/subscribe", {{"uri", "kiln://task"}});
  session.reset();
  server->resources().changes().changed("kiln://task");  // must not reach the ended session
  EXPECT_TRUE(updated(outbox).empty());
}

}  // namespace
}  // namespace kiln::mcp
