#include "kiln/check/finding.h"

#include <nlohmann/json.hpp>

namespace kiln::check {

std::string_view finding_kind_name(FindingKind kind) {
  switch (kind) {
    case FindingKind::BarrierDivergence:
      return "barrier_divergence";
    case FindingKind::CollectiveDivergence:
      return "collective_divergence";
    case FindingKind::CollectiveMask:
      return "collective_mask";
    case FindingKind::NamedBarrierMismatch:
      return "named_barrier_mismatch";
    case FindingKind::MbarrierUninitialized:
      return "mbarrier_uninitialized";
    case FindingKind::MbarrierInitFence:
      return "mbarrier_init_fence";
    case FindingKind::AsyncCopyUnwaited:
      return "async_copy_unwaited";
    case FindingKind::BulkCopyNoExpectTx:
      return "bulk_copy_no_expect_tx";
    case FindingKind::WgmmaFence:
      return "wgmma_fence";
    case FindingKind::Incomplete:
      return "incomplete";
    case FindingKind::DataRace:
      return "data_race";
    case FindingKind::SanitizerError:
      return "sanitizer_error";
    case FindingKind::AsyncProxyRace:
      return "async_proxy_race";
    case FindingKind::MissingFence:
      return "missing_fence";
    case FindingKind::MbarrierPhaseOverrun:
      return "mbarrier_phase_overrun";
    case FindingKind::MbarrierOverArrival:
      return "mbarrier_over_arrival";
    case FindingKind::MbarrierTxNeverArrived:
      return "mbarrier_tx_never_arrived";
    case FindingKind::MbarrierTxOverflow:
      return "mbarrier_tx_overflow";
    case FindingKind::MbarrierInitInUse:
      return "mbarrier_init_in_use";
    case FindingKind::MbarrierMidPhaseAtExit:
      return "mbarrier_mid_phase_at_exit";
    case FindingKind::ExitAtBarrier:
      return "exit_at_barrier";
    case FindingKind::Deadlock:
      return "deadlock";
  }
  return "unknown";
}

std::string_view severity_name(Severity severity) {
  return severity == Severity::Error ? "error" : "warning";
}

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::Clean:
      return "clean";
    case Verdict::Findings:
      return "findings";
    case Verdict::Incomplete:
      return "incomplete";
  }
  return "unknown";
}

void CheckReport::finish() {
  if (!findings.empty()) {
    verdict = Verdict::Findings;
  } else {
    verdict = notes.empty() ? Verdict::Clean : Verdict::Incomplete;
  }
}

nlohmann::json to_json(const Finding& f) {
  nlohmann::json j = {{"severity", severity_name(f.severity)},
                      {"kind", finding_kind_name(f.kind)},
                      {"function", f.function},
                      {"ptx_line", f.ptx_line},
                      {"instruction", f.instruction},
                      {"message", f.message},
                      {"fix_hint", f.fix_hint}};
  if (!f.cause.empty()) j["cause"] = f.cause;  // barrier_divergence: why the threads differ
  if (!f.source_file.empty()) {
    j["file"] = f.source_file;
    j["line"] = f.source_line;
    j["column"] = f.source_column;
  }
  return j;
}

nlohmann::json to_json(const CheckReport& report) {
  nlohmann::json findings = nlohmann::json::array();
  for (const Finding& f : report.findings) findings.push_back(to_json(f));
  return {{"verdict", verdict_name(report.verdict)},
          {"findings", std::move(findings)},
          {"notes", report.notes}};
}

std::string to_string(const Finding& f) {
  std::string where = "<no line info>";
  if (!f.source_file.empty()) {
    where = f.source_file + ":" + std::to_string(f.source_line);
    if (f.source_column != 0) where += ":" + std::to_string(f.source_column);
  }
  std::string text = std::string(severity_name(f.severity)) + " " +
                     std::string(finding_kind_name(f.kind)) + " " + where;
  if (f.ptx_line != 0) text += " (ptx " + std::to_string(f.ptx_line) + ")";
  return text + ": " + f.message;
}

}  // namespace kiln::check
