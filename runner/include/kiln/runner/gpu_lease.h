// A machine-wide lease on one GPU: flock() on LOCK_DIR/kiln-gpu-N.lock. A runner holds
// it while a job runs, so runners in different processes on one machine (two `kiln mcp`
// with in-process runners, or one beside `kiln runner`) never time on the same GPU at
// once. N is the CUDA ordinal, so processes must agree on CUDA_VISIBLE_DEVICES.
#pragma once

#include <filesystem>
#include <string>

namespace kiln::runner {

class GpuLease {
 public:
  // An empty `lock_dir` makes a lease that is always granted (no cross-process lock).
  GpuLease(std::filesystem::path lock_dir, int gpu);
  ~GpuLease();
  GpuLease(const GpuLease&) = delete;
  GpuLease& operator=(const GpuLease&) = delete;

  // Without blocking. When the lock file cannot be opened the lease is granted and
  // problem() says why (a missing lock is logged, not fatal).
  bool try_acquire();
  void release();
  bool held() const { return held_; }
  const std::string& problem() const { return problem_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool held_ = false;
  std::string problem_;
};

}  // namespace kiln::runner
