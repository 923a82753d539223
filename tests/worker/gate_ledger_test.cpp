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

}  // namespace
}  // namespace kiln::worker
