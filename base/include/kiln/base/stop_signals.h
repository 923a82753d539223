// SIGINT and SIGTERM for a server that stops cleanly: blocked before any thread
// starts (threads inherit the mask, so none of them is killed by the default
// action), then taken by one waiter thread that calls the stop of the caller's
// choosing. When the server ends by itself, the waiter is woken and joined.
//
//   StopSignals signals;             // first, before any thread starts
//   ... bind, print the ready line ...
//   signals.watch([&](int) { server.stop(); });
//   server.serve();
//   signals.finish();                // before the server is gone: the waiter uses it
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

namespace kiln {

class StopSignals {
 public:
  // Blocks SIGINT and SIGTERM in the calling thread, and so in every thread it starts.
  StopSignals();
  ~StopSignals();  // finish()
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Starts the waiter: on the first SIGINT or SIGTERM it calls on_signal(the signal)
  // on its own thread, once. Call at most once.
  void watch(std::function<void(int)> on_signal);

  // Wakes and joins the waiter if no signal came (on_signal is not called for that), takes
  // any SIGINT or SIGTERM still pending (the server is stopping anyway) and restores the
  // signal mask, so children started afterwards do not inherit the block. Idempotent; call
  // it from the thread that made this object (the mask is that thread's).
  void finish();

 private:
  sigset_t signals_{};
  sigset_t previous_mask_{};
  bool restored_ = false;
  std::atomic<bool> finished_{false};  // finish() began: a wake-up is not a stop signal
  std::atomic<bool> woken_{false};     // the waiter's sigwait returned
  std::thread waiter_;
};

}  // namespace kiln
