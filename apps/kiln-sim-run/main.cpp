// kiln-sim-run: run a candidate on the CPU simulator at a task's small workloads and compare
// with the CPU reference. Prints one JSON report on stdout (what the simulate tool returns).
//
//   kiln-sim-run --task tasks/fp16_gemm | --task zoo:ID --zoo-dir kb/zoo
//                (--source kernel.cu | --candidate kernel.so)
//                [--workload NAME]... [--dims M=256,N=256,K=256]... [--seed N] [--reference
//                reference.so] [--build-dir DIR]
//                [--instruction-budget N] [--time-limit SECONDS] [--progress]
//                [--racecheck | --synccheck [--schedules N] [--explore KIND] [--depth D]
//                 [--replay LABEL]]
//
// The candidate's host code runs in this process, so whatever it prints goes to stderr: stdout
// carries only the report (and, with --progress, one JSON line per step before it).
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "candidate_build.h"
#include "kiln/compiler/kernel_build.h"
#include "kiln/tasks/shape.h"
#include "kiln/tasks/task.h"
#include "kiln/tasks/zoo_task.h"
#include "kiln/zoo/references.h"
#include "racecheck_run.h"
#include "synccheck_run.h"
#include "workload_run.h"

namespace {

constexpr const char* kUsage =
    "usage: kiln-sim-run --task DIR|zoo:ID [--zoo-dir DIR] (--source kernel.cu | --candidate "
    "kernel.so)\n"
    "                    [--workload NAME]... [--dims DIM=N,...]... [--seed N]\n"
    "                    [--reference reference.so]\n"
    "                    [--build-dir DIR] [--instruction-budget N] [--time-limit SECONDS]\n"
    "                    [--progress] [--racecheck | --synccheck [--schedules N]\n"
    "                    [--explore random|pct|exhaustive] [--depth D] | --replay LABEL]\n"
    "  --task zoo:ID         zoo entry ID's meta.json test block as the task (its first test\n"
    "                        shape the sim workload), checked against its op's CPU reference\n"
    "                        in kb/zoo/references; --zoo-dir is the zoo folder (kb/zoo)\n"
    "  --build-dir           where the candidate and the reference are built (default: a fresh\n"
    "                        private folder, removed at exit, so concurrent runs never share\n"
    "                        a build)\n"
    "  --workload            a sim_workload of the task by name (default: all of them)\n"
    "  --dims                an ad-hoc small shape naming every dim of the task, e.g.\n"
    "                        M=256,N=256,K=256; with --dims only the named workloads run\n"
    "  --instruction-budget  warp-instructions per kernel launch before it is stopped (0: none)\n"
    "  --time-limit          wall seconds per kernel launch before it is stopped\n"
    "  --progress            stdout is JSON lines: {\"event\": \"built\"}, then one\n"
    "                        {\"event\": \"workload\", ...} per finished workload, then the "
    "report\n"
    "  --racecheck           run the workloads under the simulator's race detector instead,\n"
    "                        once per warp schedule; the report has verdict, findings and\n"
    "                        schedules (engines/check/README.md)\n"
    "  --synccheck           run the workloads under the simulator's synchronization checker\n"
    "                        (mbarrier protocol, barriers, deadlocks), once per schedule\n"
    "  --schedules           how many schedules --racecheck/--synccheck run (default 3: in order,\n"
    "                        reversed, then schedules of the --explore kind; 1 to 256)\n"
    "  --explore             random (default: rounds of warps in random order, seeded from\n"
    "                        --seed), pct (random priorities with depth-1 change points over the\n"
    "                        synchronization steps, seeded from --seed) or exhaustive (every\n"
    "                        priority order of the warps of a cluster, numbered from 0, until\n"
    "                        they run out or --schedules is reached)\n"
    "  --depth               pct: the deepest bug aimed at (default 3): the pct schedules run\n"
    "                        at depths 1, 2, .., D in turn (depth d: d-1 change points)\n"
    "  --replay              run only the schedule a finding names (\"pct:7:d2\", \"random:3\",\n"
    "                        \"exhaustive:5\", \"reversed\"); keep --seed for the same inputs\n";

// stdout as it was when the process started; fd 1 itself is pointed at stderr so that the
// candidate's printf cannot corrupt the report.
FILE* report_stream = stdout;

void protect_stdout() {
  const int saved = dup(STDOUT_FILENO);
  if (saved < 0) return;
  FILE* stream = fdopen(saved, "w");
  if (stream == nullptr) return;
  std::fflush(stdout);
  if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return;
  report_stream = stream;
}

void emit(const nlohmann::json& value, bool one_line) {
  const std::string text = one_line ? value.dump() : value.dump(2);
  std::fprintf(report_stream, "%s\n", text.c_str());
  std::fflush(report_stream);
}

// `stage` says what could not be done: arguments, task, build_candidate, build_reference,
// load_candidate, load_reference, workloads.
int fail(const std::string& stage, const std::string& message, bool one_line = false) {
  emit({{"ok", false}, {"stage", stage}, {"error", message}}, one_line);
  return 2;
}

// The default build folder: private to this run (mkdtemp), removed when the run ends.
class PrivateBuildDir {
 public:
  PrivateBuildDir() = default;
  PrivateBuildDir(const PrivateBuildDir&) = delete;
  PrivateBuildDir& operator=(const PrivateBuildDir&) = delete;
  ~PrivateBuildDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  // Empty when no folder could be made.
  std::string make() {
    char pattern[] = "/tmp/kiln-sim-run-XXXXXX";
    if (::mkdtemp(pattern) != nullptr) path_ = pattern;
    return path_;
  }

