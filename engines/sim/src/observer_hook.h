// The process-wide observer that kiln_sim_set_observer installs (memory_observer.h says why it
// exists beside SimulatorOptions::observer).
#pragma once

#include "kiln/sim/memory_observer.h"

namespace kiln::sim {

MemoryObserver* process_observer();

}  // namespace kiln::sim
