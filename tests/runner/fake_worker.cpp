// kiln_fake_worker: a stand-in for kiln-worker that speaks runner/protocol/PROTOCOL.md without a
// GPU, so the server's supervision can be tested on any machine. What it does is chosen
// per job by a line in the candidate source,
//     // fake-worker: MODE [ARG]
// (or KILN_FAKE_WORKER_MODE when the source has none):
//   pass             stages, one progress event per workload, a passing result (default)
//   sleep MS         as pass, after sleeping MS milliseconds
//   fail             the first workload fails correctness
//   build_error      an error result at stage build
//   hang             stage timing, then sleeps forever
//   spawn_child      forks a child that sleeps forever (pid in fake_child.pid), then hangs
//   crash            stage verify, then SIGSEGV
//   garbage          a line that is not JSON, then a passing result
//   no_result        stages, then exit 0
//   exit_code N      exit N without a result
//   lie_task         a result for another task hash
//   lie_numbers      a speedup that the medians contradict
//   lie_status       status passed with a failed workload
//   events N         N progress events, then a passing result
//   after_result     a log event after the result line
//   no_cupti         as pass, but the activity record could not be kept: activity_record and
//                    hidden_stream_work not run, so the result is passed but unscored
//   lie_scored       claims a score while clock_monitoring did not run
//   sim              as kiln-worker-sim answers: the task's sim_workloads, no CUPTI, unscored;
//                    a job other than verify is refused in its words
//   sanitize_findings  (sanitize jobs) every tool reports one finding on kernel.cu:7
// It writes its pid to JOB_DIR/fake_worker.pid and, when KILN_FAKE_WORKER_LOG names a
// file, appends "start|end JOB GPU STEADY_NS" lines to it (for ordering tests).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "kiln/base/file.h"
#include "kiln/base/sha256.h"
#include "kiln/runner/protocol/gates.h"
#include "kiln/runner/protocol/job_kind.h"
#include "kiln/runner/protocol/simulated_worker.h"
#include "kiln/tasks/task.h"

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

void emit(const json& event) {
  std::string line = event.dump() + "\n";
  ssize_t ignored = write(1, line.data(), line.size());
  (void)ignored;
}

void stage(const std::string& name) { emit({{"event", "stage"}, {"stage", name}}); }

void record(const std::string& what, const std::string& job, int gpu) {
  const char* log = std::getenv("KILN_FAKE_WORKER_LOG");
  if (!log || !*log) return;
  auto now = std::chrono::steady_clock::now().time_since_epoch();
  std::string line =
      what + " " + job + " " + std::to_string(gpu) + " " +
      std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()) + "\n";
  int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t ignored = write(fd, line.data(), line.size());
  (void)ignored;
  close(fd);
}

[[noreturn]] void hang() {
  while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
}

json timing(double median) {
  return {{"median", median},
          {"p5", median * 0.99},
          {"p95", median * 1.01},
          {"cv", 0.004},
          {"samples", 20}};
}

}  // namespace

// The gates a real worker reports for this kind (runner/protocol/gates.h), all passed.
json every_gate_passed(const std::string& kind) {
  namespace protocol = kiln::runner::protocol;
  json gates = json::array();
  if (kind == "verify")
    for (auto name : protocol::kVerifyGates)
      gates.push_back({{"name", name}, {"state", "passed"}, {"passed", true}, {"detail", "fake"}});
  if (kind == "benchmark")
    for (auto name : protocol::kBenchmarkGates)
      gates.push_back({{"name", name}, {"state", "passed"}, {"passed", true}, {"detail", "fake"}});
  return gates;
}

void set_gate(json& result, std::string_view name, const std::string& state,
              const std::string& detail) {
  for (auto& gate : result["gates"])
    if (gate["name"] == name) {
      gate["state"] = state;
      gate["passed"] = state == "passed";
      gate["detail"] = detail;
    }
}

