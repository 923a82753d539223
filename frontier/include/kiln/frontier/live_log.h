// RUN/live.log: one line per evaluation, for a person to tail or a second agent to read.
//   2026-12-01T19:14:02.894Z benchmark r-0123456789abcdef candidate=worktree/.../kernel.cu
//     status=passed geomean=1.100x passed=10/10 gate=- workloads=[4096x4096x4096 PASS
//     100.0us cv=0.40% 1.100x; ...]
//   2026-12-01T19:20:11.002Z frontier r-0123456789abcdef name=tiled decision=accepted_best
//     geomean=1.100x revalidated=r-... reason="..."
// Each line is written with one append, so lines from two sessions never interleave.
#pragma once

#include <filesystem>
#include <string>

#include "kiln/base/result.h"
#include "kiln/frontier/frontier_table.h"
#include "kiln/frontier/result_store.h"

namespace kiln::frontier {

inline constexpr const char* kLiveLogFile = "live.log";

// `purpose`: "benchmark", or "revalidation" for the fresh job of a promotion.
std::string evaluation_line(const StoredResult& result, const std::string& purpose);
std::string decision_line(const Decision& decision);

// Appends `line` and a newline with one write(2) on an O_APPEND descriptor.
Status append_line(const std::filesystem::path& file, const std::string& line);

}  // namespace kiln::frontier
