#include "sim_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "kiln/compiler/demangle.h"

namespace kiln::tools {

using json = nlohmann::json;

namespace {

// A JSON number as text; NaN and infinities arrive as the strings "nan", "inf", "-inf".
std::string number_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  if (!value.is_number()) return "?";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value.get<double>());
  return text;
}

std::string dim3_text(const json& dims) {
  if (!dims.is_array() || dims.size() != 3) return "?";
  return "(" + number_text(dims[0]) + "," + number_text(dims[1]) + "," + number_text(dims[2]) + ")";
}

std::string index_text(const json& index) {
  if (!index.is_array()) return number_text(index);
  std::string out = "[";
  for (size_t i = 0; i < index.size(); ++i) out += (i ? ", " : "") + number_text(index[i]);
  return out + "]";
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

json fault_summary(const json& fault, const PathShortener& shorten) {
  json out = {{"kind", fault.value("kind", "")},
              {"message", shorten(fault.value("message", ""))},
              {"block", fault.value("block", json::array())},
              {"thread", fault.value("thread", json::array())}};
  if (fault.contains("address")) out["address"] = hex(fault["address"].get<uint64_t>());
  if (fault.contains("ptx_line")) out["ptx_line"] = fault["ptx_line"];
  if (fault.contains("source")) out["source"] = shorten(fault["source"].get<std::string>());
  if (fault.contains("instruction")) out["instruction"] = fault["instruction"];
  return out;
}

void add_counts(json& into, const json& from) {
  if (!from.is_object()) return;
  for (const auto& [key, value] : from.items())
    if (value.is_number_unsigned() || value.is_number_integer())
      into[key] = into.value(key, uint64_t{0}) + value.get<uint64_t>();
}

// The simulator's counts summed over every launch of the workload.
json stats_summary(const json& launches) {
  json stats = {{"launches", 0},
                {"warp_instructions", 0},
                {"lane_instructions", 0},
                {"by_class", json::object()},
                {"bytes_by_space", json::object()},
                {"shared_bank_conflicts", 0},
                {"divergent_branches", 0}};
  std::vector<std::string> kernels;
  for (const json& launch : launches) {
    stats["launches"] = stats["launches"].get<uint64_t>() + 1;
    const std::string kernel = compiler::demangle(launch.value("kernel", ""));
    if (std::find(kernels.begin(), kernels.end(), kernel) == kernels.end())
      kernels.push_back(kernel);
    const json& s = launch.value("stats", json::object());
    for (const char* key :
         {"warp_instructions", "lane_instructions", "shared_bank_conflicts", "divergent_branches"})
      stats[key] = stats[key].get<uint64_t>() + s.value(key, uint64_t{0});
    add_counts(stats["by_class"], s.value("instructions_by_class", json::object()));
    add_counts(stats["bytes_by_space"], s.value("bytes_by_space", json::object()));
  }
  stats["kernels"] = kernels;
  return stats;
}

// "alu 150180, load 171177": largest first.
std::string counts_text(const json& counts) {
  std::vector<std::pair<uint64_t, std::string>> ranked;
  for (const auto& [key, value] : counts.items()) ranked.emplace_back(value.get<uint64_t>(), key);
  std::sort(ranked.rbegin(), ranked.rend());
  std::string out;
  for (const auto& [count, key] : ranked)
    out += (out.empty() ? "" : ", ") + key + " " + std::to_string(count);
  return out.empty() ? "none" : out;
}

// At most `limit` bytes of `text`, cut after the last whole line when there is one, else
// between two UTF-8 characters.
std::string leading_lines(const std::string& text, size_t limit) {
  if (text.size() <= limit) return text;
  const size_t newline = text.rfind('\n', limit - 1);
  if (newline != std::string::npos) return text.substr(0, newline + 1);
  size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return text.substr(0, cut);
}

// What the kernels printed: the text (cut), its full size, and a note when it was cut.
void add_printf(json& out, const json& workload) {
  if (!workload.contains("printf_output")) return;
  const std::string text = workload.value("printf_output", "");
  const uint64_t total = text.size() + workload.value("printf_dropped_bytes", uint64_t{0});
  const std::string shown = leading_lines(text, kMaxPrintfShown);
  out["printf_output"] = shown;
  out["printf_bytes"] = total;
  if (shown.size() < total)
    out["printf_note"] = "printf output truncated: the first " + std::to_string(shown.size()) +
                         " of " + std::to_string(total) +
                         " bytes are shown; print from fewer threads (e.g. if (threadIdx.x == 0 "
                         "&& blockIdx.x == 0)) or simulate one workload";
}

}  // namespace

