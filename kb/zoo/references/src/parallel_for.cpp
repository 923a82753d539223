#include "kiln/zoo/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace kiln::zoo {

void parallel_for(int64_t count, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
  if (count <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t chunks = (count + grain - 1) / grain;
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    try {
      for (int64_t chunk = next++; chunk < chunks && !failed; chunk = next++) {
        const int64_t begin = chunk * grain;
        body(begin, std::min(count, begin + grain));
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  const auto hardware = static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  const int64_t n_threads = std::min(hardware, chunks);
  std::vector<std::thread> threads;
  for (int64_t t = 1; t < n_threads; ++t) {
    try {
      threads.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // no more threads: those running, and this one, finish the work
    }
  }
  worker();
  for (auto& thread : threads) thread.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace kiln::zoo
