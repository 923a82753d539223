// Shared by the frontier tests: benchmark RESULTs as the runner writes them (every gate of
// the benchmark set, a row per workload of the bundled fp16_gemm task), a store, a git
// worktree, and fakes for the revalidation job and the PTX fingerprint.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kiln/base/sha256.h"
#include "kiln/frontier/run_frontier.h"
#include "kiln/frontier/worktree.h"
#include "kiln/runner/protocol/gates.h"
#include "kiln/tasks/task.h"
#include "support/temp_dir.h"

namespace kiln::frontier::testing {

using json = nlohmann::json;
using kiln::testing::read_text;
using kiln::testing::TempDir;
using kiln::testing::write_text;

inline std::shared_ptr<const tasks::Task> bundled_task() {
  static const auto task = [] {
    auto loaded = tasks::load_task(std::filesystem::path(KILN_TASKS_DIR) / "fp16_gemm");
    if (!loaded) throw std::runtime_error(loaded.error().message);
    return std::make_shared<const tasks::Task>(*loaded);
  }();
  return task;
}

inline std::vector<std::string> benchmark_gates() {
  std::vector<std::string> out;
  for (auto gate : runner::protocol::kBenchmarkGates) out.emplace_back(gate);
  return out;
}

struct ResultShape {
  double speedup = 1.1;  // every workload's
  double cv = 0.004;
  std::string status = "passed";
  size_t workloads = 0;         // 0: all of the task's
  std::string gate_not_passed;  // a gate left failed
  std::string gate_state = "failed";
  std::string task_sha256;  // empty: the bundled task's
  // Timed beside an incumbent: its source's sha256, and every workload's ratio against it.
  std::string incumbent_sha256;
  double vs_incumbent = 1;
};

inline ResultShape with_speedup(double speedup) {
  ResultShape shape;
  shape.speedup = speedup;
  return shape;
}
inline ResultShape subset_of(size_t workloads) {
  ResultShape shape;
  shape.workloads = workloads;
  return shape;
}
inline ResultShape with_gate(const std::string& gate, const std::string& state,
                             const std::string& status) {
  ResultShape shape;
  shape.gate_not_passed = gate;
  shape.gate_state = state;
  shape.status = status;
  return shape;
}
inline ResultShape of_task(const std::string& sha256) {
  ResultShape shape;
  shape.task_sha256 = sha256;
  return shape;
}

// A benchmark RESULT for `source` as the runner would return it.
inline json benchmark_result(const std::string& source, const ResultShape& shape = {}) {
  const auto& task = *bundled_task();
  json gates = json::array();
  for (const auto& name : benchmark_gates()) {
    const bool broken = name == shape.gate_not_passed;
    gates.push_back({{"name", name},
                     {"state", broken ? shape.gate_state : "passed"},
                     {"passed", !broken},
                     {"detail", broken ? "fake breakage" : "ok"}});
  }
  const size_t n = shape.workloads ? shape.workloads : task.workloads.size();
  json rows = json::array();
  for (size_t i = 0; i < n; ++i) {
    const double median = 100.0 + static_cast<double>(i);
    rows.push_back(
        {{"name", task.workloads[i].name},
         {"passed", true},
         {"time_us",
          {{"median", median}, {"p5", median}, {"p95", median}, {"cv", shape.cv}, {"samples", 20}}},
         {"baseline_time_us", {{"median", median * shape.speedup}}},
         {"speedup", shape.speedup}});
    if (!shape.incumbent_sha256.empty()) {
      rows.back()["incumbent_time_us"] = {{"median", median * shape.vs_incumbent}};
      rows.back()["speedup_vs_incumbent"] = shape.vs_incumbent;
    }
  }
  const bool scored =
      shape.status == "passed" && n == task.workloads.size() && shape.gate_not_passed.empty();
  json result = {{"status", shape.status},
                 {"stage", "done"},
                 {"task",
                  {{"name", task.name},
                   {"sha256", shape.task_sha256.empty() ? task.sha256 : shape.task_sha256}}},
                 {"candidate_sha256", sha256_hex(source)},
                 {"gates", gates},
                 {"workloads", rows},
                 {"summary",
                  {{"passed", n},
                   {"total", n},
                   {"scored", scored},
                   {"geomean_speedup", scored ? json(shape.speedup) : json(nullptr)}}}};
  if (!shape.incumbent_sha256.empty())
    result["incumbent"] = {{"sha256", shape.incumbent_sha256},
                           {"speedup_geomean", shape.vs_incumbent},
                           {"workloads", n}};
  return result;
}

inline std::string kernel(const std::string& tag) {
  return "// " + tag +
         "\n#include <kiln/abi.h>\nextern \"C\" int kiln_launch(const kiln_tensor*, "
         "int, const kiln_scalar*, int, cudaStream_t) { return 0; }\n";
}

// Stores a benchmark of `source` and returns its result id.
inline std::string store_result(ResultStore& store, const std::string& source,
                                const ResultShape& shape = {}) {
  NewResult r;
  r.kind = "benchmark";
  r.task_name = bundled_task()->name;
  r.task_sha256 = shape.task_sha256.empty() ? bundled_task()->sha256 : shape.task_sha256;
  r.candidate_source = source;
  r.source_path = "worktree/candidates/fp16_gemm/scratch/kernel.cu";
  r.runner = "http://fake:8000";
  r.job_id = "j-1";
  r.result = benchmark_result(source, shape);
  auto stored = store.insert(r);
  if (!stored) throw std::runtime_error(stored.error().message);
  return stored->id;
}

// Revalidation by storing a result shaped as the test says (the runner's job, faked).
class FakeRevalidator : public Revalidator {
 public:
  FakeRevalidator(ResultStore& store, std::function<ResultShape(const StoredResult&)> shape)
      : store_(store), shape_(std::move(shape)) {}
  Result<std::string> revalidate(const StoredResult& first, const std::string& source,
                                 const std::string& incumbent_source) override {
    std::lock_guard lock(mutex_);
    ++calls;
    incumbents.push_back(incumbent_source);
    if (!fail_with.empty()) return make_error(fail_with);
    ResultShape shape = shape_(first);
    if (!incumbent_source.empty() && side_by_side) {
      shape.incumbent_sha256 = sha256_hex(incumbent_source);
      shape.vs_incumbent = *side_by_side;
    }
    return store_result(store_, source, shape);
  }
  int calls = 0;
  std::vector<std::string> incumbents;  // the incumbent source each call was given
  std::optional<double> side_by_side;   // set: the job timed the incumbent, at this ratio
  std::string fail_with;

