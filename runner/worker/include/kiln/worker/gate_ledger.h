// The integrity gates' verdicts for one job. Each gate is checked many times (every call,
// every workload); the ledger keeps, per gate, its state (passed, failed, not run), the first
// failure's detail or why it could not run, and notes (passes with a remark, such as a
// nondeterministic but in-tolerance result). It becomes the result's "gates" list: every gate
// of the job kind's required set (runner/protocol/gates.h), each with its state, so a gate that
// did not run is shown as such and never read as passed.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/runner/protocol/gates.h"

namespace kiln::worker {

// The gate names of runner/protocol/PROTOCOL.md.
namespace gate = runner::protocol::gate;

// The gates a result of this kind must carry, passed, to be scored (empty for profile/sanitize).
std::span<const std::string_view> required_gates(std::string_view kind);

class GateLedger {
 public:
  // Marks the gate as checked (and passed, unless it failed or could not run before).
  void pass(std::string_view gate);
  // Records a failure; `workload` may be empty. The first failure's detail is kept.
  void fail(std::string_view gate, const std::string& workload, const std::string& detail);
  // The gate could not be checked (its instrument is missing, the job's time ran out): it can
  // never pass in this job, and the first reason is kept. A failure still wins.
  void not_run(std::string_view gate, const std::string& why);
  void note(std::string_view gate, const std::string& note);

  bool checked(std::string_view gate) const;
  bool failed(std::string_view gate) const;
  bool any_failed() const;
  // The first gate to fail, in the order failures were recorded ("" when none).
  std::string first_failed() const;
  std::string detail(std::string_view gate) const;

  // True when every gate of `required` was checked and passed.
  bool all_passed(std::span<const std::string_view> required) const;
  // "gate: why" for each gate of `required` that did not pass without failing (not run, or
  // never reached).
  std::vector<std::string> not_passed(std::span<const std::string_view> required) const;

  // Every gate of `required`, in its order, each with its state; then any other gate recorded.
  nlohmann::json to_json(std::span<const std::string_view> required = {}) const;

 private:
  struct Entry {
    bool checked = false;
    bool failed = false;
    bool not_run = false;
    std::string detail;  // the first failure, or why it could not run
    std::vector<std::string> workloads;
    std::vector<std::string> notes;
    int failures = 0;
  };
  std::string state(std::string_view gate) const;
  std::string why_not_run(std::string_view gate) const;

  std::map<std::string, Entry, std::less<>> entries_;
  std::vector<std::string> failure_order_;
};

}  // namespace kiln::worker
