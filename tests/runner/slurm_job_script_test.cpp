// The batch script kiln hands to sbatch: its #SBATCH lines and the worker command.
#include "kiln/runner/slurm_job_script.h"

#include <gmock/gmock.h>

namespace kiln::runner {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(SlurmJobScript, AsksForTheGpuThePartitionTheAccountAndTheTimeLimit) {
  SlurmJobSettings settings;
  settings.partition = "h200";
  settings.account = "kernels";
  settings.time_limit_seconds = 90;
  std::string text =
      slurm_job_script(settings, "j-1", "/opt/kiln/kiln-worker", "/shared/jobs/j-1", 600);
  EXPECT_EQ(text.rfind("#!/bin/sh\n", 0), 0u);
  EXPECT_THAT(text, HasSubstr("#SBATCH --gres=gpu:1\n"));
  EXPECT_THAT(text, HasSubstr("#SBATCH --partition=h200\n"));
  EXPECT_THAT(text, HasSubstr("#SBATCH --account=kernels\n"));
  EXPECT_THAT(text, HasSubstr("#SBATCH --time=2\n"));
  EXPECT_THAT(text, HasSubstr("#SBATCH --job-name=kiln-j-1\n"));
  EXPECT_THAT(text, HasSubstr("#SBATCH --chdir=/shared/jobs/j-1\n"));
  EXPECT_THAT(text, HasSubstr("#SBATCH --no-requeue\n"));
  EXPECT_THAT(text, HasSubstr("'/opt/kiln/kiln-worker' --job '/shared/jobs/j-1/job.json' --gpu 0 "
                              "> worker.out 2>> worker.log\n"));
  EXPECT_THAT(text, HasSubstr("echo $code > worker.exit\n"));
}

TEST(SlurmJobScript, GresNoneAndNoPartitionLeaveThoseLinesOut) {
  SlurmJobSettings settings;
  settings.gres = "none";
  std::string text = slurm_job_script(settings, "j-2", "/w", "/jobs/j-2", 100);
  EXPECT_THAT(text, Not(HasSubstr("--gres")));
  EXPECT_THAT(text, Not(HasSubstr("--partition")));
  EXPECT_THAT(text, Not(HasSubstr("--account")));
  EXPECT_THAT(text, HasSubstr("#SBATCH --time=3\n"));  // the job's 100 s plus a minute
}

TEST(SlurmJobScript, TimeTextRoundsUpToWholeMinutes) {
  EXPECT_EQ(slurm_time_text(0.2), "1");
  EXPECT_EQ(slurm_time_text(60), "1");
  EXPECT_EQ(slurm_time_text(61), "2");
  EXPECT_EQ(slurm_time_text(3725), "63");
}

TEST(SlurmJobScript, ShellQuotingSurvivesQuotesAndSpaces) {
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

}  // namespace
}  // namespace kiln::runner
