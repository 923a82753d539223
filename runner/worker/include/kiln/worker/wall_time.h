// Where a job's wall time goes: the stages (build, load, verify, timing) and, inside the passes,
// input generation, the CPU and GPU references, the candidate's and the baseline's calls (round
// trips to the candidate host included), the output checks; against the GPU time the calls kept
// busy (their CUPTI spans). Reported in every verify and benchmark RESULT as `wall_time`, so each
// run says how much of its time was measurement.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>

namespace kiln::worker {

struct WallTime {
  double build_s = 0;
  double load_s = 0;  // baseline, reference, GPU, harness, the candidate host's start
  double verify_s = 0;
  double timing_s = 0;
  double total_s = 0;
  double inputs_s = 0;         // drawing and perturbing inputs on the GPU
  double cpu_reference_s = 0;  // host copies and the CPU reference on the checked rows
  double gpu_reference_s = 0;  // the task's GPU reference and the comparisons against it
  double host_copies_s = 0;    // device-to-host copies (already inside the figures above)
  double candidate_calls_s = 0;
  double baseline_calls_s = 0;
  double output_checks_s = 0;  // the GPU comparisons of outputs against the baseline
  double gpu_busy_s = 0;       // sum of the calls' spans: the GPU time the job measured
  int64_t calls = 0;
  nlohmann::json to_json() const;
};

// Adds the seconds from construction to destruction to *into.
class ScopedSeconds {
 public:
  explicit ScopedSeconds(double* into) : into_(into), start_(std::chrono::steady_clock::now()) {}
  ~ScopedSeconds() {
    if (into_ != nullptr)
      *into_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  ScopedSeconds(const ScopedSeconds&) = delete;
  ScopedSeconds& operator=(const ScopedSeconds&) = delete;

 private:
  double* into_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kiln::worker
