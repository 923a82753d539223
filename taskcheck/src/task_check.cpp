#include "kiln/taskcheck/task_check.h"

#include <chrono>
#include <ctime>

#include "gpu_checks.h"
#include "kiln/base/elapsed.h"
#include "kiln/base/file.h"
#include "kiln/base/sha256.h"
#include "kiln/compiler/compile_candidate.h"
#include "kiln/compiler/kernel_build.h"
#include "kiln/runner/runner_client.h"
#include "kiln/taskcheck/wrong_candidate.h"
#include "kiln/tasks/task.h"
#include "sim_run.h"

namespace kiln::taskcheck {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

// Records steps and says each one as it ends.
class Recipe {
 public:
  Recipe(CheckReport& report, const CheckOptions& options) : report_(report), options_(options) {}

  void say(const std::string& line) const {
    if (options_.progress) options_.progress(line);
  }
  void start(const std::string& title) {
    started_ = Clock::now();
    say("... " + title);
  }
  Step& add(Step step, bool timed = true) {
    if (timed) step.seconds = seconds_since(started_);
    report_.steps.push_back(std::move(step));
    const Step& s = report_.steps.back();
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f s", s.seconds);
    say(state_text(s.state) + ": " + s.title + " (" + seconds + ")" +
        (s.state == StepState::kPassed || s.detail.empty() ? "" : ": " + s.detail));
    return report_.steps.back();
  }

