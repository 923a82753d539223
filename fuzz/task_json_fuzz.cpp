// Fuzz target: the task loader (kiln_tasks) on a task.json it did not write, as `kiln runner`
// loads the bundle a client sent. The input is the task.json; it goes into a bundle folder named
// fuzz_task (so the seeds' "name" is fuzz_task) beside empty reference.cpp, baseline.cu,
// starter.cu and README.md, and load_task reads, validates and hashes it.
//
// Properties: load_task returns (never throws or crashes); an error serializes into the JSON
// reply the runner sends; a task it accepts keeps its promises (every tensor extent evaluates
// to a positive number at every workload, so the harness can allocate) and serializes as
// get_task presents it.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz_check.h"
#include "kiln/tasks/task.h"

namespace {

using kiln::fuzz::check;

// The bundle folder, made once per process; every input overwrites its task.json.
const std::filesystem::path& bundle() {
  static const std::filesystem::path dir = [] {
    auto root = std::filesystem::temp_directory_path() /
                ("kiln_fuzz_task_json." + std::to_string(getpid()));
    auto path = root / "fuzz_task";
    std::filesystem::create_directories(path);
    for (const char* name : {"reference.cpp", "baseline.cu", "starter.cu", "README.md"})
      std::ofstream(path / name) << "// " << name << "\n";
    // Removed when the process ends normally; a crash leaves it for the reproducer.
    static struct Cleanup {
      std::filesystem::path root;
      ~Cleanup() {
        std::error_code ignored;
        std::filesystem::remove_all(root, ignored);
      }
    } cleanup{root};
    return path;
  }();
  return dir;
}

void check_task(const kiln::tasks::Task& task) {
  for (const auto* workloads : {&task.workloads, &task.sim_workloads}) {
    for (const auto& workload : *workloads) {
      for (const auto& tensor : task.tensors) {
        for (const auto& extent : tensor.shape) {
          auto value = kiln::tasks::evaluate(extent, workload.dims);
          check(value.ok() && *value >= 1, "an accepted task's extents are positive everywhere");
        }
      }
    }
  }
  check(task.sha256.size() == 64, "an accepted task is hashed");
  kiln::fuzz::check_wire(kiln::tasks::to_json(task), "get_task's contract is JSON");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path& dir = bundle();
  {
    std::ofstream out(dir / "task.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  auto task = kiln::tasks::load_task(dir);
  if (!task) {
    check(!task.error().message.empty(), "a refusal says why");
    // The runner answers a bad bundle with the message in a JSON body.
    kiln::fuzz::check_wire(nlohmann::json{{"error", task.error().message}},
                           "a refusal is a JSON reply");
    return 0;
  }
  check_task(*task);
  return 0;
}
