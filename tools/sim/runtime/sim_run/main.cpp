// kiln-sim-run: run a candidate on the CPU simulator at a task's small workloads and compare
// with the CPU reference. Prints one JSON report on stdout (what the simulate tool returns).
//
//   kiln-sim-run --task tasks/fp16_gemm (--source kernel.cu | --candidate kernel.so)
//                [--workload NAME]... [--seed N] [--reference reference.so] [--build-dir DIR]
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>
#include <algorithm>

#include <dlfcn.h>

#include "candidate_build.h"
#include "kiln/tasks/task.h"
#include "kiln/worker/kernel_build.h"
#include "workload_run.h"

namespace {

constexpr const char* kUsage =
    "usage: kiln-sim-run --task DIR (--source kernel.cu | --candidate kernel.so)\n"
    "                    [--workload NAME]... [--seed N] [--reference reference.so]\n"
    "                    [--build-dir DIR]\n";

int fail(const std::string& message) {
  std::cout << nlohmann::json{{"ok", false}, {"error", message}}.dump(2) << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string task_dir, source, candidate, reference, build_dir = "/tmp/kiln-sim-run";
  std::vector<std::string> workload_names;
  uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::printf("%s", kUsage);
      return 0;
    }
    if (i + 1 >= argc) return fail("option " + std::string(flag) + " needs a value\n" + kUsage);
    const std::string value = argv[++i];
    if (flag == "--task") task_dir = value;
    else if (flag == "--source") source = value;
    else if (flag == "--candidate") candidate = value;
    else if (flag == "--workload") workload_names.push_back(value);
    else if (flag == "--seed") seed = std::strtoull(value.c_str(), nullptr, 10);
    else if (flag == "--reference") reference = value;
    else if (flag == "--build-dir") build_dir = value;
    else return fail("unknown option " + std::string(flag) + "\n" + kUsage);
  }
  if (task_dir.empty()) return fail(std::string("--task is required\n") + kUsage);
  if (source.empty() == candidate.empty()) return fail("give exactly one of --source, --candidate");

  auto task = kiln::tasks::load_task(task_dir);
  if (!task) return fail(task.error().message);

  const auto toolchain = kiln::worker::Toolchain::from_environment(argv[0]);
  if (!source.empty()) {
    kiln::sim::run::CandidateBuild builder{toolchain.nvcc_path(), toolchain.abi_include,
                                           kiln::sim::run::loaded_runtime_library()};
    auto built = builder.build(source, std::filesystem::path(build_dir) / "candidate.so");
    if (!built) return fail(built.error().message);
    candidate = built->string();
  }
  if (reference.empty()) {
    kiln::worker::KernelBuild builder(toolchain);
    kiln::worker::BuildRequest request;
    request.kind = kiln::worker::BuildKind::kReference;
    request.source = task->reference_path;
    request.build_dir = std::filesystem::path(build_dir) / "reference";
    auto outcome = builder.build(request);
    if (!outcome.ok) return fail("building the CPU reference: " + outcome.error + "\n" + outcome.log);
    reference = outcome.library.string();
  }

  void* candidate_library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (candidate_library == nullptr)
    return fail(std::string("loading the candidate: ") + dlerror() +
                " (build it with the recipe in tools/sim/runtime/README.md)");
  void* reference_library = dlopen(reference.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (reference_library == nullptr)
    return fail(std::string("loading the CPU reference: ") + dlerror());
  kiln::sim::run::WorkloadRunner runner;
  runner.task = &*task;
  runner.launch = reinterpret_cast<kiln_launch_fn>(dlsym(candidate_library, "kiln_launch"));
  runner.reference =
      reinterpret_cast<kiln_reference_fn>(dlsym(reference_library, "kiln_reference"));
  runner.seed = seed;
  if (runner.launch == nullptr)
    return fail("the candidate exports no kiln_launch; define extern \"C\" int kiln_launch(...) "
                "as kiln/abi.h declares");
  if (runner.reference == nullptr) return fail("the reference exports no kiln_reference");

  std::vector<kiln::tasks::Workload> workloads;
  for (const auto& workload : task->sim_workloads)
    if (workload_names.empty() ||
        std::find(workload_names.begin(), workload_names.end(), workload.name) !=
            workload_names.end())
      workloads.push_back(workload);
  if (workloads.empty()) return fail("no sim_workload of " + task->name + " matches --workload");

  nlohmann::json results = nlohmann::json::array();
  int passed = 0;
  for (const auto& workload : workloads) {
    nlohmann::json result = runner.run(workload);
    if (result.value("pass", false)) ++passed;
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
  std::cout << report.dump(2) << "\n";
  return report["pass"].get<bool>() ? 0 : 1;
}