int main(int argc, char** argv) {
  std::string job_path;
  int gpu = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--job") job_path = argv[i + 1];
    if (flag == "--gpu") gpu = std::atoi(argv[i + 1]);
  }
  if (job_path.empty() || gpu < 0) {
    std::fprintf(stderr, "usage: kiln_fake_worker --job JOB.json --gpu N\n");
    return 2;
  }
  auto text = kiln::read_file(job_path);
  if (!text) {
    std::fprintf(stderr, "%s\n", text.error().message.c_str());
    return 2;
  }
  json job = json::parse(*text);
  const fs::path job_dir = fs::path(job_path).parent_path();
  (void)kiln::write_file(job_dir / "fake_worker.pid", std::to_string(getpid()));
  auto task = kiln::tasks::load_task(job["task_dir"].get<std::string>());
  if (!task) {
    std::fprintf(stderr, "fake worker: %s\n", task.error().message.c_str());
    return 4;
  }
  auto source = kiln::read_file(job["candidate"].get<std::string>());
  if (!source) return 5;
  const std::string candidate_sha256 = kiln::sha256_hex(*source);

  std::string mode =
      std::getenv("KILN_FAKE_WORKER_MODE") ? std::getenv("KILN_FAKE_WORKER_MODE") : "pass";
  std::string argument;
  if (auto at = source->find("// fake-worker: "); at != std::string::npos) {
    std::istringstream line(source->substr(at + 16, source->find('\n', at) - at - 16));
    line >> mode >> argument;
  }
  const std::string id = job.value("id", "?");
  record("start", id, gpu);
  std::fprintf(stderr, "fake worker: job %s mode %s on GPU %d\n", id.c_str(), mode.c_str(), gpu);

  std::vector<std::string> workloads = job.value("workloads", std::vector<std::string>{});
  const bool all = workloads.empty();
  if (all)  // mode sim: answers as kiln-worker-sim does, with the task's sim workloads
    for (const auto& w : mode == "sim" ? task->sim_workloads : task->workloads)
      workloads.push_back(w.name);

  json result{
      {"status", "passed"},
      {"stage", "done"},
      {"task", {{"name", task->name}, {"sha256", task->sha256}}},
      {"candidate_sha256", candidate_sha256},
      {"gpu",
       {{"name", "Fake GPU"},
        {"index", gpu},
        {"sm_clock_mhz", {{"min", 1700}, {"median", 1980}, {"max", 1980}}}}},
      {"build", {{"seconds", 0.1}, {"log", "fake nvcc: ok"}, {"registers", 32}, {"spills", 0}}},
      {"gates", every_gate_passed(job.value("kind", "benchmark"))}};

  const auto kind = kiln::runner::protocol::parse_kind(job.value("kind", "benchmark"));
  if (mode == "sim" && kind && *kind != kiln::runner::protocol::JobKind::kVerify) {
    // As kiln-worker-sim refuses a job that needs a GPU: before any stage, in the job's name.
    emit({{"event", "result"},
          {"result",
           {{"status", "error"},
            {"stage", "start"},
            {"error", kiln::runner::protocol::simulated_worker_refusal(*kind)},
            {"task", result["task"]},
            {"candidate_sha256", candidate_sha256}}}});
    return 0;
  }
  stage("build");
  if (mode == "build_error") {
    result["status"] = "error";
    result["stage"] = "build";
    result["error"] = "kernel.cu:3:1: error: expected ';' before '}' token; fix the syntax";
    result["build"]["log"] = "kernel.cu(3): error: expected a \";\"";
    emit({{"event", "result"}, {"result", result}});
    return 0;
  }
  stage("load");
  if (mode == "sleep")
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(argument.c_str())));
  stage("verify");
  if (mode == "crash") {
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
  }
  if (mode == "exit_code") return argument.empty() ? 3 : std::atoi(argument.c_str());
  stage("timing");
  if (mode == "spawn_child") {
    pid_t child = fork();
    if (child == 0) hang();
    (void)kiln::write_file(job_dir / "fake_child.pid", std::to_string(child));
    hang();
  }
  if (mode == "hang") hang();
  if (mode == "garbage") {
    std::string line = "Segmentation fault (core dumped) -- not an event\n";
    ssize_t ignored = write(1, line.data(), line.size());
    (void)ignored;
  }
  if (mode == "no_result") return 0;
  if (mode == "events") {
    int count = std::atoi(argument.c_str());
    for (int i = 1; i <= count; ++i)
      emit({{"event", "progress"},
            {"workload", workloads[0]},
            {"index", i},
            {"total", count},
            {"message", "step " + std::to_string(i)}});
  }
  std::fprintf(stderr, "fake worker: timing %zu workloads\n", workloads.size());

  if (job.value("kind", "") == "profile") {
    std::string workload = job["profile"].value("workload", "");
    emit({{"event", "progress"},
          {"workload", workload},
          {"index", 1},
          {"total", 1},
          {"message", "ncu"}});
    result["profile"] = {
        {"workload", workload},
        {"ncu_version", "fake ncu 1.0"},
        {"kernels", json::array({{{"name", "gemm_kernel"},
                                  {"grid", {128, 1, 1}},
                                  {"block", {256, 1, 1}},
                                  {"duration_us", 210.5},
                                  {"sm_throughput_pct", 78.25},
                                  {"achieved_occupancy_pct", 12.5},
                                  {"registers", 168},
                                  {"shared_dynamic_bytes", 98304},
                                  {"top_stalls", json::array({{{"reason", "long_scoreboard"},
                                                               {"warps_per_issue", 3.5}}})},
                                  {"metrics", {{"l2_hit_rate_pct", 91.0}}}}})},
        {"notes", {"fake: memory-bound"}}};
    result.erase("gates");
  } else if (job.value("kind", "") == "sanitize") {
    const json asked = job.value("sanitize", json::object());
    const std::vector<std::string> tools = asked.value(
        "tools", std::vector<std::string>{"memcheck", "racecheck", "synccheck", "initcheck"});
    json reports = json::array();
    for (const std::string& tool : tools) {
      json findings = json::array();
      if (mode == "sanitize_findings") {
        findings.push_back({{"tool", tool},
                            {"severity", "error"},
                            {"kind", tool == "racecheck"
                                         ? "Race reported between Write access"
                                         : "Barrier error detected. Divergent thread(s) in block."},
                            {"kernel", "reduce(float*)"},
                            {"file", "kernel.cu"},
                            {"line", 7},
                            {"thread", "(3,0,0)"},
                            {"block", "(0,0,0)"},
                            {"count", 1}});
        result["status"] = "failed";
        result["error"] = "compute-sanitizer " + tool + " found a problem";
      }
      reports.push_back(
          {{"tool", tool}, {"findings", findings}, {"distinct_findings", findings.size()}});
    }
    result["sanitize"] = {{"workload", asked.value("workload", workloads.front())},
                          {"tools", reports}};
    result.erase("gates");
  } else {
    json rows = json::array();
    size_t passed = 0;
    double log_sum = 0;
    // An incumbent (job.json `incumbent`) is "timed" 5% slower than the candidate.
    const bool incumbent = job.contains("incumbent");
    const double vs_incumbent = 1.05;
    for (size_t i = 0; i < workloads.size(); ++i) {
      emit({{"event", "progress"},
            {"workload", workloads[i]},
            {"index", i + 1},
            {"total", workloads.size()},
            {"message", "timed"}});
      bool ok = !((mode == "fail" || mode == "lie_status") && i == 0);
      json row{{"name", workloads[i]},
               {"passed", ok},
               {"errors",
                {{"max_abs", ok ? 0.001 : 0.5},
                 {"max_rel", 0.002},
                 {"mismatches", ok ? 0 : 17},
                 {"nan", 0},
                 {"inf", 0}}}};
      if (!ok)
        row["errors"]["first_mismatches"] =
            json::array({{{"index", {0, 3}}, {"expected", 1.5}, {"actual", 0.25}}});
      if (ok) {
        double median = 100.0 + static_cast<double>(i);
        // "faster": an honest 1.3x; "lie_numbers": 10x claimed over times that say 1.1x.
        const double measured = mode == "faster" ? 1.3 : 1.1;
        double speedup = mode == "lie_numbers" ? 10.0 : measured;
        row["time_us"] = timing(median);
        row["baseline_time_us"] = timing(median * measured);
        row["speedup"] = speedup;
        row["tflops"] = 650.0;
        row["pct_of_peak"] = 65.7;
        if (incumbent) {
          row["incumbent_time_us"] = timing(median * vs_incumbent);
          row["speedup_vs_incumbent"] = mode == "lie_incumbent" ? 2.0 : vs_incumbent;
        }
        log_sum += std::log(speedup);
        ++passed;
      }
      rows.push_back(row);
    }
    result["workloads"] = rows;
    if (incumbent)
      result["incumbent"] = {{"sha256", job.value("incumbent_sha256", "")},
                             {"speedup_geomean", passed > 0 ? json(vs_incumbent) : json(nullptr)},
                             {"workloads", passed}};
    bool scored = all && passed == workloads.size();
    result["summary"] = {
        {"passed", passed},
        {"total", workloads.size()},
        {"scored", scored},
        {"geomean_speedup",
         scored ? json(std::exp(log_sum / static_cast<double>(passed))) : json(nullptr)}};
    if (passed != workloads.size() && mode != "lie_status") {
      result["status"] = "failed";
      result["stage"] = "verify";
      result["error"] = "workload " + workloads[0] + ": 17 elements outside atol + rtol*|ref|";
      set_gate(result, kiln::runner::protocol::gate::kCorrectness, "failed",
               "17 elements outside atol + rtol*|ref|");
    }
    if (mode == "no_cupti" || mode == "sim") {
      for (auto gate : {kiln::runner::protocol::gate::kActivityRecord,
                        kiln::runner::protocol::gate::kHiddenStreamWork})
        set_gate(result, gate, "not_run", "not run: CUPTI unavailable (fake)");
      result["summary"]["scored"] = false;
      result["summary"]["geomean_speedup"] = nullptr;
      result["summary"]["unscored_gates"] = {"activity_record: not run: CUPTI unavailable (fake)"};
    }
    if (mode == "lie_scored")
      set_gate(result, kiln::runner::protocol::gate::kClockMonitoring, "not_run",
               "not run: NVML is unavailable");
  }
  if (mode == "lie_task") result["task"]["sha256"] = std::string(64, '0');
  stage("done");
  emit({{"event", "result"}, {"result", result}});
  if (mode == "after_result") emit({{"event", "log"}, {"level", "info"}, {"message", "late"}});
  record("end", id, gpu);
  return 0;
}
