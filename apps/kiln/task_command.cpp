// kiln task new NAME | kiln task check NAME|DIR: author a task bundle and check everything its
// frozen contract needs (kiln/taskcheck).
#include <iostream>

#include "commands.h"
#include "kiln/base/cache_dir.h"
#include "kiln/base/program_path.h"
#include "kiln/compiler/toolchain.h"
#include "kiln/runner/runner_selector.h"
#include "kiln/taskcheck/scaffold.h"
#include "kiln/taskcheck/task_check.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

struct NewOptions {
  std::string name;
  std::string from;
  std::string like;
  std::string dir = ".";
};

struct CheckCommandOptions {
  std::string task;
  std::string report_dir;
  std::string work_dir;
  std::vector<std::string> sim_workloads;
  uint64_t seed = 1;
  double sim_time_limit = 300;
  int repeats = 2;
  std::optional<double> max_cv;  // unset: the task's max_cv, else the default
  bool no_gpu = false;
  bool require_gpu = false;
};

// A folder holding task.json, else the bundle of that name among the tasks.
fs::path resolve_bundle(const std::string& given, const GlobalOptions& global) {
  if (fs::exists(fs::path(given) / "task.json")) return fs::absolute(given);
  return resolve_tasks_dir(global) / given;
}

int run_new(const NewOptions& options, const GlobalOptions& global) {
  taskcheck::ScaffoldOptions scaffold;
  scaffold.name = options.name;
  scaffold.parent = options.dir;
  if (!options.like.empty()) scaffold.like = resolve_bundle(options.like, global);
  scaffold.from = options.from;
  auto made = taskcheck::scaffold_task(scaffold);
  if (!made) {
    std::cerr << "kiln task new: " << made.error().message << "\n";
    return 1;
  }
  std::cout << "made task bundle " << options.name << " in " << made->string() << "\n"
            << (options.like.empty()
                    ? "  a working example (y = alpha * x in f32): replace the computation in "
                      "task.json, reference.cpp, baseline.cu and starter.cu\n"
                    : "  a copy of " + options.like + ": change what differs\n")
            << (options.from.empty() ? "" : "  starter: " + options.from + "\n")
            << "  README.md explains every field of task.json; tasks/FORMAT.md is the reference\n"
            << "next: fill in every TODO, then  kiln task check " << made->string() << "\n";
  return 0;
}

int run_check(const CheckCommandOptions& options, const GlobalOptions& global) {
  const fs::path bundle = resolve_bundle(options.task, global);
  if (!fs::exists(bundle / "task.json")) {
    std::cerr << "kiln task check: no task.json in " << bundle.string()
              << "; pass a bundle folder or a task name (see `kiln tasks list`)\n";
    return 2;
  }
  auto toolchain = compiler::probe_toolchain();
  if (!toolchain) {
    std::cerr << "kiln task check: " << toolchain.error().message << "\n";
    return 2;
  }
  taskcheck::CheckOptions check;
  check.toolchain = *toolchain;
  check.sim_runner = program_beside_self("kiln-sim-run");
  check.work_dir =
      options.work_dir.empty() ? default_cache_dir() / "task-check" : fs::path(options.work_dir);
  check.sim_workloads = options.sim_workloads;
  check.seed = options.seed;
  check.sim_time_limit_s = options.sim_time_limit;
  check.repeats = options.repeats;
  check.max_cv = options.max_cv;
  check.kiln_version = version();
  if (!options.no_gpu)
    check.runner =
        runner::runner_settings_from_environment({}, true, program_beside_self("kiln-worker"));
  check.progress = [](const std::string& line) { std::cout << line << std::endl; };

  const taskcheck::CheckReport report = taskcheck::check_task(bundle, check);
  const fs::path report_dir = options.report_dir.empty()
                                  ? fs::current_path() / (report.task + "-check")
                                  : fs::path(options.report_dir);
  std::cout << "\n" << report.to_text();
  if (auto written = taskcheck::write_report(report, report_dir); !written)
    std::cerr << "kiln task check: " << written.error().message << "\n";
  else
    std::cout << "report: " << (report_dir / "report.json").string() << " and report.txt\n";
  if (!report.sha256.empty()) std::cout << "freeze: sha256 " << report.sha256 << "\n";
  if (report.any(taskcheck::StepState::kFlagged)) {
    std::cerr << "kiln task check: FLAGGED: a wrong candidate passed; this task must not be "
                 "frozen as it is\n";
    return 3;
  }
  if (!report.passed()) return 1;
  if (options.require_gpu && !report.complete()) return 4;
  return 0;
}

}  // namespace

Runner add_task_command(CLI::App& app, const GlobalOptions& global) {
  auto* command = app.add_subcommand("task", "Author and check a task bundle");
  command->require_subcommand(1);

  auto made = std::make_shared<NewOptions>();
  auto* create = command->add_subcommand(
      "new",
      "Scaffold a task bundle (task.json, reference.cpp, baseline.cu, starter.cu, README.md)");
  create->add_option("name", made->name, "the task's name, [a-z0-9_]+")->required();
  create
      ->add_option("--from", made->from,
                   "a kernel.cu (exporting kiln_launch) to use as the starter")
      ->check(CLI::ExistingFile);
  create->add_option("--like", made->like, "a task (name or folder) to copy as the starting point");
  create->add_option("--dir", made->dir, "where the bundle's folder is made")
      ->capture_default_str();

  auto checked = std::make_shared<CheckCommandOptions>();
  auto* check = command->add_subcommand(
      "check",
      "Check a task bundle for freezing: loader, builds, starter on the simulator, negative tests "
      "(a broken and wrong candidates must be refused), and with a GPU or KILN_RUNNER full "
      "benchmarks. Exit 0: passed (GPU steps may be not run), 1: failed, 3: flagged (a wrong "
      "candidate passed), 4: --require-gpu and a step not run");
  check->add_option("task", checked->task, "a bundle folder or a task name")->required();
  check->add_option("--report-dir", checked->report_dir,
                    "where report.json and report.txt go (default: ./NAME-check)");
  check->add_option("--work-dir", checked->work_dir,
                    "builds, cached between checks (default: kiln's cache/task-check)");
  check->add_option("--sim-workload", checked->sim_workloads,
                    "run only these sim_workloads (repeatable; default: all)");
  check->add_option("--seed", checked->seed, "seed of the simulator's input draws")
      ->capture_default_str();
  check
      ->add_option("--sim-time-limit", checked->sim_time_limit,
                   "seconds one kiln-sim-run may take, building included")
      ->capture_default_str();
  check->add_option("--repeats", checked->repeats, "full benchmarks of the starter on the GPU")
      ->capture_default_str()
      ->check(CLI::Range(1, 10));
  check
      ->add_option("--max-cv", checked->max_cv,
                   "timing budget per workload (each median's 95% interval, and the medians' CV "
                   "over repeats); default: the task.json's max_cv, else 0.05")
      ->check(CLI::Range(1e-6, 0.5));
  check->add_flag("--no-gpu", checked->no_gpu, "skip the GPU steps (reported not run)");
  check->add_flag("--require-gpu", checked->require_gpu,
                  "exit 4 unless every step ran (for the machine that freezes the task)");

  return [create, made, checked, &global]() -> int {
    if (create->parsed()) return run_new(*made, global);
    return run_check(*checked, global);
  };
}

}  // namespace kiln::cli
