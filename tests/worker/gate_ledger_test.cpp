// gate_ledger.h: many checks per gate, one verdict per gate.
#include "kiln/worker/gate_ledger.h"

#include <gtest/gtest.h>

namespace kiln::worker {
namespace {

TEST(GateLedger, ReportsCheckedGatesInProtocolOrder) {
  GateLedger ledger;
  ledger.pass(gate::kCorrectness);
  ledger.pass(gate::kBannedSymbols);
  ledger.pass(gate::kCorrectness);
  const nlohmann::json j = ledger.to_json();
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["name"], "banned_symbols");
  EXPECT_EQ(j[1]["name"], "correctness");
  EXPECT_TRUE(j[1]["passed"]);
  EXPECT_FALSE(ledger.any_failed());
}

TEST(GateLedger, KeepsTheFirstFailure) {
  GateLedger ledger;
  ledger.pass(gate::kGuardBands);
  ledger.fail(gate::kGuardBands, "16x4096x4096", "2 bytes after C");
  ledger.pass(gate::kGuardBands);  // a later clean call does not clear it
  ledger.fail(gate::kGuardBands, "4096x4096x4096", "later");
  ledger.fail(gate::kCorrectness, "", "wrong");
  EXPECT_TRUE(ledger.failed(gate::kGuardBands));
  EXPECT_EQ(ledger.first_failed(), gate::kGuardBands);
  EXPECT_EQ(ledger.detail(gate::kGuardBands), "16x4096x4096: 2 bytes after C");
  const nlohmann::json j = ledger.to_json();
  const auto& guard = j[0];
  EXPECT_FALSE(guard["passed"]);
  EXPECT_EQ(guard["failures"], 2);
  EXPECT_EQ(guard["workloads"].size(), 2u);
}

TEST(GateLedger, NotesRideOnPassingGates) {
  GateLedger ledger;
  ledger.pass(gate::kDeterminism);
  ledger.note(gate::kDeterminism, "5 elements differ bitwise, within tolerance");
  const nlohmann::json j = ledger.to_json();
  EXPECT_TRUE(j[0]["passed"]);
  EXPECT_NE(j[0]["detail"].get<std::string>().find("within tolerance"), std::string::npos);
}

TEST(GateLedger, AGateThatCouldNotRunNeverPassesAndSaysWhy) {
  GateLedger ledger;
  ledger.not_run(gate::kHiddenStreamWork, "CUPTI unavailable");
  ledger.pass(gate::kHiddenStreamWork);  // a later pass does not make it checked
  ledger.not_run(gate::kHiddenStreamWork, "a second reason");
  const std::string_view required[] = {gate::kHiddenStreamWork};
  EXPECT_FALSE(ledger.all_passed(required));
  EXPECT_FALSE(ledger.any_failed());
  const nlohmann::json j = ledger.to_json(required);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["state"], "not_run");
  EXPECT_FALSE(j[0]["passed"]);
  EXPECT_EQ(j[0]["detail"], "not run: CUPTI unavailable");
  ASSERT_EQ(ledger.not_passed(required).size(), 1u);
  EXPECT_EQ(ledger.not_passed(required)[0], "hidden_stream_work: not run: CUPTI unavailable");
}

TEST(GateLedger, AFailureWinsOverNotRun) {
  GateLedger ledger;
  ledger.not_run(gate::kActivityRecord, "dropped records");
  ledger.fail(gate::kActivityRecord, "", "a forged record");
  const nlohmann::json j = ledger.to_json();
  EXPECT_EQ(j[0]["state"], "failed");
}

TEST(GateLedger, ListsEveryRequiredGateEvenWhenNeverReached) {
  GateLedger ledger;
  ledger.pass(gate::kBannedSymbols);
  const auto required = required_gates("benchmark");
  const nlohmann::json j = ledger.to_json(required);
  ASSERT_EQ(j.size(), required.size());
  EXPECT_EQ(j[0]["name"], "banned_symbols");
  EXPECT_EQ(j[0]["state"], "passed");
  for (size_t i = 1; i < j.size(); ++i) {
    EXPECT_EQ(j[i]["state"], "not_run") << j[i]["name"];
    EXPECT_NE(j[i]["detail"].get<std::string>().find("ended before"), std::string::npos);
  }
  EXPECT_TRUE(required_gates("profile").empty());
  EXPECT_EQ(required_gates("verify").size() + 1, required.size());
}

}  // namespace
}  // namespace kiln::worker
