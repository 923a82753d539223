// host_conversation.h: the verifier takes one right answer per request from its candidate host,
// and a host that answers wrongly once is never believed again.
#include "kiln/worker/host_conversation.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace kiln::worker {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// A verifier's conversation and the raw descriptor of the "host" end.
struct Link {
  HostConversation verifier;
  int host = -1;
  explicit Link(std::function<std::string()> end = {}) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    verifier = HostConversation(MessageChannel(fds[0]), std::move(end));
    host = fds[1];
  }
  ~Link() {
    if (host >= 0) ::close(host);
  }
  void answer(const std::string& lines) {
    ASSERT_EQ(::write(host, lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
  }
};

const json kCall = {{"op", "call"}, {"seq", 3}};

TEST(HostConversation, TakesTheAnswerToTheRequest) {
  Link link;
  link.answer("{\"op\":\"called\",\"seq\":3,\"span_us\":1}\n");
  auto got = link.verifier.exchange(kCall, "called", 1000ms);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ((*got)["span_us"], 1);
  EXPECT_FALSE(link.verifier.broken());
}

TEST(HostConversation, AnAnswerOutOfTurnBreaksItForGood) {
  Link link;
  link.answer("{\"event\":\"result\",\"result\":{\"status\":\"passed\"}}\n");
  auto got = link.verifier.exchange(kCall, "called", 1000ms);
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message.find("out of turn"), std::string::npos);
  // A right answer afterwards is not believed.
  link.answer("{\"op\":\"called\",\"seq\":4}\n");
  EXPECT_FALSE(link.verifier.exchange({{"op", "call"}, {"seq", 4}}, "called", 1000ms));
  EXPECT_TRUE(link.verifier.broken());
}

TEST(HostConversation, TheAnswerToAnotherCallIsABreach) {
  Link link;
  link.answer("{\"op\":\"called\",\"seq\":2}\n");
  auto got = link.verifier.exchange(kCall, "called", 1000ms);
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message.find("answer to another call"), std::string::npos);
}

TEST(HostConversation, ASecondAnswerIsABreach) {
  Link link;
  link.answer("{\"op\":\"called\",\"seq\":3}\n{\"op\":\"called\",\"seq\":3}\n");
  auto got = link.verifier.exchange(kCall, "called", 1000ms);
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message.find("second answer"), std::string::npos);
}

TEST(HostConversation, AnInterimAnswerComesFirstAndItsStepRunsBeforeTheAnswerIsRead) {
  Link link;
  link.answer("{\"op\":\"ran\",\"seq\":3}\n{\"op\":\"called\",\"seq\":3,\"span_us\":2}\n");
  int steps = 0;
  auto got = link.verifier.exchange(kCall, {"ran", [&] { ++steps; }}, "called", 1000ms);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(steps, 1);
  EXPECT_EQ((*got)["span_us"], 2);
  EXPECT_FALSE(link.verifier.broken());
}

TEST(HostConversation, AnAnswerWithoutItsInterimAnswerIsABreachAndRunsNoStep) {
  Link link;
  link.answer("{\"op\":\"called\",\"seq\":3}\n");
  int steps = 0;
  auto got = link.verifier.exchange(kCall, {"ran", [&] { ++steps; }}, "called", 1000ms);
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message.find("expected \"ran\""), std::string::npos);
  EXPECT_EQ(steps, 0);
  EXPECT_TRUE(link.verifier.broken());
}

TEST(HostConversation, AnInterimAnswerForAnotherCallOrTwiceIsABreach) {
  Link other;
  other.answer("{\"op\":\"ran\",\"seq\":2}\n{\"op\":\"called\",\"seq\":3}\n");
  auto got = other.verifier.exchange(kCall, {"ran", {}}, "called", 1000ms);
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message.find("answer to another call"), std::string::npos);

  Link twice;
  twice.answer("{\"op\":\"ran\",\"seq\":3}\n{\"op\":\"ran\",\"seq\":3}\n");
  got = twice.verifier.exchange(kCall, {"ran", {}}, "called", 1000ms);
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message.find("out of turn"), std::string::npos);
}

TEST(HostConversation, SilenceAfterTheInterimAnswerIsABreach) {
  Link link;
  link.answer("{\"op\":\"ran\",\"seq\":3}\n");
  int steps = 0;
  auto got = link.verifier.exchange(kCall, {"ran", [&] { ++steps; }}, "called", 50ms);
  ASSERT_FALSE(got);
  EXPECT_EQ(steps, 1);
  EXPECT_NE(got.error().message.find("waited for its \"called\" answer"), std::string::npos);
}

TEST(HostConversation, SilenceAndAClosedChannelAreBreachesThatSayWhat) {
  Link quiet;
  auto late = quiet.verifier.exchange(kCall, "called", 50ms);
  ASSERT_FALSE(late);
  EXPECT_NE(late.error().message.find("no answer within 50 ms"), std::string::npos);

  Link gone([] { return std::string("exited with status 0"); });
  ::close(gone.host);
  gone.host = -1;
  auto closed = gone.verifier.exchange(kCall, "called", 1000ms);
  ASSERT_FALSE(closed);
  EXPECT_NE(closed.error().message.find("exited with status 0"), std::string::npos)
      << closed.error().message;
}

host::CallRequest request() {
  host::CallRequest r;
  r.seq = 7;
  r.nonce = "00ff";
  return r;
}

host::CallReply reply() {
  host::CallReply r;
  r.seq = 7;
  r.nonce = "00ff";
  r.span_us = 90;
  r.event_us = 95;
  return r;
}

TEST(HostConversation, ACallAnswerMustCarryTheNonceAndFitTheVerifiersClock) {
  EXPECT_EQ(breach_in_call_reply(request(), reply(), 150), "");
  host::CallReply forged = reply();
  forged.nonce = "";
  EXPECT_NE(breach_in_call_reply(request(), forged, 150).find("nonce"), std::string::npos);
  // More GPU time than the round trip the verifier saw is impossible.
  EXPECT_NE(breach_in_call_reply(request(), reply(), 80).find("verifier's clock"),
            std::string::npos);
  host::CallReply broke = reply();
  broke.harness_error = "cudaIpcOpenMemHandle failed";
  EXPECT_NE(breach_in_call_reply(request(), broke, 150).find("could not run the call"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::worker
