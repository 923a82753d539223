// Threads that each run one piece of work and end on their own (a session's tool calls, the
// jobs of long calls). A finished thread is joined at the next start() or reap(), so threads
// do not pile up, and join_all() waits for every one (shutdown).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::mcp {

class WorkerThreads {
 public:
  WorkerThreads() = default;
  ~WorkerThreads() { join_all(); }
  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;

  // Joins the threads that finished, then runs `work` on a thread of its own.
  void start(std::function<void()> work);
  // Joins the threads that finished; the others go on.
  void reap() { join(/*wait_all=*/false); }
  // Waits for every thread.
  void join_all() { join(/*wait_all=*/true); }

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  void join(bool wait_all);

  std::mutex mutex_;  // guards workers_
  std::vector<Worker> workers_;
};

}  // namespace kiln::mcp
