// A run's manifest (RUN/manifest.json): what `kiln setup` fixed when it prepared the run and
// what `kiln mcp --run-dir` holds the run to. The task's files are hashed one by one as well
// as together, so a changed bundle is refused by name ("tasks/fp16_gemm/reference.cpp
// changed"), and the budget is the promotion policy's numbers (frontier_policy.h).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::tasks {
struct Task;
}  // namespace kiln::tasks

namespace kiln::frontier {

// The promotion budget of a run (manifest.json "budget"; `kiln setup --budget FILE`).
struct Budget {
  double promotion_margin = 0.01;        // a new best beats the incumbent's geomean by 1%
  double max_cv = 0.05;                  // every workload's timing CV at most 5%
  double revalidation_tolerance = 0.02;  // revalidated geomean within 2% of the first
};

// Reads the fields present in `object` over `defaults`; each must be a number in [0, 1).
Result<Budget> budget_from_json(const nlohmann::json& object, const Budget& defaults = {});
nlohmann::json to_json(const Budget& budget);

// A runner as `kiln setup` found it on /v1/health.
struct RunnerRecord {
  std::string url;
  std::vector<std::string> gpus;  // "NVIDIA H200" per GPU; "unknown" where nvidia-smi is absent
  std::string driver;
  std::string cuda;
};

struct RunManifest {
  std::string run_id;
  std::string created;  // ISO-8601 UTC
  std::string task_name;
  std::string task_sha256;
  std::filesystem::path task_dir;                 // the bundle the run is frozen to (absolute)
  std::map<std::string, std::string> task_files;  // path inside the bundle -> SHA-256
  std::string kiln_version;
  std::string kiln_commit;  // empty when kiln was not built from a git checkout
  std::vector<RunnerRecord> runners;
  Budget budget;
  std::vector<std::string> tools;
};

inline constexpr const char* kManifestFile = "manifest.json";

nlohmann::json to_json(const RunManifest& manifest);
// Errors name the file and the field.
Result<RunManifest> read_manifest(const std::filesystem::path& run_dir);
Status write_manifest(const std::filesystem::path& run_dir, const RunManifest& manifest);

// SHA-256 of each file that enters the task hash, by its path inside the bundle.
Result<std::map<std::string, std::string>> task_file_hashes(const tasks::Task& task);

// Ok when `task` (loaded now) hashes as the manifest says; otherwise an error that names each
// file that changed, appeared or disappeared, and what to do.
Status check_frozen(const RunManifest& manifest, const tasks::Task& task);

}  // namespace kiln::frontier
