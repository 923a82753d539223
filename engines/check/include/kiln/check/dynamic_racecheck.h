// racecheck on the simulator: a happens-before race detector that watches a launch through the
// simulator's MemoryObserver (kiln/sim/memory_observer.h). Per-thread vector clocks with
// FastTrack epochs over every byte of shared and global memory; edges from bar/barrier (named,
// with counts, and barrier.cluster), bar.warp.sync, mbarrier arrive -> wait of the completed
// phase, cp.async groups (the copies' writes land at wait_group/wait_all), TMA copies (loads
// land at the mbarrier phase their bytes complete, stores at cp.async.bulk.wait_group), wgmma
// operand reads (until the wgmma.wait_group retiring their group), fence.proxy.async (a generic
// write reaches the async proxy's reads only through one), and release/acquire through atomics
// and strong ld/st, with fences turning relaxed accesses into releases and acquires. The lanes
// of a warp are separate threads (independent thread scheduling), and CTAs of one launch are
// concurrent unless ordered through global memory.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "kiln/check/schedules.h"
#include "kiln/sim/memory_observer.h"

namespace kiln::check {

// One side of a race: who accessed, and where in the code.
struct RaceAccess {
  sim::Dim3 block, thread;
  std::string access;  // "read", "write", "atomic"
  bool async = false;  // done asynchronously on the thread's behalf (cp.async, TMA, wgmma)
  uint32_t ptx_line = 0;
  std::string instruction;
  std::string source;  // "kernel.cu:42:7" with -lineinfo, else ""
};

struct RaceFinding {
  std::string kind;   // "raw", "war", "waw": the earlier access, then the later one
  std::string cause;  // "missing_barrier", "warp_race", "cross_cta", "async_proxy",
                      // "missing_fence", "missing_proxy_fence"
  std::string space;  // "shared", "global"
  std::string kernel;
  uint64_t address = 0;  // shared: offset in the CTA's shared memory
  uint32_t bytes = 0;    // of the later access
  RaceAccess first, second;
  // the schedule that exposed it ("in_order", "reversed", "random", "pct", "exhaustive")
  std::string schedule;
  uint64_t seed = 0;  // replays it (random, pct: the seed; exhaustive: the permutation number)
  uint64_t occurrences = 0;
  std::vector<std::string> schedules;  // every schedule that saw it ("random:7" with its seed)
  std::string message, fix;
};

class RaceDetector final : public sim::MemoryObserver {
 public:
  explicit RaceDetector(uint32_t max_findings = 32);
  ~RaceDetector() override;
  RaceDetector(const RaceDetector&) = delete;
  RaceDetector& operator=(const RaceDetector&) = delete;

  // The schedule of the launches from now on (findings remember it).
  void set_schedule(const sim::WarpSchedule& schedule);
  // Distinct findings so far (by kind, cause, space and the .cu lines of both sides, or their
  // PTX lines without line info), over every launch and schedule; a finding seen again counts
  // as an occurrence.
  const std::vector<RaceFinding>& findings() const;
  // Reads forgotten because a byte had more than two unordered readers (a WAR against them can
  // be missed), and distinct races not kept because max_findings was reached.
  uint64_t evicted_reads() const;
  uint64_t dropped_findings() const;
  uint64_t launches() const;

  sim::WarpSchedule schedule() const override;
  void launch_begin(const sim::LaunchInfo& info) override;
  void cluster_begin(const std::vector<sim::Dim3>& ctas) override;
  void access(const sim::AccessEvent& event) override;
  void sync(const sim::SyncEvent& event) override;
  void launch_end(const std::vector<std::string>& sources) override;
  void cluster_schedule(const sim::ClusterSchedule& cluster) override;
  // The priority schedules of the current schedule's launches (steps, interleavings).
  const ScheduleLog& schedule_log() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

nlohmann::json to_json(const RaceFinding& finding);

}  // namespace kiln::check
