// Filling a warp's constant slots: immediates and the special registers fixed for a thread.
#pragma once

#include <cstdint>

#include "exec.h"

namespace kiln::sim {

// x.program and x.config must be set; `cta` is the warp's CTA.
void fill_constants(Exec& x, const Cta& cta, Warp& warp, uint32_t multiprocessors);

}  // namespace kiln::sim
