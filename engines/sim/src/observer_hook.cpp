#include "observer_hook.h"

#include <atomic>

namespace {

// The one piece of process state in the simulator: a driver that only reaches the simulated
// runtime through its C API (kiln-sim-run --racecheck) has no other way to hand an observer to
// the Device the runtime creates. Launches read it once, at their start.
std::atomic<kiln::sim::MemoryObserver*> installed{nullptr};

}  // namespace

namespace kiln::sim {

MemoryObserver* process_observer() { return installed.load(std::memory_order_acquire); }

}  // namespace kiln::sim

extern "C" void kiln_sim_set_observer(kiln::sim::MemoryObserver* observer) {
  installed.store(observer, std::memory_order_release);
}