 private:
  ResultStore& store_;
  std::function<ResultShape(const StoredResult&)> shape_;
  std::mutex mutex_;
};

// Same speedup as the first measurement.
inline std::function<ResultShape(const StoredResult&)> reproduces() {
  return [](const StoredResult& first) {
    ResultShape shape;
    shape.speedup = first.geomean_speedup.value_or(1);
    return shape;
  };
}

// PTX "compiled" by a table: sources map to fingerprints; others hash their own text.
class FakePtx : public PtxHasher {
 public:
  Result<std::string> fingerprint(const std::string& source) override {
    if (!error.empty()) return make_error(error);
    auto it = same_as.find(source);
    return sha256_hex(it == same_as.end() ? source : it->second);
  }
  std::map<std::string, std::string> same_as;  // source -> the source whose PTX it has
  std::string error;
};

// A worktree as kiln setup makes it: candidates/fp16_gemm/{scratch,frontier} and a commit.
inline void make_worktree(const std::filesystem::path& dir) {
  write_text(dir / "candidates" / "fp16_gemm" / "scratch" / "kernel.cu", kernel("starter"));
  write_text(dir / "candidates" / "fp16_gemm" / "frontier" / ".gitkeep", "");
  auto status = Worktree(dir).init("run: fp16_gemm");
  if (!status) throw std::runtime_error(status.error().message);
}

}  // namespace kiln::frontier::testing