 private:
  CheckReport& report_;
  const CheckOptions& options_;
  Clock::time_point started_ = Clock::now();
};

Step make_step(std::string id, std::string title, StepState state, std::string detail) {
  return Step{std::move(id), std::move(title), state, std::move(detail), 0, json::object()};
}

// Lines of task.json and README.md that still hold the scaffold's TODO marker.
std::vector<std::string> todo_lines(const tasks::Task& task) {
  std::vector<std::string> out;
  for (const fs::path& file : {task.dir / "task.json", task.readme_path}) {
    auto text = read_file(file);
    if (!text) continue;
    size_t line = 1, begin = 0;
    for (size_t i = 0; i <= text->size(); ++i) {
      if (i == text->size() || (*text)[i] == '\n') {
        if (text->substr(begin, i - begin).find("TODO") != std::string::npos)
          out.push_back(file.filename().string() + ":" + std::to_string(line));
        begin = i + 1;
        ++line;
      }
    }
  }
  return out;
}

// A build folder per source text: a check of an edited bundle rebuilds only what changed.
fs::path keyed(const fs::path& work, const std::string& kind, const std::string& text) {
  return work / (kind + "-" + sha256_hex(text).substr(0, 16));
}

Step build_step(const compiler::KernelBuild& builder, const tasks::Task& task,
                compiler::BuildKind kind, const fs::path& source, const fs::path& work,
                const std::string& id, const std::string& title, fs::path* library) {
  auto text = read_file(source);
  if (!text) return make_step(id, title, StepState::kFailed, text.error().message);
  const fs::path dir = keyed(work, id, *text);
  compiler::BuildRequest request;
  request.kind = kind;
  request.source = source;
  request.build_dir = dir;
  request.arch = task.arch;
  if (kind == compiler::BuildKind::kBaseline) request.libraries = task.baseline_libraries;
  if (kind == compiler::BuildKind::kCandidate) request.banned_prefixes = task.banned_symbols;
  const compiler::BuildOutcome outcome = builder.build(request);
  Step step = make_step(id, title, outcome.ok ? StepState::kPassed : StepState::kFailed, "");
  step.data = {{"cached", outcome.cached}, {"build_seconds", outcome.seconds}};
  if (outcome.ok) {
    step.detail = (outcome.cached ? "cached build of " : "built ") + source.filename().string() +
                  (kind == compiler::BuildKind::kReference ? " with " + builder.toolchain().cxx
                                                           : " for " + task.arch);
    if (library) *library = outcome.library;
  } else {
    step.detail = outcome.error + (outcome.log.empty() ? "" : "\n" + outcome.log.substr(0, 2000));
  }
  return step;
}

// kiln-sim-run on one candidate source (written to `dir`).
SimOutcome simulate(const CheckOptions& options, const tasks::Task& task, const fs::path& dir,
                    const std::string& source, const fs::path& reference) {
  std::error_code error;
  fs::create_directories(dir, error);
  const fs::path file = dir / "kernel.cu";
  if (auto written = write_file(file, source); !written) {
    SimOutcome out;
    out.problem = written.error().message;
    return out;
  }
  SimRequest request;
  request.program = options.sim_runner;
  request.task_dir = task.dir;
  request.source = file;
  request.build_dir = dir / "build";
  request.reference = reference;
  request.workloads = options.sim_workloads;
  request.seed = options.seed;
  request.time_limit_s = options.sim_time_limit_s;
  return run_sim(request);
}

Step judge_sim_starter(const SimOutcome& sim) {
  Step step = make_step("sim_starter", "the starter passes simulate on the sim workloads",
                        StepState::kPassed, "");
  step.data = {{"passed", sim.passed}, {"total", sim.total}, {"sim_seconds", sim.seconds}};
  if (!sim.ran || !sim.problem.empty()) {
    step.state = StepState::kFailed;
    step.detail = (sim.stage.empty() ? "" : "at " + sim.stage + ": ") + sim.problem;
  } else if (sim.passed != sim.total || sim.total == 0) {
    step.state = StepState::kFailed;
    step.detail = std::to_string(sim.passed) + "/" + std::to_string(sim.total) +
                  " workloads passed: " + workload_summary(sim.report, true);
  } else {
    step.detail = std::to_string(sim.total) + "/" + std::to_string(sim.total) +
                  " workloads passed: " + workload_summary(sim.report, false);
  }
  return step;
}

Step judge_sim_wrong(const WrongCandidate& wrong, const SimOutcome& sim) {
  Step step =
      make_step("sim_negative:" + wrong.name,
                "simulate refuses " + wrong.name + " (" + wrong.what + ")", StepState::kPassed, "");
  step.data = {{"passed", sim.passed}, {"total", sim.total}, {"sim_seconds", sim.seconds}};
  if (!sim.ran || !sim.problem.empty()) {
    // kiln wrote this candidate from the starter: not running it is kiln's or the bundle's
    // problem, never a refusal.
    step.state = StepState::kFailed;
    step.detail = "the wrong candidate did not run" +
                  (sim.stage.empty() ? std::string() : " (stage " + sim.stage + ")") + ": " +
                  sim.problem.substr(0, 1500);
  } else if (sim.passed == sim.total) {
    step.state = StepState::kFlagged;
    step.detail = "it PASSED all " + std::to_string(sim.total) +
                  " sim workloads: the task's tolerance (atol, rtol, max_mismatch_fraction) lets "
                  "this wrong output through";
  } else {
    step.detail = "refused on " + std::to_string(sim.total - sim.passed) + "/" +
                  std::to_string(sim.total) + " workloads: " + workload_summary(sim.report, true);
  }
  return step;
}

Step negative_compile(const CheckOptions& options, const tasks::Task& task,
                      const std::string& starter, const fs::path& cache) {
  int line = 0;
  compiler::CompileRequest request;
  request.source = broken_candidate(starter, &line);
  request.file_name = "kernel.cu";
  request.arch = task.arch;
  request.abi_include = options.toolchain.abi_include;
  request.toolchain = options.toolchain;
  request.cache_root = cache;
  Step step = make_step("negative_compile",
                        "a candidate that does not compile is refused with a diagnostic",
                        StepState::kPassed, "");
  auto result = compiler::compile_candidate(request);
  if (!result) {
    step.state = StepState::kFailed;
    step.detail = "kiln could not try the compile: " + result.error().message;
    return step;
  }
  const compiler::Diagnostic* hit = nullptr;
  for (const auto& d : result->diagnostics)
    if (d.is_error() && d.line == line) hit = &d;
  if (result->ok) {
    step.state = StepState::kFailed;
    step.detail = "the broken candidate compiled: kiln's compile step is not working";
  } else if (!hit) {
    step.state = StepState::kFailed;
    step.detail = "the compile failed, but no error diagnostic names line " + std::to_string(line) +
                  " of kernel.cu: " + result->log.substr(0, 600);
  } else {
    step.detail = "refused: " + hit->to_string().substr(0, 300);
  }
  return step;
}

}  // namespace

double stability_budget(const tasks::Task& task, const CheckOptions& options, std::string* source) {
  const auto [value, from] =
      options.max_cv ? std::pair<double, const char*>{*options.max_cv, "--max-cv"}
      : task.max_cv  ? std::pair<double, const char*>{*task.max_cv, "task.json max_cv"}
                     : std::pair<double, const char*>{kDefaultMaxCv, "default"};
  if (source != nullptr) *source = from;
  return value;
}

