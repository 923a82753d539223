// Checks kb/zoo/awaiting_h200.json's reading and the removal of measured ids
// (tests/zoo/support/awaiting_measurement.cpp).
#include "awaiting_measurement.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace kiln::zoo {
namespace {

class AwaitingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kiln_awaiting_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& text) { std::ofstream(dir_ / kAwaitingFile) << text; }
  std::filesystem::path dir_;
};

TEST_F(AwaitingTest, AnAbsentListIsEmpty) {
  const auto ids = load_awaiting(dir_);
  ASSERT_TRUE(ids.ok()) << ids.error().message;
  EXPECT_TRUE(ids->empty());
}

TEST_F(AwaitingTest, ReadsTheListedIds) {
  write(R"({"why": "no GPU today", "entries": ["b_entry", "a_entry"]})");
  const auto ids = load_awaiting(dir_);
  ASSERT_TRUE(ids.ok()) << ids.error().message;
  EXPECT_EQ(*ids, (std::set<std::string>{"a_entry", "b_entry"}));
}

TEST_F(AwaitingTest, RefusesAMalformedList) {
  write(R"({"entries": "a_entry"})");
  const auto not_array = load_awaiting(dir_);
  ASSERT_FALSE(not_array.ok());
  EXPECT_NE(not_array.error().message.find("entries"), std::string::npos);
  write(R"({"entries": [3]})");
  EXPECT_FALSE(load_awaiting(dir_).ok());
  write("not json");
  EXPECT_FALSE(load_awaiting(dir_).ok());
}

TEST(AwaitingList, DropsMeasuredIdsAndKeepsTheRest) {
  const std::string text = R"({"why": "w", "entries": ["a", "b", "c"]})";
  const auto kept = without_awaiting(text, {"b", "z"});
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  const auto json = nlohmann::json::parse(*kept);
  EXPECT_EQ(json["entries"], nlohmann::json::array({"a", "c"}));
  EXPECT_EQ(json["why"], "w");
  const auto same = without_awaiting(text, {"z"});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, text);  // unchanged text when nothing listed was measured
}

}  // namespace
}  // namespace kiln::zoo
