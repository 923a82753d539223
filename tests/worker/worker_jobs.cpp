#include "worker_jobs.h"

#include <future>
#include <sstream>

#include "kiln/compiler/subprocess.h"
#include "worker_test_support.h"

namespace kiln::worker::testing {

using nlohmann::json;

Outcome run_job(const WorkerRun& run, const Job& job) {
  Outcome out;
  const std::filesystem::path dir = run.cache / "jobs" / job.name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  json spec = {{"id", "t-" + job.name},
               {"kind", job.kind},
               {"task_dir", (source_dir() / "tasks" / job.task).string()},
               {"candidate", job.candidate.string()},
               {"build_dir", (run.cache / "builds" / job.name).string()},
               {"workloads", job.workloads},
               {"seed", 20261129},
               {"limits", job.limits}};
  for (const auto& [key, value] : job.extra.items()) spec[key] = value;
  write_text(dir / "job.json", spec.dump(2));
  std::vector<std::string> argv = {run.worker.string(), "--job", (dir / "job.json").string(),
                                   "--gpu", "0"};
  if (run.build_only) argv.push_back("--build-only");
  compiler::ProcessOptions options;
  options.timeout_seconds = 900;
  options.stdout_file = (dir / "stdout.jsonl").string();
  const compiler::ProcessResult process = compiler::run_process(argv, options);
  out.stderr_tail = process.output.size() > 4000
                        ? process.output.substr(process.output.size() - 4000)
                        : process.output;
  if (!process.ok()) {
    out.problem = run.worker.filename().string() + ": " + process.describe();
    return out;
  }
  std::istringstream lines(read_text(dir / "stdout.jsonl"));
  std::string line;
  std::string last;
  while (std::getline(lines, line)) {
    const json event = json::parse(line, nullptr, false);
    if (event.is_discarded()) {
      out.problem = "stdout line is not JSON: " + line.substr(0, 200);
      return out;
    }
    last = line;
  }
  const json event = json::parse(last, nullptr, false);
  if (event.is_discarded() || event.value("event", "") != "result") {
    out.problem = "the last stdout line is not the result";
    return out;
  }
  out.result = event["result"];
  if (!run.results.empty()) {
    std::filesystem::create_directories(run.results);
    write_text(run.results / (job.name + ".json"), out.result.dump(2));
  }
  return out;
}

std::vector<Outcome> run_jobs(const WorkerRun& run, const std::vector<Job>& jobs) {
  std::vector<std::future<Outcome>> running;
  for (const auto& job : jobs)
    running.push_back(std::async(std::launch::async, [&run, job] { return run_job(run, job); }));
  std::vector<Outcome> outcomes;
  for (auto& r : running) outcomes.push_back(r.get());
  return outcomes;
}

std::string gate_state(const json& result, const std::string& gate) {
  for (const auto& g : result.value("gates", json::array())) {
    if (g.value("name", "") == gate)
      return g.value("state", g.value("passed", true) ? "passed" : "failed");
  }
  return "";
}

std::vector<std::string> failed_gates(const json& result) {
  std::vector<std::string> names;
  for (const auto& g : result.value("gates", json::array())) {
    if (g.value("state", g.value("passed", true) ? "passed" : "failed") == "failed")
      names.push_back(g.value("name", ""));
  }
  return names;
}

std::string brief(const Outcome& o) {
  return o.problem + " status=" + o.result.value("status", "?") +
         " error=" + o.result.value("error", "") + "\nstderr: " + o.stderr_tail;
}

}  // namespace kiln::worker::testing
