// A finding of a check engine (synccheck or racecheck): what is wrong, where in the .cu and the
// PTX, why it matters and how to fix it. Every engine (static on PTX, dynamic on the simulator,
// compute-sanitizer on a GPU) reports in this one format.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::check {

enum class Severity : uint8_t { Error, Warning };

// The kinds synccheck reports. The corpus under tests/corpus/sync/ names these strings.
enum class FindingKind : uint8_t {
  BarrierDivergence,      // "barrier_divergence": bar.sync/barrier.sync.aligned reachable
                          // under thread-divergent control (early return, divergent loop)
  CollectiveDivergence,   // "collective_divergence": shfl/vote/redux/match .sync, ldmatrix,
                          // stmatrix, mma.sync, wgmma executed under intra-warp divergence
  CollectiveMask,         // "collective_mask": a .sync mask naming lanes that are not there
  NamedBarrierMismatch,   // "named_barrier_mismatch": one barrier id used with different
                          // thread counts, or a count that is not a multiple of 32
  MbarrierUninitialized,  // "mbarrier_uninitialized": an mbarrier used before mbarrier.init
  MbarrierInitFence,      // "mbarrier_init_fence": init not made visible (fence + barrier)
                          // before other threads or the async proxy use it
  AsyncCopyUnwaited,      // "async_copy_unwaited": cp.async data read before wait_group/
                          // wait_all (and a barrier, when other threads read it)
  BulkCopyNoExpectTx,     // "bulk_copy_no_expect_tx": cp.async.bulk completing on an
                          // mbarrier that no arrive.expect_tx / expect_tx arms
  WgmmaFence,             // "wgmma_fence": wgmma.mma_async without wgmma.fence before it or
                          // without commit_group + wait_group before its results are used
  Incomplete,             // "incomplete": a construct the engine could not analyze
  DataRace,               // "data_race": racecheck's hazard between two accesses
  SanitizerError,         // "sanitizer_error": any other compute-sanitizer report
  // racecheck on the simulator (engines/check/dynamic_racecheck.h), besides data_race:
  AsyncProxyRace,  // "async_proxy_race": a generic access unordered with an async-proxy one
                   // (cp.async, TMA, wgmma) still pending, or one not fenced with
                   // fence.proxy.async before the async proxy reads it
  MissingFence,    // "missing_fence": data published through a flag without the fence (or
                   // release/acquire) that orders the data before the flag
  // synccheck on the simulator (engines/check/dynamic_synccheck.h), besides barrier_divergence,
  // named_barrier_mismatch and mbarrier_uninitialized:
  MbarrierPhaseOverrun,    // "mbarrier_phase_overrun": a wait on a phase that has already
                           // completed twice (the barrier was reused under a late waiter)
  MbarrierOverArrival,     // "mbarrier_over_arrival": more arrivals than expected in a phase
  MbarrierTxNeverArrived,  // "mbarrier_tx_never_arrived": expect_tx bytes that never came
  MbarrierTxOverflow,      // "mbarrier_tx_overflow": more bytes than expect_tx armed
  MbarrierInitInUse,       // "mbarrier_init_in_use": init or inval while threads still use it
  MbarrierMidPhaseAtExit,  // "mbarrier_mid_phase_at_exit": left mid-phase when the kernel ended
  ExitAtBarrier,           // "exit_at_barrier": threads exited while others wait at a barrier
  Deadlock,                // "deadlock": every live warp waits and nothing can release one
};

std::string_view finding_kind_name(FindingKind kind);
std::string_view severity_name(Severity severity);

struct Finding {
  Severity severity = Severity::Error;
  FindingKind kind = FindingKind::BarrierDivergence;
  std::string function;     // the PTX function (mangled) it is in
  std::string source_file;  // the .cu file, empty when the PTX has no line info
  uint32_t source_line = 0;
  uint32_t source_column = 0;
  uint32_t ptx_line = 0;
  std::string instruction;  // the PTX instruction as written, e.g. "bar.sync 0;"
  std::string message;      // what is wrong, in one or two sentences
  std::string fix_hint;     // what to do about it
  // Why, where an engine tells causes apart (empty otherwise). The static synccheck sets it on
  // barrier_divergence: "thread_dependent" (a condition that differs between threads of a
  // warp), "warp_dependent" (between warps), "block_dependent" (a grid-wide barrier under a
  // condition on blockIdx: every block must arrive), "uniform_load_guard" (a warning: the
  // condition comes only from loads of one word every thread reads, not written by the
  // kernel, so it diverges only if the word changes between the threads' reads; the dynamic
  // engine can tell). The simulator's engines set it too: racecheck to the race's cause
  // (missing_barrier, async_proxy, ...: dynamic_racecheck.h), synccheck to the dynamic kind
  // (phase_overrun, ...: dynamic_synccheck.h).
  std::string cause;
};

// clean: nothing found and everything analyzed; findings: at least one error or warning;
// incomplete: nothing found, but part of the code could not be analyzed.
enum class Verdict : uint8_t { Clean, Findings, Incomplete };

std::string_view verdict_name(Verdict verdict);

struct CheckReport {
  Verdict verdict = Verdict::Clean;
  std::vector<Finding> findings;
  std::vector<std::string> notes;  // what was not analyzed and why (verdict incomplete)

  // Sets the verdict from the findings and notes.
  void finish();
};

nlohmann::json to_json(const Finding& finding);
nlohmann::json to_json(const CheckReport& report);
// "error barrier_divergence kernel.cu:42:5 (ptx 118): message"
std::string to_string(const Finding& finding);

}  // namespace kiln::check
