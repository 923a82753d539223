#include "kiln/replay/recording.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln::replay {
namespace {

using ::testing::HasSubstr;

// One recorded line, as `kiln mcp --record` writes it.
std::string line(const char* dir, const std::string& message, const std::string& session = "") {
  std::string text = std::string(R"({"ts":"2026-12-02T06:00:00.000Z","dir":")") + dir + "\"";
  if (!session.empty()) text += R"(,"session":")" + session + "\"";
  return text + R"(,"message":)" + message + "}\n";
}

const std::string kInitialize =
    line(
        "in",
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})") +
    line("out", R"({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}})");

TEST(RecordingTest, PairsEachRequestWithItsAnswer) {
  const std::string text =
      kInitialize +
      line("in", R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_task"}})") +
      line("in", R"({"jsonrpc":"2.0","id":3,"method":"ping"})") +
      line("out", R"({"jsonrpc":"2.0","id":3,"result":{}})") +
      line("out", R"({"jsonrpc":"2.0","id":2,"result":{"content":[]}})");
  auto recording = parse_recording(text, "s.jsonl", ReadMode::kStrict);
  ASSERT_TRUE(recording) << recording.error().message;
  ASSERT_EQ(recording->records.size(), 6u);
  EXPECT_EQ(recording->records[2].answer, 5u);
  EXPECT_EQ(recording->records[3].answer, 4u);
  EXPECT_EQ(recording->records[5].answers, 2u);
  EXPECT_EQ(describe(recording->records[2]), "tools/call get_task");
  EXPECT_EQ(recording->records[2].line, 3u);
}

TEST(RecordingTest, RefusesALineCutInTheMiddle) {
  std::string text = kInitialize + line("in", R"({"jsonrpc":"2.0","id":2,"method":"ping"})");
  text.resize(text.size() - 12);  // the server stopped while writing the last line
  auto recording = parse_recording(text, "cut.jsonl", ReadMode::kStrict);
  ASSERT_FALSE(recording);
  EXPECT_THAT(recording.error().message, HasSubstr("cut.jsonl:3:"));
  EXPECT_THAT(recording.error().message, HasSubstr("cut short"));
}

TEST(RecordingTest, RefusesAGarbageLineNamingIt) {
  const std::string text = kInitialize + "this is not a record\n" +
                           line("in", R"({"jsonrpc":"2.0","id":2,"method":"ping"})");
  auto recording = parse_recording(text, "g.jsonl", ReadMode::kStrict);
  ASSERT_FALSE(recording);
  EXPECT_THAT(recording.error().message, HasSubstr("g.jsonl:3: the line is not valid JSON"));
}

TEST(RecordingTest, RefusesJsonThatIsNotARecord) {
  const std::string text = kInitialize + R"({"dir":"sideways","message":{}})" + "\n";
  auto recording = parse_recording(text, "r.jsonl", ReadMode::kStrict);
  ASSERT_FALSE(recording);
  EXPECT_THAT(recording.error().message,
              HasSubstr("r.jsonl:3: the line is not a recorded message"));
}

TEST(RecordingTest, RefusesAnAnswerRecordedBeforeItsRequest) {
  const std::string text = kInitialize + line("out", R"({"jsonrpc":"2.0","id":7,"result":{}})") +
                           line("in", R"({"jsonrpc":"2.0","id":7,"method":"ping"})");
  auto recording = parse_recording(text, "o.jsonl", ReadMode::kStrict);
  ASSERT_FALSE(recording);
  EXPECT_THAT(recording.error().message, HasSubstr("o.jsonl:3:"));
  EXPECT_THAT(recording.error().message, HasSubstr("before that request (line 4)"));
  EXPECT_THAT(recording.error().message, HasSubstr("out of order"));
}

TEST(RecordingTest, RefusesASecondAnswerToOneRequest) {
  const std::string text = kInitialize + line("in", R"({"jsonrpc":"2.0","id":2,"method":"ping"})") +
                           line("out", R"({"jsonrpc":"2.0","id":2,"result":{}})") +
                           line("out", R"({"jsonrpc":"2.0","id":2,"result":{}})");
  auto recording = parse_recording(text, "d.jsonl", ReadMode::kStrict);
  ASSERT_FALSE(recording);
  EXPECT_THAT(recording.error().message, HasSubstr("d.jsonl:5: a second response to request 2"));
}

TEST(RecordingTest, RefusesARevisionThisKilnDoesNotSpeak) {
  const std::string text =
      line("in", R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})") +
      line("out", R"({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2031-01-01"}})");
  auto recording = parse_recording(text, "v.jsonl", ReadMode::kStrict);
  ASSERT_FALSE(recording);
  EXPECT_THAT(recording.error().message, HasSubstr("v.jsonl:2:"));
  EXPECT_THAT(recording.error().message, HasSubstr("\"2031-01-01\""));
  EXPECT_THAT(recording.error().message, HasSubstr("2025-11-25"));
}