CheckReport check_task(const fs::path& bundle, const CheckOptions& options) {
  const auto started = Clock::now();
  CheckReport report;
  report.dir = fs::absolute(bundle).lexically_normal();
  report.task = report.dir.filename().string();
  report.kiln_version = options.kiln_version;
  report.created = utc_now();
  Recipe recipe(report, options);

  // 1. The loader.
  recipe.start("loading " + report.dir.string());
  auto loaded = tasks::load_task(report.dir);
  if (!loaded) {
    recipe.add(make_step("load", "the bundle loads and validates", StepState::kFailed,
                         loaded.error().message));
    report.seconds = seconds_since(started);
    return report;
  }
  const tasks::Task& task = *loaded;
  report.task = task.name;
  report.sha256 = task.sha256;
  recipe.add(make_step("load", "the bundle loads and validates", StepState::kPassed,
                       std::to_string(task.workloads.size()) + " workloads, " +
                           std::to_string(task.sim_workloads.size()) + " sim workloads; sha256 " +
                           task.sha256));

  // 2. No scaffold TODO left.
  recipe.start("looking for TODO markers");
  const auto todos = todo_lines(task);
  std::string where;
  for (const auto& t : todos) where += (where.empty() ? "" : ", ") + t;
  recipe.add(make_step("template", "no TODO left from the scaffold in task.json and README.md",
                       todos.empty() ? StepState::kPassed : StepState::kFailed,
                       todos.empty() ? "" : "TODO at " + where + ": fill them in"));

  auto starter = read_file(task.starter_path);
  auto baseline = read_file(task.baseline_path);
  if (!starter || !baseline) {
    recipe.add(make_step("read", "the starter and the baseline can be read", StepState::kFailed,
                         (starter ? baseline : starter).error().message));
    report.seconds = seconds_since(started);
    return report;
  }

  // 3. Builds, as the worker builds them.
  const fs::path& work = options.work_dir;
  const compiler::KernelBuild builder(options.toolchain);
  fs::path reference_so, ignored;
  recipe.start("building the CPU reference");
  const bool reference_built =
      recipe
          .add(build_step(builder, task, compiler::BuildKind::kReference, task.reference_path, work,
                          "build_reference",
                          "the CPU reference builds (" + builder.toolchain().cxx + ")",
                          &reference_so))
          .state == StepState::kPassed;
  recipe.start("building the baseline");
  recipe.add(build_step(builder, task, compiler::BuildKind::kBaseline, task.baseline_path, work,
                        "build_baseline", "the baseline builds for " + task.arch, &ignored));
  recipe.start("building the starter");
  recipe.add(build_step(
      builder, task, compiler::BuildKind::kCandidate, task.starter_path, work, "build_starter",
      "the starter builds for " + task.arch + " and passes the banned_symbols gate", &ignored));
  if (!task.gpu_reference_path.empty()) {
    recipe.start("building the GPU reference");
    recipe.add(build_step(builder, task, compiler::BuildKind::kGpuReference,
                          task.gpu_reference_path, work, "build_gpu_reference",
                          "the GPU reference builds for " + task.arch, &ignored));
  }

  // 4. A candidate that does not compile.
  recipe.start("compiling a broken candidate");
  recipe.add(negative_compile(options, task, *starter, work / "compile-cache"));

  // 5. The simulator: the starter, then each wrong candidate.
  const auto wrong = wrong_candidates(task, *starter);
  const fs::path reference = reference_built ? reference_so : fs::path();
  recipe.start("simulating the starter");
  const SimOutcome starter_sim =
      simulate(options, task, keyed(work, "sim", *starter), *starter, reference);
  const bool starter_ok = recipe.add(judge_sim_starter(starter_sim)).state == StepState::kPassed;
  for (size_t i = 0; i < wrong.size(); ++i) {
    recipe.start("simulating wrong candidate " + wrong[i].name);
    if (!starter_ok) {
      recipe.add(make_step("sim_negative:" + wrong[i].name, "simulate refuses " + wrong[i].name,
                           StepState::kNotRun,
                           "the starter does not pass simulate, so a refusal would prove "
                           "nothing; fix the starter first"));
      continue;
    }
    recipe.add(judge_sim_wrong(
        wrong[i],
        simulate(options, task, keyed(work, "sim", wrong[i].source), wrong[i].source, reference)));
  }

  // 6. The GPU.
  GpuInputs inputs{&task, *starter, *baseline, wrong, broken_candidate(*starter)};
  if (!options.runner || (options.runner->urls.empty() && !options.runner->local)) {
    const std::string why =
        !options.runner ? "not run: the GPU steps were turned off (--no-gpu)"
                        : "not run (no GPU): no runner is configured (KILN_RUNNER) and this "
                          "machine has no GPU with kiln-worker";
    for (auto& step : gpu_steps_not_run(inputs, why)) recipe.add(std::move(step), false);
  } else {
    runner::RunnerSelector selector(*options.runner);
    JobRunner run_job = [&](const json& body) -> Result<json> {
      auto choice = selector.choose();
      if (!choice) return choice.error();
      runner::RunCallbacks callbacks;
      callbacks.on_event = [&](const json& event) {
        if (event.value("event", "") == "progress")
          recipe.say("    " + event.value("workload", "") + " " + event.value("message", ""));
      };
      auto outcome = choice->client.run(body, callbacks);
      if (!outcome) return outcome.error();
      return outcome->result;
    };
    for (auto& step : gpu_steps(inputs, options, run_job)) recipe.add(std::move(step), false);
  }
  report.seconds = seconds_since(started);
  return report;
}

}  // namespace kiln::taskcheck