void PathShortener::add(std::string from, std::string to) {
  if (from.empty() || from == to) return;
  rules_.emplace_back(std::move(from), std::move(to));
  std::sort(rules_.begin(), rules_.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

std::string PathShortener::operator()(std::string text) const {
  for (const auto& [from, to] : rules_) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  }
  return text;
}

json workload_summary(const json& workload, const PathShortener& shorten) {
  json out = {{"name", workload.value("workload", "")},
              {"passed", workload.value("pass", false)},
              {"status", workload.value("status", "")},
              {"message", shorten(workload.value("message", ""))}};
  if (workload.contains("errors") && workload["errors"].is_object()) {
    const json& errors = workload["errors"];
    out["max_abs_error"] = errors.value("max_abs", json(0));
    out["max_rel_error"] = errors.value("max_rel", json(0));
    out["mismatches"] = errors.value("mismatches", 0);
    out["checked"] = errors.value("checked", 0);
    out["nan"] = errors.value("nan", 0);
    out["inf"] = errors.value("inf", 0);
    out["unwritten"] = errors.value("unwritten", 0);
    json first = json::array();
    for (const json& m : errors.value("first_mismatches", json::array())) {
      if (first.size() == kMaxListedMismatches) break;
      first.push_back(m);
    }
    out["first_mismatches"] = first;
  }
  json faults = json::array();
  const json& all_faults = workload.value("faults", json::array());
  for (const json& fault : all_faults) {
    if (faults.size() == kMaxListedFaults) break;
    faults.push_back(fault_summary(fault, shorten));
  }
  out["faults"] = faults;
  if (all_faults.size() > faults.size()) out["faults_total"] = all_faults.size();
  json diagnostics = json::array();
  for (const json& line : workload.value("diagnostics", json::array()))
    diagnostics.push_back(shorten(line.get<std::string>()));
  // The newest are the useful ones; keep the last three.
  if (diagnostics.size() > 3) diagnostics.erase(diagnostics.begin(), diagnostics.end() - 3);
  out["diagnostics"] = diagnostics;
  add_printf(out, workload);
  out["stats"] = stats_summary(workload.value("launches", json::array()));
  return out;
}

std::string workload_text(const json& w) {
  std::ostringstream text;
  const bool passed = w.value("passed", false);
  text << (passed ? "PASS " : "FAIL ") << w.value("name", "") << " ";
  if (!passed) text << "(" << w.value("status", "") << ") ";
  if (w.contains("mismatches")) {
    text << w["mismatches"].get<int64_t>() << "/" << w["checked"].get<int64_t>()
         << " mismatches, max abs err " << number_text(w["max_abs_error"]) << ", max rel err "
         << number_text(w["max_rel_error"]);
    if (w["nan"].get<int64_t>() > 0) text << ", NaN " << w["nan"].get<int64_t>();
    if (w["inf"].get<int64_t>() > 0) text << ", Inf " << w["inf"].get<int64_t>();
    if (w["unwritten"].get<int64_t>() > 0)
      text << ", never written " << w["unwritten"].get<int64_t>();
    text << "\n";
    if (!w["first_mismatches"].empty()) {
      text << "  first mismatches:";
      for (const json& m : w["first_mismatches"])
        text << " " << index_text(m.value("index", json())) << " expected "
             << number_text(m.value("expected", json())) << " got "
             << number_text(m.value("actual", json())) << ";";
      text << "\n";
    }
  } else {
    text << "- " << w.value("message", "") << "\n";
  }
  for (const json& f : w["faults"]) {
    text << "  fault " << f.value("kind", "") << " at " << f.value("source", "(no line info)");
    if (f.contains("ptx_line")) text << " (PTX line " << number_text(f["ptx_line"]);
    if (f.contains("instruction")) text << ", " << f["instruction"].get<std::string>();
    if (f.contains("ptx_line")) text << ")";
    text << ", block " << dim3_text(f["block"]) << " thread " << dim3_text(f["thread"]);
    if (f.contains("address")) text << ", address " << f["address"].get<std::string>();
    text << ": " << f.value("message", "") << "\n";
  }
  if (w.contains("faults_total"))
    text << "  ... " << w["faults_total"].get<size_t>() - w["faults"].size() << " more faults\n";
  if (!passed && w["faults"].empty() && !w.contains("mismatches")) {
    for (const json& line : w["diagnostics"]) text << "  " << line.get<std::string>() << "\n";
  }
  if (w.contains("printf_output")) {
    const std::string printed = w["printf_output"].get<std::string>();
    const std::string shown = leading_lines(printed, kMaxPrintfInText);
    const uint64_t total = w.value("printf_bytes", uint64_t{0});
    text << "  printf (" << total << " bytes"
         << (shown.size() < total ? ", first " + std::to_string(shown.size()) + " shown" : "")
         << "):\n";
    std::istringstream lines(shown);
    for (std::string line; std::getline(lines, line);) text << "  | " << line << "\n";
  }
  const json& s = w["stats"];
  if (s.value("launches", 0) > 0) {
    text << "  counts: " << s["launches"].get<uint64_t>() << " launch(es), "
         << s["warp_instructions"].get<uint64_t>() << " warp instr ("
         << s["lane_instructions"].get<uint64_t>()
         << " lane) | by class: " << counts_text(s["by_class"])
         << " | bytes: " << counts_text(s["bytes_by_space"]) << " | shared bank conflicts "
         << s["shared_bank_conflicts"].get<uint64_t>() << " | divergent branches "
         << s["divergent_branches"].get<uint64_t>() << "\n";
  }
  return text.str();
}

std::string next_step(const json& workloads) {
  std::set<std::string> kinds, statuses;
  for (const json& w : workloads) {
    statuses.insert(w.value("status", ""));
    for (const json& f : w.value("faults", json::array())) kinds.insert(f.value("kind", ""));
  }
  if (statuses == std::set<std::string>{"pass"})
    return "next: benchmark measures it on the GPU (synccheck and racecheck look for "
           "synchronization bugs the small workloads may not show)";
  if (kinds.count("out_of_bounds") || kinds.count("misaligned"))
    return "next: fix the access at the fault's source line (index arithmetic, bounds guard, "
           "alignment of vector loads), then simulate again";
  if (kinds.count("time_limit") || kinds.count("budget"))
    return "next: the kernel ran past its limit; check loop bounds and exit conditions (every "
           "thread must leave every loop), or raise time_limit_s / instruction_budget if the "
           "work is genuinely that large";
  if (kinds.count("deadlock") || kinds.count("barrier_divergence"))
    return "next: make every thread of the block reach each __syncthreads (no barrier inside "
           "a divergent branch or early return); synccheck points at the barrier";
  if (kinds.count("unsupported_instruction"))
    return "next: the simulator does not implement an instruction this kernel uses; check "
           "correctness with benchmark on a GPU, or simulate a variant without it";
  if (statuses.count("wrong_answer"))
    return "next: compare the first mismatching indices with the kernel's indexing for those "
           "elements (NaN or never-written outputs mean elements no thread wrote), fix, then "
           "simulate again";
  if (statuses.count("launch_error"))
    return "next: fix the launch the message names (configuration, shared-memory opt-in, "
           "kiln_launch's return value), then simulate again";
  return "next: fix the problem above, then simulate again";
}

namespace {

// "1 of 3 sim workloads failed: 33x17x40 (wrong_answer)"
std::string failure_message(const json& workloads) {
  if (workloads.empty()) return "no sim workload ran, so nothing was checked";
  std::string failed;
  size_t count = 0;
  for (const json& w : workloads) {
    if (w.value("passed", false)) continue;
    ++count;
    failed += (failed.empty() ? "" : ", ") + w.value("name", std::string()) + " (" +
              w.value("status", std::string()) + ")";
  }
  return std::to_string(count) + " of " + std::to_string(workloads.size()) +
         " sim workloads failed: " + failed;
}

// The candidate's own failures (wrong values, faults, a refused launch) are wrong answers; a
// harness error alone means the run could not judge it.
mcp::ErrorCode failure_code(const json& workloads) {
  for (const json& w : workloads) {
    const std::string status = w.value("status", "");
    if (status == "wrong_answer" || status == "fault" || status == "launch_error")
      return mcp::ErrorCode::kWrongAnswer;
  }
  return mcp::ErrorCode::kRunFailed;
}

}  // namespace

mcp::ToolResult simulate_result(const json& report, const std::string& candidate_name,
                                const PathShortener& shorten) {
  json workloads = json::array();
  int passed = 0;
  for (const json& workload : report.value("workloads", json::array())) {
    workloads.push_back(workload_summary(workload, shorten));
    if (workloads.back()["passed"].get<bool>()) ++passed;
  }
  const int total = static_cast<int>(workloads.size());
  const bool all_pass = total > 0 && passed == total;
  mcp::ToolResult out;
  const std::string next = next_step(workloads);
  out.structured = {{"ok", all_pass},
                    {"task", report.value("task", "")},
                    {"file", candidate_name},
                    {"seed", report.value("seed", uint64_t{0})},
                    {"passed", passed},
                    {"total", total},
                    {"workloads", workloads},
                    {"stats_note", "counts from the simulator, not times"},
                    {"next", next}};

  std::ostringstream text;
  text << "simulate " << candidate_name << " on " << report.value("task", "") << " (seed "
       << report.value("seed", uint64_t{0}) << "): " << passed << "/" << total
       << " sim workloads pass" << (all_pass ? "" : " - FAILED") << "\n";
  std::string body;
  size_t omitted = 0;
  for (const json& w : workloads) {
    std::string part = workload_text(w);
    if (body.size() + part.size() > kMaxSimulateText - 800) {
      ++omitted;
      continue;
    }
    body += part;
  }
  text << body;
  if (omitted > 0)
    text << "... " << omitted << " more workload(s) in structuredContent, or pass `workloads`\n";
  text << "(counts are from the simulator, not times: use them to compare memory traffic, "
          "instruction mix and bank conflicts, not speed; benchmark measures time)\n";
  if (!all_pass) {
    const std::string message = failure_message(workloads);
    text << message << "\n";
    out.fail(failure_code(workloads), message, next.substr(next.find(": ") + 2));
  }
  text << next << "\n";
  out.text = text.str();
  return out;
}

}  // namespace kiln::tools
