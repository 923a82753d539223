// Tool calls that outlive their request: a long call's work runs as a job on a thread of its
// own, the call waits for it within a budget, and a job that is not done by then goes on in
// the background. Its finished result (the ToolResult the tool returned) is kept, in memory and
// with a directory also on disk (DIR/<id>.json), so a later request, from another session or,
// with the same directory, another kiln process, gets it (wait_job, long_call.h).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/mcp/call_context.h"
#include "kiln/mcp/tool.h"
#include "kiln/mcp/worker_threads.h"

namespace kiln::mcp {

struct JobLimits {
  size_t max_running = 16;  // jobs at work at once; a call past this is refused
  size_t max_kept = 64;     // background jobs remembered (in memory, and files in the directory)
};

enum class JobState {
  kRunning,
  kDone,
  kLost,  // on disk as running, but the kiln process that ran it has ended
};

struct JobStatus {
  std::string id;
  std::string tool;
  JobState state = JobState::kRunning;
  double elapsed_s = 0;              // since it started, or how long it ran
  std::optional<ToolResult> result;  // when kDone
};

class JobStore {
 public:
  explicit JobStore(JobLimits limits = {});
  ~JobStore();  // cancels the jobs still running and waits for them
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  // Where kept jobs are written (created when needed); set before the first job.
  void set_directory(std::filesystem::path dir);
  const JobLimits& limits() const { return limits_; }

  using Work = std::function<ToolResult(CallContext& context)>;
  // Starts `work` on a thread of its own, with a context of its own: its progress and logs go
  // to whoever waits for it (wait), its cancellation only through cancel(). Refused when
  // max_running jobs are at work.
  Result<std::string> start(const std::string& tool, Work work);

  // The job's status once it is done, `budget` passed, or `waiter` was cancelled (the job goes
  // on); meanwhile its progress and logs are relayed to `waiter`. A job this process does not
  // know is looked up in the directory. nullopt: no such job.
  std::optional<JobStatus> wait(const std::string& id, std::chrono::milliseconds budget,
                                CallContext& waiter);

  // The job outlives the call that started it: remembered until max_kept newer jobs push it out,
  // and written to the directory (as running now, and again once done).
  void keep(const std::string& id);
  // The call that started it took its result, or gave up on it: forgotten, cancelled if running.
  void discard(const std::string& id);
  // Asks a running job to stop; it stays kept, and its result (a cancelled one) is stored.
  bool cancel(const std::string& id);

  // The kept jobs of this process, oldest first.
  std::vector<JobStatus> list() const;

 private:
  struct Job;
  using Clock = std::chrono::steady_clock;

  void run(std::shared_ptr<Job> job, Work work);
  JobStatus status_of(const Job& job) const;  // mutex_ held
  void write(const Job& job) const;           // mutex_ held
  void forget_oldest();                       // mutex_ held
  std::optional<JobStatus> read_from_disk(const std::string& id) const;

  JobLimits limits_;
  std::filesystem::path dir_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::shared_ptr<Job>> jobs_;
  std::deque<std::string> kept_;  // kept ids, oldest first
  size_t running_ = 0;
  bool closing_ = false;   // the destructor runs
  WorkerThreads workers_;  // last: joined before the rest is destroyed
};

// A ToolResult as JSON and back (the form of DIR/<id>.json's "result").
nlohmann::json tool_result_json(const ToolResult& result);
ToolResult tool_result_from_json(const nlohmann::json& value);

}  // namespace kiln::mcp
