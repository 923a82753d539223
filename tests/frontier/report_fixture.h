// A run directory with something to report, for the run report's tests (tests/frontier) and its
// browser test (tests/apps): the manifest of the bundled fp16_gemm task, a worktree, benchmark
// results of every kind (scored, a subset, a failed gate), two frontier members recorded through
// RunFrontier (each revalidated by the fake job), a refusal, and a recorded session with tool
// calls that succeed, fail, error and never get an answer. Hostile text is put where an agent
// could put it (a reason, a tool name) so the page's escaping is tested on real data.
#pragma once

#include <string>
#include <vector>

#include "frontier_fixture.h"
#include "kiln/frontier/run_manifest.h"

namespace kiln::frontier::testing {

inline constexpr const char* kHostileReason =
    "beats <script>alert('reason')</script> & \"quotes\" </script><!--";
inline constexpr const char* kHostileTool = "</script><img src=x onerror=alert(1)>";

struct ReportRun {
  std::vector<std::string> benchmark_ids;  // every benchmark result stored, oldest first
  std::string starter_id;
  std::string subset_id;
  std::string failed_id;
  std::string tiled_id;
};

inline void write_report_manifest(const std::filesystem::path& run) {
  const auto& task = *bundled_task();
  RunManifest m;
  m.run_id = "report-run";
  m.created = "2026-12-01T10:00:00.000Z";
  m.task_name = task.name;
  m.task_sha256 = task.sha256;
  m.task_dir = task.dir;
  auto files = task_file_hashes(task);
  if (!files) throw std::runtime_error(files.error().message);
  m.task_files = *files;
  m.kiln_version = "0.test";
  m.tools = {"benchmark", "record_candidate"};
  auto written = write_manifest(run, m);
  if (!written) throw std::runtime_error(written.error().message);
}

// The session recording: `kiln mcp --record` lines, one tool call of each outcome.
inline std::string recorded_session() {
  auto call = [](int id, const std::string& tool, const std::string& ts) {
    json line = {{"ts", ts},
                 {"dir", "in"},
                 {"message",
                  {{"jsonrpc", "2.0"},
                   {"id", id},
                   {"method", "tools/call"},
                   {"params", {{"name", tool}, {"arguments", json::object()}}}}}};
    return line.dump() + "\n";
  };
  auto answer = [](int id, const json& body, const std::string& ts) {
    json message = {{"jsonrpc", "2.0"}, {"id", id}};
    message.update(body);
    return json{{"ts", ts}, {"dir", "out"}, {"message", message}}.dump() + "\n";
  };
  const json ok = {{"result", {{"content", json::array()}, {"isError", false}}}};
  const json failed = {{"result", {{"content", json::array()}, {"isError", true}}}};
  const json rpc_error = {{"error", {{"code", -32602}, {"message", "bad arguments"}}}};
  std::string out;
  out += json{{"ts", "2026-12-01T10:00:00.000Z"},
              {"dir", "in"},
              {"message", {{"jsonrpc", "2.0"}, {"id", 0}, {"method", "initialize"}}}}
             .dump() +
         "\n";
  out += call(1, "get_task", "2026-12-01T10:00:01.000Z");
  out += answer(1, ok, "2026-12-01T10:00:01.250Z");
  out += call(2, "compile", "2026-12-01T10:00:02.000Z");
  out += answer(2, failed, "2026-12-01T10:00:04.000Z");
  out += call(3, "compile", "2026-12-01T10:00:05.000Z");
  out += answer(3, ok, "2026-12-01T10:00:06.000Z");
  out += call(4, kHostileTool, "2026-12-01T10:00:07.000Z");
  out += answer(4, rpc_error, "2026-12-01T10:00:07.100Z");
  out += "this line is not a record\n";
  out += call(5, "benchmark", "2026-12-01T10:00:08.000Z");  // never answered
  return out;
}

// Fills `run` (an empty folder) as a run directory with results, members and a session.
inline ReportRun make_report_run(const std::filesystem::path& run) {
  write_report_manifest(run);
  make_worktree(run / "worktree");
  write_text(run / "sessions" / "20261201T100000Z-1.jsonl", recorded_session());

  ReportRun ids;
  auto store_opened = ResultStore::open(run / "results.sqlite");
  if (!store_opened) throw std::runtime_error(store_opened.error().message);
  ResultStore& store = **store_opened;
  RunFrontierConfig config;
  config.store = run / "results.sqlite";
  config.worktree = run / "worktree";
  config.live_log = run / "live.log";
  config.required_gates = benchmark_gates();
  config.techniques = {"simt", "smem_tiling", "tensor_core_mma", "cp_async"};
  auto frontier = RunFrontier::open(config, bundled_task());
  if (!frontier) throw std::runtime_error(frontier.error().message);
  FakeRevalidator revalidator(store, reproduces());
  FakePtx ptx;
  auto record = [&](const std::string& id, const std::string& name, const std::string& approach,
                    const std::string& reason) {
    auto outcome =
        (*frontier)->record({id, name, approach, "a hypothesis", reason}, revalidator, &ptx);
    if (!outcome) throw std::runtime_error(outcome.error().message);
    return *outcome;
  };

  ids.starter_id = store_result(store, kernel("starter"), with_speedup(0.5));
  if (auto o = record(ids.starter_id, "starter", "simt: the starter", "the starter"); !o.accepted())
    throw std::runtime_error("the starter was not accepted: " + o.decision.reason);
  ids.subset_id = store_result(store, kernel("subset"), subset_of(3));
  ids.failed_id =
      store_result(store, kernel("broken"), with_gate(benchmark_gates()[0], "failed", "failed"));
  ids.tiled_id = store_result(store, kernel("tiled"), with_speedup(1.043));
  if (auto o = record(ids.tiled_id, "tiled", "smem_tiling: 64x64 tiles", kHostileReason);
      !o.accepted())
    throw std::runtime_error("tiled was not accepted: " + o.decision.reason);
  record(ids.failed_id, "broken", "simt", "refused: a failed gate");  // a refusal

  RecentQuery all;
  all.kind = "benchmark";
  all.limit = 1000;
  auto stored = store.list_recent(all);
  if (!stored) throw std::runtime_error(stored.error().message);
  for (auto it = stored->rbegin(); it != stored->rend(); ++it) ids.benchmark_ids.push_back(it->id);
  return ids;
}

}  // namespace kiln::frontier::testing
