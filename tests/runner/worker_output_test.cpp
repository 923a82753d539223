// WorkerOutput: the protocol's event lines, and everything that makes output untrusted.
#include "kiln/runner/worker_output.h"

#include <gmock/gmock.h>

namespace kiln::runner {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

struct Collected {
  std::vector<json> events;
  WorkerOutput output{[this](json event) { events.push_back(std::move(event)); }};
};

TEST(WorkerOutput, PassesOnEventsAndKeepsTheResult) {
  Collected c;
  EXPECT_TRUE(c.output.add_line(R"({"event":"stage","stage":"build"})"));
  EXPECT_TRUE(c.output.add_line(
      R"({"event":"progress","workload":"w","index":1,"total":2,"message":"m","secret":1})"));
  EXPECT_TRUE(c.output.add_line(R"({"event":"log","level":"loud","message":"hi"})"));
  EXPECT_TRUE(c.output.add_line(""));
  EXPECT_TRUE(c.output.add_line(R"({"event":"result","result":{"status":"passed"}})"));
  ASSERT_EQ(c.events.size(), 3u);
  EXPECT_EQ(c.events[0], json({{"event", "stage"}, {"stage", "build"}}));
  EXPECT_FALSE(c.events[1].contains("secret"));
  EXPECT_EQ(c.events[1]["index"], 1);
  EXPECT_EQ(c.events[2]["level"], "info");
  EXPECT_EQ(c.output.last_stage(), "build");
  ASSERT_TRUE(c.output.result());
  EXPECT_EQ((*c.output.result())["status"], "passed");
}

TEST(WorkerOutput, StartsAtStageStart) {
  Collected c;
  EXPECT_EQ(c.output.last_stage(), "start");
}

TEST(WorkerOutput, RejectsLinesThatAreNotEvents) {
  for (const char* line : {"Segmentation fault", "[1,2]", R"({"stage":"build"})", R"({"event":3})",
                           "{\"event\":\"stage\""}) {
    Collected c;
    EXPECT_FALSE(c.output.add_line(line)) << line;
    EXPECT_THAT(c.output.problem(), HasSubstr("not a JSON event")) << line;
    EXPECT_FALSE(c.output.add_line(R"({"event":"stage","stage":"build"})")) << "stays untrusted";
  }
}

TEST(WorkerOutput, RejectsAnythingAfterTheResult) {
  Collected c;
  EXPECT_TRUE(c.output.add_line(R"({"event":"result","result":{}})"));
  EXPECT_FALSE(c.output.add_line(R"({"event":"log","message":"late"})"));
  EXPECT_THAT(c.output.problem(), HasSubstr("after its result"));
}

TEST(WorkerOutput, RejectsAResultLineWithoutAnObject) {
  Collected c;
  EXPECT_FALSE(c.output.add_line(R"({"event":"result","result":"passed"})"));
  EXPECT_FALSE(c.output.result());
}

TEST(WorkerOutput, NotesUnknownEventsWithoutFailing) {
  Collected c;
  EXPECT_TRUE(c.output.add_line(R"({"event":"heartbeat"})"));
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0]["level"], "warning");
  EXPECT_THAT(c.events[0]["message"].get<std::string>(), HasSubstr("heartbeat"));
}

TEST(WorkerOutput, ClipsLongMessages) {
  Collected c;
  EXPECT_TRUE(
      c.output.add_line(json({{"event", "log"}, {"message", std::string(10000, 'x')}}).dump()));
  EXPECT_LT(c.events[0]["message"].get<std::string>().size(), 4100u);
}

}  // namespace
}  // namespace kiln::runner
