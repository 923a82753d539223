// CTA barriers (bar/barrier .sync/.arrive, named barriers 0..15 with thread counts): arrival,
// release, and the description of a deadlock.
#pragma once

#include <cstdint>
#include <string>

#include "exec.h"

namespace kiln::sim {

// Releases barrier `id` when enough threads arrived; true when it did.
bool try_release_barrier(Cta& cta, uint32_t id);
// Re-checks every barrier (after threads exit, all-thread barriers may complete).
void release_completed_barriers(Cta& cta);
// barrier.cluster: releases the cluster's waiting warps once every live thread of every CTA of
// the cluster arrived; true when it did.
bool try_release_cluster_barrier(Exec& x);
std::string describe_cluster_waiting(const Exec& x);
// "warps 0, 1 wait at barrier 1 (64 of 128 threads arrived)" for a deadlock fault.
std::string describe_waiting(const Cta& cta);

}  // namespace kiln::sim
