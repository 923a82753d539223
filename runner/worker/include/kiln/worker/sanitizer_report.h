// compute-sanitizer's text report turned into findings: what (the message), the kernel,
// the source file:line (with -lineinfo), the thread and block, the address, how many
// times it repeated. Identical findings (same kind, kernel, location) are merged.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kiln::worker {

struct SanitizerFinding {
  std::string tool;      // memcheck | racecheck | synccheck | initcheck
  std::string severity;  // error | warning
  std::string kind;      // the message, e.g. "Invalid __global__ write of size 4 bytes"
  std::string kernel;
  std::string file;
  int line = 0;
  std::string pc;       // "0x150"
  std::string thread;   // "(31,0,0)"
  std::string block;    // "(0,0,0)"
  std::string address;  // "0x7f8a40000000"
  std::string detail;   // further description lines (out of bounds, the other access of a race)
  int count = 1;        // identical findings merged
  int hazards = 0;      // racecheck "[N hazards]"

  nlohmann::json to_json() const;
};

struct SanitizerReport {
  std::vector<SanitizerFinding> findings;
  int error_summary = -1;  // "ERROR SUMMARY: N errors", -1 when absent
  bool tool_failed = false;
  std::string tool_message;  // e.g. "Device not supported"

  nlohmann::json to_json(size_t limit = 50) const;
  static SanitizerReport parse(const std::string& text, const std::string& tool);
};

}  // namespace kiln::worker
