// message_channel.h: one JSON object per line, bounded, with a timeout, and a closed peer told
// apart from a slow one; the verifier reads its candidate host through it.
#include "kiln/worker/message_channel.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace kiln::worker {
namespace {

using namespace std::chrono_literals;

struct Pair {
  int a = -1;
  int b = -1;
  Pair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    a = fds[0];
    b = fds[1];
  }
};

void write_raw(int fd, const std::string& text) {
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
}

TEST(MessageChannel, CarriesObjectsBothWays) {
  Pair p;
  MessageChannel left(p.a);
  MessageChannel right(p.b);
  ASSERT_TRUE(left.send({{"op", "call"}, {"seq", 7}}));
  auto got = right.receive(1000ms);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ((*got)["seq"], 7);
  ASSERT_TRUE(right.send({{"op", "called"}}));
  auto back = left.receive(1000ms);
  ASSERT_TRUE(back);
  EXPECT_EQ((*back)["op"], "called");
}

TEST(MessageChannel, TwoLinesInOneWriteAreTwoMessagesAndTheSecondIsSeenWaiting) {
  Pair p;
  MessageChannel reader(p.b);
  write_raw(p.a, "{\"n\":1}\n{\"n\":2}\n");
  auto first = reader.receive(1000ms);
  ASSERT_TRUE(first);
  EXPECT_EQ((*first)["n"], 1);
  EXPECT_TRUE(reader.has_buffered_line());
  auto second = reader.receive(1000ms);
  ASSERT_TRUE(second);
  EXPECT_EQ((*second)["n"], 2);
  EXPECT_FALSE(reader.has_buffered_line());
  ::close(p.a);
}

TEST(MessageChannel, ALineThatIsNotOneObjectIsAnError) {
  Pair p;
  MessageChannel reader(p.b);
  write_raw(p.a, "[1,2]\nnot json\n");
  auto array = reader.receive(1000ms);
  ASSERT_FALSE(array);
  EXPECT_NE(array.error().message.find("not one JSON object"), std::string::npos);
  EXPECT_FALSE(reader.receive(1000ms));
  ::close(p.a);
}

TEST(MessageChannel, SilenceTimesOutWithoutClosing) {
  Pair p;
  MessageChannel reader(p.b);
  auto got = reader.receive(50ms);
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message.find("no answer within 50 ms"), std::string::npos);
  EXPECT_FALSE(reader.closed());
  ::close(p.a);
}

TEST(MessageChannel, APeerThatHasGoneIsClosed) {
  Pair p;
  MessageChannel reader(p.b);
  write_raw(p.a, "{\"half\":");
  ::close(p.a);
  auto got = reader.receive(1000ms);
  ASSERT_FALSE(got);
  EXPECT_TRUE(reader.closed());
  EXPECT_NE(got.error().message.find("closed"), std::string::npos);
  EXPECT_FALSE(reader.send({{"op", "x"}}));
}

TEST(MessageChannel, AMessageOverTheBoundIsRefused) {
  Pair p;
  MessageChannel reader(p.b, 1024);
  write_raw(p.a, "{\"pad\":\"" + std::string(4096, 'x') + "\"}\n");
  auto got = reader.receive(1000ms);
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message.find("1024"), std::string::npos);
  ::close(p.a);
}

}  // namespace
}  // namespace kiln::worker
