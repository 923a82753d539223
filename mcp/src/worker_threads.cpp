#include "kiln/mcp/worker_threads.h"

namespace kiln::mcp {

void WorkerThreads::start(std::function<void()> work) {
  reap();
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread thread([work = std::move(work), done] {
    work();
    done->store(true);
  });
  std::lock_guard lock(mutex_);
  workers_.push_back(Worker{std::move(thread), done});
}

void WorkerThreads::join(bool wait_all) {
  std::vector<Worker> finished;
  {
    std::lock_guard lock(mutex_);
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (wait_all || it->done->load()) {
        finished.push_back(std::move(*it));
        it = workers_.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Joined outside the lock: a finishing worker may start another (a session's call that
  // ends while a new one begins), which takes the lock.
  for (auto& worker : finished)
    if (worker.thread.joinable()) worker.thread.join();
}

}  // namespace kiln::mcp
