// event_stream.h: one JSON object per line, in the protocol's shapes.
#include "kiln/worker/event_stream.h"

#include <gtest/gtest.h>

#include <sstream>

namespace kiln::worker {
namespace {

std::vector<nlohmann::json> lines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(EventStream, WritesProtocolEvents) {
  std::ostringstream out;
  EventStream events(out);
  events.stage("verify");
  events.progress("4096x4096x4096", 2, 10, "timing");
  events.log("warning", "clock drop");
  events.result({{"status", "passed"}});
  const auto parsed = lines(out.str());
  ASSERT_EQ(parsed.size(), 4u);
  EXPECT_EQ(parsed[0], (nlohmann::json{{"event", "stage"}, {"stage", "verify"}}));
  EXPECT_EQ(parsed[1]["index"], 2);
  EXPECT_EQ(parsed[1]["total"], 10);
  EXPECT_EQ(parsed[2]["level"], "warning");
  EXPECT_EQ(parsed[3]["event"], "result");
  EXPECT_EQ(parsed[3]["result"]["status"], "passed");
  EXPECT_EQ(events.last_stage(), "verify");
}

TEST(EventStream, InvalidUtf8NeverBreaksALine) {
  std::ostringstream out;
  EventStream events(out);
  events.log("error", std::string("nvcc said \xff\xfe"));
  const auto parsed = lines(out.str());
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed[0]["event"], "log");
}

}  // namespace
}  // namespace kiln::worker