TEST(RecordingTest, RefusesADiscoveryOfferingNoKnownRevision) {
  const std::string text =
      line("in", R"({"jsonrpc":"2.0","id":1,"method":"server/discover"})") +
      line("out", R"({"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2031-01-01"]}})");
  auto recording = parse_recording(text, "v.jsonl", ReadMode::kStrict);
  ASSERT_FALSE(recording);
  EXPECT_THAT(recording.error().message, HasSubstr("v.jsonl:2: server/discover offered"));
}

TEST(RecordingTest, LenientReadingWarnsAndKeepsTheRest) {
  std::string text = kInitialize + "garbage\n" +
                     line("in", R"({"jsonrpc":"2.0","id":2,"method":"ping"})") +
                     line("out", R"({"jsonrpc":"2.0","id":2,"result":{}})") + R"({"ts":"2026)";
  auto recording = parse_recording(text, "l.jsonl", ReadMode::kLenient);
  ASSERT_TRUE(recording) << recording.error().message;
  EXPECT_EQ(recording->records.size(), 4u);
  ASSERT_EQ(recording->warnings.size(), 2u);
  EXPECT_THAT(recording->warnings[0], HasSubstr("l.jsonl:3:"));
  EXPECT_THAT(recording->warnings[1], HasSubstr("l.jsonl:6: the recording is cut short"));
  EXPECT_EQ(recording->records[2].answer, 3u);
}

TEST(RecordingTest, RawTextAndItsNullIdAnswer) {
  const std::string text =
      kInitialize + line("in", R"({"raw":"not json"})") +
      line("out", R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}})");
  auto recording = parse_recording(text, "raw.jsonl", ReadMode::kStrict);
  ASSERT_TRUE(recording) << recording.error().message;
  const Record& raw = recording->records[2];
  EXPECT_EQ(raw.kind, MessageKind::kRaw);
  EXPECT_EQ(raw.raw, "not json");
  EXPECT_EQ(raw.answer, 3u);
}

TEST(RecordingTest, SplitsABatchIntoItsMessages) {
  const std::string text =
      kInitialize +
      line(
          "in",
          R"([{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}])") +
      line("out", R"([{"jsonrpc":"2.0","id":3,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}])");
  auto recording = parse_recording(text, "b.jsonl", ReadMode::kStrict);
  ASSERT_TRUE(recording) << recording.error().message;
  ASSERT_EQ(recording->records.size(), 6u);
  EXPECT_EQ(recording->records[2].batch, recording->records[3].batch);
  EXPECT_NE(recording->records[2].batch, 0u);
  EXPECT_EQ(recording->records[2].answer, 5u);
  EXPECT_EQ(recording->records[3].answer, 4u);
}

TEST(RecordingTest, KeepsHttpSessionsApart) {
  const std::string text = line("in", R"({"jsonrpc":"2.0","id":1,"method":"ping"})", "aaa") +
                           line("in", R"({"jsonrpc":"2.0","id":1,"method":"ping"})", "bbb") +
                           line("out", R"({"jsonrpc":"2.0","id":1,"result":{}})", "bbb") +
                           line("out", R"({"jsonrpc":"2.0","id":1,"result":{}})", "aaa");
  auto recording = parse_recording(text, "h.jsonl", ReadMode::kStrict);
  ASSERT_TRUE(recording) << recording.error().message;
  EXPECT_EQ(recording->records[0].answer, 3u);
  EXPECT_EQ(recording->records[1].answer, 2u);
  EXPECT_EQ(recording->sessions(), (std::vector<std::string>{"aaa", "bbb"}));
}

TEST(RecordingTest, PairsAServerRequestWithTheClientsAnswer) {
  const std::string text =
      kInitialize +
      line("in", R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}})") +
      line("out", R"({"jsonrpc":"2.0","id":0,"method":"roots/list"})") +
      line("in", R"({"jsonrpc":"2.0","id":0,"result":{"roots":[]}})") +
      line("out", R"({"jsonrpc":"2.0","id":2,"result":{}})");
  auto recording = parse_recording(text, "s.jsonl", ReadMode::kStrict);
  ASSERT_TRUE(recording) << recording.error().message;
  EXPECT_EQ(recording->records[3].answer, 4u);
  EXPECT_EQ(recording->records[2].answer, 5u);
}

TEST(RecordingTest, ReadingAMissingFileSaysWhatToPass) {
  auto recording = read_recording("/nonexistent/session.jsonl", ReadMode::kStrict);
  ASSERT_FALSE(recording);
  EXPECT_THAT(recording.error().message, HasSubstr("/nonexistent/session.jsonl"));
}

}  // namespace
}  // namespace kiln::replay
