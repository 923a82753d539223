#include "kiln/base/stop_signals.h"

#include <pthread.h>

#include <ctime>

namespace kiln {

StopSignals::StopSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, &previous_mask_);
}

StopSignals::~StopSignals() { finish(); }

void StopSignals::finish() {
  if (waiter_.joinable()) {
    finished_ = true;
    // A signal sent to the waiter thread itself is taken there by sigwait (it is blocked, so
    // it kills nothing), never by another thread of the process.
    if (!woken_)
      pthread_kill(waiter_.native_handle(), SIGTERM);  // NOLINT(bugprone-bad-signal-to-kill-thread)
    waiter_.join();
  }
  if (restored_) return;
  restored_ = true;
  // A signal that came after the waiter's first would, once unblocked, kill the process
  // by its default action instead of letting it end cleanly: take it here.
  timespec no_wait{0, 0};
  while (sigtimedwait(&signals_, nullptr, &no_wait) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

void StopSignals::watch(std::function<void(int)> on_signal) {
  waiter_ = std::thread([this, on_signal = std::move(on_signal)] {
    int received = 0;
    int failed = sigwait(&signals_, &received);
    woken_ = true;
    if (failed != 0 || finished_) return;
    on_signal(received);
  });
}

}  // namespace kiln
