#include "kiln/mcp/recorder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "temp_dir.h"

namespace kiln::mcp {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

const std::regex kIso8601Millis(R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$)");

std::vector<json> read_records(const std::filesystem::path& path) {
  std::vector<json> records;
  for (const auto& line : testing::read_lines(path)) {
    json record = json::parse(line, nullptr, false);
    EXPECT_FALSE(record.is_discarded()) << "not JSON: " << line;
    records.push_back(record);
  }
  return records;
}

TEST(UtcTimestampNow, IsIso8601UtcWithMilliseconds) {
  EXPECT_TRUE(std::regex_match(utc_timestamp_now(), kIso8601Millis)) << utc_timestamp_now();
}

TEST(Recorder, WritesOneJsonLinePerMessageWithTimestampDirectionAndMessage) {
  testing::TempDir dir;
  auto recorder = Recorder::open(dir / "session.jsonl");
  ASSERT_TRUE(recorder.ok()) << recorder.error().message;
  json in = {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}};
  json out = {{"jsonrpc", "2.0"}, {"id", 1}, {"result", json::object()}};
  (*recorder)->incoming(in);
  (*recorder)->outgoing(out, "abc123");

  auto records = read_records(dir / "session.jsonl");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(std::regex_match(records[0]["ts"].get<std::string>(), kIso8601Millis))
      << records[0].dump();
  EXPECT_EQ(records[0]["dir"], "in");
  EXPECT_EQ(records[0]["message"], in);
  EXPECT_FALSE(records[0].contains("session"));
  EXPECT_EQ(records[1]["dir"], "out");
  EXPECT_EQ(records[1]["message"], out);
  EXPECT_EQ(records[1]["session"], "abc123");
}

TEST(Recorder, RecordsRawTextAsRaw) {
  testing::TempDir dir;
  auto recorder = Recorder::open(dir / "raw.jsonl");
  ASSERT_TRUE(recorder.ok());
  (*recorder)->incoming_raw("{not json\n\"x");
  auto records = read_records(dir / "raw.jsonl");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["dir"], "in");
  EXPECT_EQ(records[0]["message"], json({{"raw", "{not json\n\"x"}}));
}

TEST(Recorder, InvalidUtf8IsRecordedAsValidJson) {
  testing::TempDir dir;
  auto recorder = Recorder::open(dir / "bytes.jsonl");
  ASSERT_TRUE(recorder.ok());
  (*recorder)->incoming_raw(std::string("\xff\xfe garbage", 10));
  auto records = read_records(dir / "bytes.jsonl");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_TRUE(records[0]["message"]["raw"].is_string());
}

TEST(Recorder, AppendsToAnExistingFile) {
  testing::TempDir dir;
  {
    auto first = Recorder::open(dir / "log.jsonl");
    ASSERT_TRUE(first.ok());
    (*first)->incoming(json{{"n", 1}});
  }
  {
    auto second = Recorder::open(dir / "log.jsonl");
    ASSERT_TRUE(second.ok());
    (*second)->outgoing(json{{"n", 2}});
  }
  auto records = read_records(dir / "log.jsonl");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["message"]["n"], 1);
  EXPECT_EQ(records[1]["message"]["n"], 2);
}

TEST(Recorder, LinesAreVisibleBeforeTheRecorderCloses) {
  testing::TempDir dir;
  auto recorder = Recorder::open(dir / "live.jsonl");
  ASSERT_TRUE(recorder.ok());
  (*recorder)->incoming(json{{"n", 1}});
  EXPECT_EQ(testing::read_lines(dir / "live.jsonl").size(), 1u);
}

TEST(Recorder, OpenInAMissingFolderFailsWithAMessage) {
  testing::TempDir dir;
  auto recorder = Recorder::open(dir / "no" / "such" / "folder" / "log.jsonl");
  ASSERT_FALSE(recorder.ok());
  EXPECT_THAT(recorder.error().message, HasSubstr("cannot open"));
  EXPECT_THAT(recorder.error().message, HasSubstr("writable"));
}

}  // namespace
}  // namespace kiln::mcp
