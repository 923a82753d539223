#include "kiln/runner/slurm_job_script.h"

#include <cmath>

namespace kiln::runner {

std::string slurm_time_text(double seconds) {
  // Slurm keeps time limits in whole minutes (a --time of seconds is rounded up to one).
  long minutes = static_cast<long>(std::ceil((seconds < 1 ? 1 : seconds) / 60));
  return std::to_string(minutes < 1 ? 1 : minutes);
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string slurm_job_script(const SlurmJobSettings& settings, const std::string& id,
                             const std::filesystem::path& worker,
                             const std::filesystem::path& job_dir, double job_seconds) {
  const std::string dir = std::filesystem::absolute(job_dir).string();
  const double limit =
      settings.time_limit_seconds > 0 ? settings.time_limit_seconds : job_seconds + 60;
  // #SBATCH lines are not shell: Slurm reads each option up to the end of its line, so a
  // value must hold no newline (the runner's own paths and ids never do).
  std::string text = "#!/bin/sh\n";
  text += "#SBATCH --job-name=kiln-" + id + "\n";
  text += "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --no-requeue\n";
  text += "#SBATCH --chdir=" + dir + "\n";
  text += "#SBATCH --output=" + dir + "/slurm.out\n";
  text += "#SBATCH --time=" + slurm_time_text(limit) + "\n";
  if (!settings.partition.empty()) text += "#SBATCH --partition=" + settings.partition + "\n";
  if (!settings.gres.empty() && settings.gres != "none")
    text += "#SBATCH --gres=" + settings.gres + "\n";
  if (!settings.account.empty()) text += "#SBATCH --account=" + settings.account + "\n";
  text += "# kiln job " + id + ": the worker reads job.json in the shared job folder and\n";
  text += "# writes its event lines and RESULT to " + std::string(kSlurmWorkerOut) + ".\n";
  text += "cd " + shell_quote(dir) + " || exit 97\n";
  text += shell_quote(worker.string()) + " --job " + shell_quote(dir + "/job.json") +
          " --gpu 0 > " + kSlurmWorkerOut + " 2>> " + kSlurmWorkerLog + "\n";
  text += "code=$?\n";
  text += "echo $code > " + std::string(kSlurmWorkerExit) + "\n";
  text += "exit $code\n";
  return text;
}

}  // namespace kiln::runner
