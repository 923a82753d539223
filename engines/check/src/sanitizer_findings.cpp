#include "kiln/check/sanitizer_findings.h"

#include <nlohmann/json.hpp>

namespace kiln::check {
namespace {

struct KindAndHint {
  FindingKind kind;
  const char* hint;
};

// compute-sanitizer's messages, matched by the words that name the problem.
KindAndHint classify(std::string_view tool, std::string_view message) {
  if (tool == "racecheck" || message.find("Race reported") != std::string_view::npos) {
    return {FindingKind::DataRace,
            "Order the two accesses: a __syncthreads() (or the right named barrier / mbarrier "
            "wait) between the write and the other threads' access, or give each thread its "
            "own location."};
  }
  // "Barrier error detected. Divergent thread(s) in block." or "... in warp." (a
  // __syncthreads() that only part of a warp reaches reports the latter on an H200).
  if (message.find("Barrier error") != std::string_view::npos ||
      message.find("Divergent") != std::string_view::npos) {
    return {FindingKind::BarrierDivergence,
            "Make every thread of the block (and every lane of each warp) reach the same "
            "barrier: move it out of thread-dependent branches and early returns; for "
            "__syncwarp or *_sync calls, pass the mask of the lanes that really arrive."};
  }
  return {FindingKind::SanitizerError,
          "Read compute-sanitizer's message and the source line; fix the access or call it "
          "names."};
}

std::string text(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Finding to_finding(const nlohmann::json& f, std::string_view tool) {
  const std::string message = text(f, "kind");
  const KindAndHint k = classify(tool, message);
  Finding out;
  out.kind = k.kind;
  out.severity = text(f, "severity") == "warning" ? Severity::Warning : Severity::Error;
  out.function = text(f, "kernel");
  out.source_file = text(f, "file");
  out.source_line = static_cast<uint32_t>(f.value("line", 0));
  out.instruction = text(f, "pc").empty() ? "" : "pc " + text(f, "pc");
  out.message = "compute-sanitizer " + std::string(tool) + ": " + message;
  const std::string thread = text(f, "thread"), block = text(f, "block");
  if (!thread.empty() || !block.empty()) {
    out.message += " (thread " + thread + " block " + block + ")";
  }
  if (const int count = f.value("count", 1); count > 1) {
    out.message += ", " + std::to_string(count) + " times";
  }
  if (const std::string detail = text(f, "detail"); !detail.empty()) {
    out.message += ". " + detail;
  }
  out.fix_hint = k.hint;
  return out;
}

}  // namespace

CheckReport report_from_sanitizer(const nlohmann::json& sanitize_tools, std::string_view tool) {
  CheckReport report;
  bool ran = false;
  if (sanitize_tools.is_array()) {
    for (const nlohmann::json& entry : sanitize_tools) {
      if (!entry.is_object() || text(entry, "tool") != tool) continue;
      ran = true;
      if (entry.value("timed_out", false)) {
        report.notes.push_back("compute-sanitizer " + std::string(tool) +
                               " ran out of time; what it found before is listed");
      }
      if (entry.value("tool_failed", false)) {
        report.notes.push_back("compute-sanitizer " + std::string(tool) +
                               " could not run: " + text(entry, "tool_message"));
      }
      const auto findings = entry.find("findings");
      if (findings == entry.end() || !findings->is_array()) continue;
      for (const nlohmann::json& f : *findings) report.findings.push_back(to_finding(f, tool));
    }
  }
  if (!ran) {
    report.notes.push_back("the sanitize job reported no " + std::string(tool) + " run");
  }
  report.finish();
  return report;
}

}  // namespace kiln::check
