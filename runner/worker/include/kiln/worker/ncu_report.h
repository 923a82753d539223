// Nsight Compute's CSV (`ncu --import R --csv --page raw`, one row per kernel with a
// column per metric and a units row; the long `--page details` form with one row per
// metric is read too) turned into a per-kernel summary: duration, occupancy, DRAM/L2/SM
// throughput, tensor-pipe use, the top warp stall reasons, registers, shared memory.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kiln::worker {

struct StallReason {
  std::string reason;  // "long_scoreboard"
  double value = 0;    // warps stalled per issued instruction (ncu's ratio)
};

struct NcuKernel {
  std::string name;
  std::string block;  // "(256, 1, 1)"
  std::string grid;
  double duration_us = 0;
  double achieved_occupancy_pct = 0;
  double theoretical_occupancy_pct = 0;
  double dram_pct = 0;
  double l2_pct = 0;
  double sm_pct = 0;
  double memory_pct = 0;  // gpu__compute_memory_throughput
  double tensor_pct = 0;
  std::string tensor_metric;
  int registers = 0;
  double shared_static_bytes = 0;
  double shared_dynamic_bytes = 0;
  std::vector<StallReason> top_stalls;    // largest first, at most 5
  std::map<std::string, double> metrics;  // every numeric metric, base units as ncu printed them

  nlohmann::json to_json(bool all_metrics = false) const;
};

class NcuReport {
 public:
  // Text before the CSV header (the program's own output, ==PROF== lines) is skipped.
  // An error string is set when no header is found.
  static std::vector<NcuKernel> parse(const std::string& text, std::string* error = nullptr);
  // Splits one CSV line (quoted fields, "" escapes).
  static std::vector<std::string> split_csv_line(const std::string& line);
  // "1,234.5" -> 1234.5; false for "n/a" and other non-numbers.
  static bool parse_number(const std::string& text, double* value);
};

}  // namespace kiln::worker
