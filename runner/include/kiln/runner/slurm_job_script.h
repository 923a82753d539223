// The batch script of one kiln job on Slurm: #SBATCH lines (one node, one task, the partition,
// the GPU through --gres so the job has the GPU to itself, the account, the time limit, no
// requeue) and the worker command. The worker runs in the job folder, which the runner and the
// nodes share; its stdout (the event lines and the RESULT) goes to worker.out, its stderr to
// worker.log and its exit code to worker.exit, where the runner reads them back.
#pragma once

#include <filesystem>
#include <string>

namespace kiln::runner {

struct SlurmJobSettings {
  std::string partition;          // empty: the cluster's default partition
  std::string gres = "gpu:1";     // "none" or empty: no --gres (CPU jobs, the test cluster)
  std::string account;            // empty: the user's default account
  double time_limit_seconds = 0;  // 0: the job's own limit plus a minute
};

inline constexpr const char* kSlurmWorkerOut = "worker.out";
inline constexpr const char* kSlurmWorkerExit = "worker.exit";
inline constexpr const char* kSlurmWorkerLog = "worker.log";
inline constexpr const char* kSlurmScriptName = "slurm_job.sh";

// Slurm's --time for a number of seconds: whole minutes, rounded up (Slurm keeps minutes).
std::string slurm_time_text(double seconds);

// `id` names the job (kiln-ID); the worker gets `--job JOB_DIR/job.json --gpu 0` (Slurm's
// CUDA_VISIBLE_DEVICES makes the allocated GPU ordinal 0).
std::string slurm_job_script(const SlurmJobSettings& settings, const std::string& id,
                             const std::filesystem::path& worker,
                             const std::filesystem::path& job_dir, double job_seconds);

// `text` quoted for sh: in single quotes, each ' written as '\''.
std::string shell_quote(const std::string& text);

}  // namespace kiln::runner