 private:
  std::string path_;
};

bool parse_count(const std::string& text, uint64_t& out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
  out = std::strtoull(text.c_str(), nullptr, 10);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  protect_stdout();
  std::string task_dir, zoo_dir, source, candidate, reference, build_dir;
  std::vector<std::string> workload_names, shapes;
  uint64_t seed = 1;
  bool racecheck = false, synccheck = false;
  uint64_t schedules = 3, depth = kiln::check::kDefaultPctDepth;
  kiln::sim::WarpOrder explore = kiln::sim::WarpOrder::Random;
  bool replay = false;
  kiln::sim::WarpSchedule replay_schedule;
  // Known before the arguments are checked, so that every line on stdout is JSON.
  const bool progress =
      std::find(argv + 1, argv + argc, std::string_view("--progress")) != argv + argc;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fprintf(report_stream, "%s", kUsage);
      return 0;
    }
    if (flag == "--progress") continue;
    if (flag == "--racecheck") {
      racecheck = true;
      continue;
    }
    if (flag == "--synccheck") {
      synccheck = true;
      continue;
    }
    if (i + 1 >= argc)
      return fail("arguments", "option " + std::string(flag) + " needs a value\n" + kUsage,
                  progress);
    const std::string value = argv[++i];
    uint64_t count = 0;
    if (flag == "--task")
      task_dir = value;
    else if (flag == "--zoo-dir")
      zoo_dir = value;
    else if (flag == "--source")
      source = value;
    else if (flag == "--candidate")
      candidate = value;
    else if (flag == "--workload")
      workload_names.push_back(value);
    else if (flag == "--dims")
      shapes.push_back(value);
    else if (flag == "--reference")
      reference = value;
    else if (flag == "--build-dir")
      build_dir = value;
    else if (flag == "--schedules") {
      if (!parse_count(value, schedules) || schedules == 0 || schedules > 256)
        return fail("arguments", "--schedules takes a count from 1 to 256, not '" + value + "'",
                    progress);
    } else if (flag == "--explore") {
      if (!kiln::check::parse_exploration(value, &explore))
        return fail("arguments", "--explore takes random, pct or exhaustive, not '" + value + "'",
                    progress);
    } else if (flag == "--replay") {
      replay = true;
      if (!kiln::check::parse_schedule_label(value, &replay_schedule))
        return fail("arguments",
                    "--replay takes a schedule label from a finding (in_order, reversed, "
                    "random:SEED, pct:SEED:dDEPTH, exhaustive:N), not '" +
                        value + "'",
                    progress);
    } else if (flag == "--depth") {
      if (!parse_count(value, depth) || depth == 0 || depth > 16)
        return fail("arguments", "--depth takes a count from 1 to 16, not '" + value + "'",
                    progress);
    } else if (flag == "--seed" || flag == "--instruction-budget") {
      if (!parse_count(value, count))
        return fail("arguments",
                    std::string(flag) + " takes a non-negative integer, not '" + value + "'",
                    progress);
      if (flag == "--seed") seed = count;
      // Read by the simulated runtime when it creates the device, on the first CUDA call.
      else
        setenv("KILN_SIM_INSTRUCTION_BUDGET", value.c_str(), 1);
    } else if (flag == "--time-limit") {
      char* end = nullptr;
      const double seconds = std::strtod(value.c_str(), &end);
      if (end == value.c_str() || *end != '\0' || !(seconds > 0))
        return fail("arguments",
                    "--time-limit takes a positive number of seconds, not '" + value + "'",
                    progress);
      setenv("KILN_SIM_TIME_LIMIT", value.c_str(), 1);
    } else {
      return fail("arguments", "unknown option " + std::string(flag) + "\n" + kUsage, progress);
    }
  }
  if (task_dir.empty())
    return fail("arguments", std::string("--task is required\n") + kUsage, progress);
  if (racecheck && synccheck)
    return fail("arguments", "give one of --racecheck, --synccheck (run them one after the other)",
                progress);
  if (source.empty() == candidate.empty())
    return fail("arguments", "give exactly one of --source, --candidate", progress);

  const bool zoo = kiln::tasks::is_zoo_task_name(task_dir);
  if (zoo && zoo_dir.empty())
    return fail("arguments", "--task zoo:ID needs --zoo-dir (the kb/zoo folder)", progress);
  auto task =
      zoo ? kiln::tasks::load_zoo_task(zoo_dir, task_dir.substr(kiln::tasks::kZooTaskPrefix.size()))
          : kiln::tasks::load_task(task_dir);
  if (!task) return fail("task", task.error().message, progress);
  // A zoo task's reference is its op's, linked in; a bundle's is built from reference.cpp.
  kiln_reference_fn zoo_reference = nullptr;
  if (zoo) {
    zoo_reference = kiln::zoo::find_zoo_reference(task->zoo_op);
    if (zoo_reference == nullptr)
      return fail("zoo_reference",
                  "op " + task->zoo_op + " of zoo entry " + task->name +
                      " has no CPU reference in kb/zoo/references; add one there (and to its "
                      "registry) to simulate the entry",
                  progress);
  }

  std::string known;
  for (const auto& workload : task->sim_workloads) known += " " + workload.name;
  for (const std::string& name : workload_names)
    if (std::none_of(task->sim_workloads.begin(), task->sim_workloads.end(),
                     [&](const auto& workload) { return workload.name == name; }))
      return fail("workloads",
                  task->name + " has no sim_workload '" + name + "'; its sim_workloads:" + known,
                  progress);
  std::vector<kiln::tasks::Workload> workloads;
  for (const auto& workload : task->sim_workloads)
    if ((workload_names.empty() && shapes.empty()) ||
        std::find(workload_names.begin(), workload_names.end(), workload.name) !=
            workload_names.end())
      workloads.push_back(workload);
  for (const std::string& text : shapes) {
    auto shape = kiln::tasks::parse_shape(*task, text);
    if (!shape) return fail("workloads", shape.error().message, progress);
    workloads.push_back(std::move(*shape));
  }
  if (workloads.empty())
    return fail("workloads", task->name + " has no sim_workloads; add some to its task.json",
                progress);

  PrivateBuildDir private_build_dir;
  if (build_dir.empty()) {
    build_dir = private_build_dir.make();
    if (build_dir.empty())
      return fail("build_candidate",
                  "cannot make a private build folder under /tmp; pass --build-dir DIR", progress);
  }
  const auto build_start = std::chrono::steady_clock::now();
  const auto toolchain = kiln::compiler::toolchain_from_environment(argv[0]);
  if (!source.empty()) {
    kiln::sim::run::CandidateBuild builder{toolchain.nvcc_path(), toolchain.abi_include,
                                           kiln::sim::run::loaded_runtime_library()};
    auto built = builder.build(source, std::filesystem::path(build_dir) / "candidate.so");
    if (!built) return fail("build_candidate", built.error().message, progress);
    candidate = built->string();
  }
  if (reference.empty() && !zoo) {
    kiln::compiler::KernelBuild builder(toolchain);
    kiln::compiler::BuildRequest request;
    request.kind = kiln::compiler::BuildKind::kReference;
    request.source = task->reference_path;
    request.build_dir = std::filesystem::path(build_dir) / "reference";
    auto outcome = builder.build(request);
    if (!outcome.ok)
      return fail("build_reference",
                  "building the CPU reference: " + outcome.error + "\n" + outcome.log, progress);
    reference = outcome.library.string();
  }

  void* candidate_library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (candidate_library == nullptr)
    return fail("load_candidate",
                std::string("loading the candidate: ") + dlerror() +
                    " (build it with the recipe in engines/sim/runtime/README.md)",
                progress);
  kiln::sim::run::WorkloadRunner runner;
  runner.task = &*task;
  runner.launch = reinterpret_cast<kiln_launch_fn>(dlsym(candidate_library, "kiln_launch"));
  runner.reference = zoo_reference;
  if (!zoo || !reference.empty()) {
    void* reference_library = dlopen(reference.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (reference_library == nullptr)
      return fail("load_reference", std::string("loading the CPU reference: ") + dlerror(),
                  progress);
    runner.reference =
        reinterpret_cast<kiln_reference_fn>(dlsym(reference_library, "kiln_reference"));
  }
  runner.seed = seed;
  if (runner.launch == nullptr)
    return fail("load_candidate",
                "the candidate exports no kiln_launch; define extern \"C\" int kiln_launch(...) "
                "as kiln/abi.h declares",
                progress);
  if (runner.reference == nullptr)
    return fail("load_reference", "the reference exports no kiln_reference", progress);
  if (progress) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - build_start).count();
    emit({{"event", "built"}, {"seconds", seconds}, {"total", workloads.size()}}, true);
  }

  if (racecheck) {
    kiln::sim::run::RacecheckOptions options;
    options.schedules = static_cast<uint32_t>(schedules);
    options.seed = seed;
    options.explore = explore;
    options.depth = static_cast<uint32_t>(depth);
    options.replay = replay;
    options.replay_schedule = replay_schedule;
    auto checked =
        kiln::sim::run::run_racecheck(runner, workloads, options, [&](const nlohmann::json& line) {
          if (progress) emit(line, true);
        });
    if (!checked) return fail("racecheck", checked.error().message, progress);
    nlohmann::json report = {{"ok", true},
                             {"engine", "sim"},
                             {"task", task->name},
                             {"candidate", candidate},
                             {"seed", seed}};
    report.update(*checked);
    emit(report, progress);
    return report["verdict"] == "clean" ? 0 : 1;
  }

  if (synccheck) {
    kiln::sim::run::SynccheckOptions options;
    options.schedules = static_cast<uint32_t>(schedules);
    options.seed = seed;
    options.explore = explore;
    options.depth = static_cast<uint32_t>(depth);
    options.replay = replay;
    options.replay_schedule = replay_schedule;
    auto checked =
        kiln::sim::run::run_synccheck(runner, workloads, options, [&](const nlohmann::json& line) {
          if (progress) emit(line, true);
        });
    if (!checked) return fail("synccheck", checked.error().message, progress);
    nlohmann::json report = {{"ok", true},
                             {"engine", "sim"},
                             {"task", task->name},
                             {"candidate", candidate},
                             {"seed", seed}};
    report.update(*checked);
    emit(report, progress);
    return report["verdict"] == "clean" ? 0 : 1;
  }

  nlohmann::json results = nlohmann::json::array();
  int passed = 0;
  for (size_t i = 0; i < workloads.size(); ++i) {
    nlohmann::json result = runner.run(workloads[i]);
    if (result.value("pass", false)) ++passed;
    if (progress)
      emit({{"event", "workload"},
            {"index", i},
            {"total", workloads.size()},
            {"workload", workloads[i].name},
            {"pass", result.value("pass", false)},
            {"status", result.value("status", "")}},
           true);
    results.push_back(std::move(result));
  }
  const nlohmann::json report = {{"ok", true},
                                 {"task", task->name},
                                 {"candidate", candidate},
                                 {"seed", seed},
                                 {"passed", passed},
                                 {"total", workloads.size()},
                                 {"pass", passed == static_cast<int>(workloads.size())},
                                 {"workloads", results}};
  emit(report, progress);
  return report["pass"].get<bool>() ? 0 : 1;
}
