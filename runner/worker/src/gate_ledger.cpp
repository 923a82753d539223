#include "kiln/worker/gate_ledger.h"

#include <algorithm>

namespace kiln::worker {

namespace {

const std::vector<std::string>& report_order() {
  static const std::vector<std::string> order = {
      gate::kBannedSymbols,    gate::kPoisonedOutputs, gate::kFreshInputs,
      gate::kInputChecksum,    gate::kGuardBands,      gate::kDeterminism,
      gate::kHiddenStreamWork, gate::kCudaErrors,      gate::kCorrectness};
  return order;
}

}  // namespace

void GateLedger::pass(const std::string& gate) { entries_[gate].checked = true; }

void GateLedger::fail(const std::string& gate, const std::string& workload,
                      const std::string& detail) {
  Entry& entry = entries_[gate];
  entry.checked = true;
  if (!entry.failed) {
    entry.failed = true;
    entry.detail = workload.empty() ? detail : workload + ": " + detail;
    failure_order_.push_back(gate);
  }
  ++entry.failures;
  if (!workload.empty() && std::find(entry.workloads.begin(), entry.workloads.end(), workload) ==
                               entry.workloads.end()) {
    entry.workloads.push_back(workload);
  }
}

void GateLedger::note(const std::string& gate, const std::string& note) {
  Entry& entry = entries_[gate];
  if (entry.notes.size() < 8 &&
      std::find(entry.notes.begin(), entry.notes.end(), note) == entry.notes.end()) {
    entry.notes.push_back(note);
  }
}

bool GateLedger::checked(const std::string& gate) const {
  auto it = entries_.find(gate);
  return it != entries_.end() && it->second.checked;
}

bool GateLedger::failed(const std::string& gate) const {
  auto it = entries_.find(gate);
  return it != entries_.end() && it->second.failed;
}

bool GateLedger::any_failed() const { return !failure_order_.empty(); }

std::string GateLedger::first_failed() const {
  return failure_order_.empty() ? "" : failure_order_.front();
}

std::string GateLedger::detail(const std::string& gate) const {
  auto it = entries_.find(gate);
  return it == entries_.end() ? "" : it->second.detail;
}

nlohmann::json GateLedger::to_json() const {
  nlohmann::json out = nlohmann::json::array();
  std::vector<std::string> names = report_order();
  for (const auto& [name, entry] : entries_) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  for (const auto& name : names) {
    auto it = entries_.find(name);
    if (it == entries_.end() || !it->second.checked) continue;
    const Entry& entry = it->second;
    std::string detail = entry.failed ? entry.detail : "passed";
    if (!entry.notes.empty()) {
      std::string joined;
      for (const auto& n : entry.notes) joined += (joined.empty() ? "" : "; ") + n;
      detail = entry.failed ? detail + " (notes: " + joined + ")" : joined;
    }
    nlohmann::json record = {{"name", name}, {"passed", !entry.failed}, {"detail", detail}};
    if (entry.failed) {
      record["workloads"] = entry.workloads;
      record["failures"] = entry.failures;
    }
    out.push_back(record);
  }
  return out;
}

}  // namespace kiln::worker
