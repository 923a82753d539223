// How kiln runs Slurm's command-line tools (sbatch, squeue, sacct, scancel, sinfo): one small
// interface, so the Slurm backend is tested on the CPU with a scripted fake, and one real
// implementation over kiln's process supervisor (argv, never a shell string; every call has a
// deadline, so a slurmctld that does not answer never hangs a job).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace kiln::runner {

struct SlurmCommandResult {
  bool ran = false;  // false: it could not be started, or passed its deadline (error says which)
  int exit_code = 0;
  std::string out;    // stdout
  std::string err;    // stderr
  std::string error;  // why it did not run to an exit code
};

class SlurmCommandRunner {
 public:
  virtual ~SlurmCommandRunner() = default;
  // argv[0] is the tool's name (looked up in PATH) or path.
  virtual SlurmCommandResult run(const std::vector<std::string>& argv,
                                 std::chrono::seconds timeout) = 0;
};

// Runs the tools for real, through run_supervised (kiln/base/process.h).
class ProcessSlurmCommandRunner : public SlurmCommandRunner {
 public:
  SlurmCommandResult run(const std::vector<std::string>& argv,
                         std::chrono::seconds timeout) override;
};

}  // namespace kiln::runner
