// The integrity gates' verdicts for one job. Each gate is checked many times (every
// call, every workload); the ledger keeps, per gate, whether it was checked, whether
// it ever failed, the first failure's detail, and notes (passes with a remark, such as
// a nondeterministic but in-tolerance result). It becomes the result's "gates" list.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kiln::worker {

// The gate names of runner/protocol/PROTOCOL.md, in the order they are reported.
namespace gate {
inline constexpr const char* kBannedSymbols = "banned_symbols";
inline constexpr const char* kPoisonedOutputs = "poisoned_outputs";
inline constexpr const char* kFreshInputs = "fresh_inputs";
inline constexpr const char* kInputChecksum = "input_checksum";
inline constexpr const char* kGuardBands = "guard_bands";
inline constexpr const char* kDeterminism = "determinism";
inline constexpr const char* kHiddenStreamWork = "hidden_stream_work";
inline constexpr const char* kCudaErrors = "cuda_errors";
inline constexpr const char* kCorrectness = "correctness";
}  // namespace gate

class GateLedger {
 public:
  // Marks the gate as checked (and passed, unless it failed before).
  void pass(const std::string& gate);
  // Records a failure; `workload` may be empty. The first failure's detail is kept.
  void fail(const std::string& gate, const std::string& workload, const std::string& detail);
  void note(const std::string& gate, const std::string& note);

  bool checked(const std::string& gate) const;
  bool failed(const std::string& gate) const;
  bool any_failed() const;
  // The first gate to fail, in the order failures were recorded ("" when none).
  std::string first_failed() const;
  std::string detail(const std::string& gate) const;

  nlohmann::json to_json() const;

 private:
  struct Entry {
    bool checked = false;
    bool failed = false;
    std::string detail;
    std::vector<std::string> workloads;
    std::vector<std::string> notes;
    int failures = 0;
  };
  std::map<std::string, Entry> entries_;
  std::vector<std::string> failure_order_;
};

}  // namespace kiln::worker
