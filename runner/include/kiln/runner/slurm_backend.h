// Slurm through its command-line tools: submit a batch script (sbatch --parsable), read a
// job's state (squeue, and sacct once squeue has forgotten it), cancel it (scancel), and read
// the partition for /v1/health (sinfo, squeue). Every call goes through a SlurmCommandRunner
// with a deadline; every failure comes back as an Error that quotes Slurm and says what to do.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/runner/slurm_command.h"

namespace kiln::runner {

enum class SlurmState {
  kPending,
  kRunning,    // RUNNING, CONFIGURING, COMPLETING, SUSPENDED, ...: started, not ended
  kCompleted,  // exit code 0
  kFailed,     // a nonzero exit code
  kCancelled,
  kTimeout,
  kNodeFail,
  kPreempted,
  kOutOfMemory,
  kOther,  // BOOT_FAIL, DEADLINE, REVOKED, SPECIAL_EXIT, ...: ended; `name` says which
};

struct SlurmJobStatus {
  SlurmState state = SlurmState::kOther;
  std::string name;    // Slurm's word, e.g. "NODE_FAIL"
  std::string reason;  // squeue's %r for a pending job ("Priority", "Resources", ...)
};

// "CANCELLED by 0" -> kCancelled; unknown words -> kOther. Exposed for tests.
SlurmJobStatus parse_slurm_state(const std::string& word);
bool is_ended(SlurmState state);

struct SlurmClusterStatus {
  int nodes = 0;
  int gpus = 0;        // summed from the nodes' gres (gpu:N, gpu:TYPE:N)
  int idle_nodes = 0;  // nodes sinfo calls idle or mixed
  int jobs_pending = 0;
  int jobs_running = 0;
};

// sinfo -h -N -o '%N|%T|%G' and squeue -h -o '%T' outputs, parsed. Exposed for tests.
SlurmClusterStatus parse_slurm_cluster(const std::string& sinfo_out, const std::string& squeue_out);

class SlurmBackend {
 public:
  SlurmBackend(SlurmCommandRunner& commands, std::string partition,
               std::chrono::seconds command_timeout = std::chrono::seconds(30));

  // sbatch --parsable SCRIPT: the job id.
  Result<std::string> submit(const std::string& script_path);
  // The job's state; an Error when Slurm could not be asked (slurmctld down) or does not
  // know the job.
  Result<SlurmJobStatus> status(const std::string& job_id);
  // Every listed job's state in one squeue (`-j ID1,ID2,...`), and one sacct for the jobs
  // squeue no longer holds: one slurmctld RPC per call however many jobs are in flight. Each
  // id maps to its status, or to the Error status() would give for it alone.
  std::map<std::string, Result<SlurmJobStatus>> statuses(const std::vector<std::string>& job_ids);
  Status cancel(const std::string& job_id);
  Result<SlurmClusterStatus> cluster();

 private:
  SlurmCommandRunner& commands_;
  std::string partition_;
  std::chrono::seconds timeout_;
};

}  // namespace kiln::runner
