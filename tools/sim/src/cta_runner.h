// Runs the CTAs of a launch, one after another (CTAs of a grid are independent): sets up each
// CTA's warps, registers, shared and local memory, then schedules its warps round-robin until
// all exit, a fault stops the launch, or every live warp waits forever (deadlock).
#pragma once

#include <chrono>
#include <cstdint>

#include "exec.h"
#include "kiln/sim/device.h"

namespace kiln::sim {

struct RunLimits {
  uint64_t instruction_budget = 0;  // warp-instructions, 0: none
  double time_limit_seconds = 0;    // 0: none
  uint32_t multiprocessors = 132;
  bool independent_thread_scheduling = false;
};

class CtaRunner {
 public:
  CtaRunner(Exec& exec, const RunLimits& limits);

  // Runs CTA `id` to completion; false when a fault stopped it (see Exec::faults).
  bool run(Dim3 id);

 private:
  void set_up(Dim3 id);
  void fill_constants(Warp& warp);
  void run_warp(Warp& warp);
  bool over_limits(Warp& warp);
  void rotate_siblings(Warp& warp);

  Exec& x_;
  RunLimits limits_;
  Cta cta_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kiln::sim
