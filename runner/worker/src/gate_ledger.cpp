#include "kiln/worker/gate_ledger.h"

#include <algorithm>

namespace kiln::worker {

namespace protocol = runner::protocol;

namespace {

// Gates outside a kind's required set (none today) are listed after it, in this order.
constexpr std::string_view kReportOrder[] = {
    gate::kBannedSymbols, gate::kPoisonedOutputs, gate::kFreshInputs,      gate::kInputChecksum,
    gate::kGuardBands,    gate::kDeterminism,     gate::kHiddenStreamWork, gate::kCudaErrors,
    gate::kCorrectness,   gate::kHarnessState,    gate::kActivityRecord,   gate::kClockMonitoring};

constexpr std::string_view kNeverReached = "not run: the job ended before this gate was checked";

}  // namespace

std::span<const std::string_view> required_gates(std::string_view kind) {
  if (kind == "benchmark") return protocol::kBenchmarkGates;
  if (kind == "verify") return protocol::kVerifyGates;
  return {};
}

void GateLedger::pass(std::string_view gate) { entries_[std::string(gate)].checked = true; }

void GateLedger::fail(std::string_view gate, const std::string& workload,
                      const std::string& detail) {
  Entry& entry = entries_[std::string(gate)];
  entry.checked = true;
  if (!entry.failed) {
    entry.failed = true;
    entry.detail = workload.empty() ? detail : workload + ": " + detail;
    failure_order_.emplace_back(gate);
  }
  ++entry.failures;
  if (!workload.empty() && std::find(entry.workloads.begin(), entry.workloads.end(), workload) ==
                               entry.workloads.end()) {
    entry.workloads.push_back(workload);
  }
}

void GateLedger::not_run(std::string_view gate, const std::string& why) {
  Entry& entry = entries_[std::string(gate)];
  if (entry.not_run || entry.failed) return;
  entry.not_run = true;
  entry.detail = why;
}

void GateLedger::note(std::string_view gate, const std::string& note) {
  Entry& entry = entries_[std::string(gate)];
  if (entry.notes.size() < 8 &&
      std::find(entry.notes.begin(), entry.notes.end(), note) == entry.notes.end()) {
    entry.notes.push_back(note);
  }
}

bool GateLedger::checked(std::string_view gate) const {
  auto it = entries_.find(gate);
  return it != entries_.end() && it->second.checked;
}

bool GateLedger::failed(std::string_view gate) const {
  auto it = entries_.find(gate);
  return it != entries_.end() && it->second.failed;
}

bool GateLedger::any_failed() const { return !failure_order_.empty(); }

std::string GateLedger::first_failed() const {
  return failure_order_.empty() ? "" : failure_order_.front();
}

std::string GateLedger::detail(std::string_view gate) const {
  auto it = entries_.find(gate);
  return it == entries_.end() ? "" : it->second.detail;
}

std::string GateLedger::state(std::string_view gate) const {
  auto it = entries_.find(gate);
  if (it == entries_.end()) return std::string(protocol::gate_state::kNotRun);
  const Entry& entry = it->second;
  if (entry.failed) return std::string(protocol::gate_state::kFailed);
  if (entry.not_run || !entry.checked) return std::string(protocol::gate_state::kNotRun);
  return std::string(protocol::gate_state::kPassed);
}

std::string GateLedger::why_not_run(std::string_view gate) const {
  auto it = entries_.find(gate);
  if (it != entries_.end() && it->second.not_run) return "not run: " + it->second.detail;
  return std::string(kNeverReached);
}

bool GateLedger::all_passed(std::span<const std::string_view> required) const {
  return std::all_of(required.begin(), required.end(), [&](std::string_view gate) {
    return state(gate) == protocol::gate_state::kPassed;
  });
}

std::vector<std::string> GateLedger::not_passed(std::span<const std::string_view> required) const {
  std::vector<std::string> out;
  for (std::string_view gate : required)
    if (state(gate) == protocol::gate_state::kNotRun)
      out.push_back(std::string(gate) + ": " + why_not_run(gate));
  return out;
}

nlohmann::json GateLedger::to_json(std::span<const std::string_view> required) const {
  std::vector<std::string> names(required.begin(), required.end());
  auto add = [&](std::string_view name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.emplace_back(name);
  };
  for (std::string_view name : kReportOrder)
    if (entries_.count(name) != 0) add(name);
  for (const auto& [name, entry] : entries_) add(name);

  nlohmann::json out = nlohmann::json::array();
  for (const auto& name : names) {
    const std::string gate_state = state(name);
    auto it = entries_.find(name);
    const bool is_required = std::find(required.begin(), required.end(), name) != required.end();
    // Outside the required set, a gate only noted, never checked, is left out as before.
    if (!is_required && (it == entries_.end() || (!it->second.checked && !it->second.not_run)))
      continue;
    std::string detail;
    if (gate_state == protocol::gate_state::kNotRun) {
      detail = why_not_run(name);
    } else {
      const Entry& entry = it->second;
      detail = entry.failed ? entry.detail : "passed";
      if (!entry.notes.empty()) {
        std::string joined;
        for (const auto& n : entry.notes) joined += (joined.empty() ? "" : "; ") + n;
        detail = entry.failed ? detail + " (notes: " + joined + ")" : joined;
      }
    }
    nlohmann::json record = {{"name", name},
                             {"state", gate_state},
                             {"passed", gate_state == protocol::gate_state::kPassed},
                             {"detail", detail}};
    if (gate_state == protocol::gate_state::kFailed) {
      record["workloads"] = it->second.workloads;
      record["failures"] = it->second.failures;
    }
    out.push_back(record);
  }
  return out;
}

}  // namespace kiln::worker
