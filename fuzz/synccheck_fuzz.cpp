// Fuzz target: the static synccheck engine (kiln_check) over whatever PTX the parser accepts,
// as the synccheck tool runs it on a candidate. The input is PTX text; its first byte also picks
// the one option a caller sets (warp_aligned_x).
//
// Properties: the analysis never throws, crashes or loops; every finding says what is wrong
// and what to do; the verdict agrees with the findings and notes; the report serializes as the
// tool returns it.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "fuzz_check.h"
#include "kiln/check/static_synccheck.h"
#include "kiln/ptx/parser.h"

using kiln::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = kiln::ptx::parse_ptx(text, {"fuzz.ptx"});
  if (!parsed) return 0;
  kiln::check::SyncCheckOptions options;
  options.warp_aligned_x = size == 0 || (data[0] & 1) == 0;
  const kiln::check::CheckReport report = kiln::check::static_synccheck(parsed->module, options);
  for (const kiln::check::Finding& finding : report.findings)
    check(!finding.message.empty() && !finding.fix_hint.empty(), "a finding says what and how");
  using kiln::check::Verdict;
  if (!report.findings.empty())
    check(report.verdict == Verdict::Findings, "findings give the verdict findings");
  else
    check(report.verdict == (report.notes.empty() ? Verdict::Clean : Verdict::Incomplete),
          "no findings: clean, or incomplete with notes");
  kiln::fuzz::check_wire(kiln::check::to_json(report), "the report is JSON");
  return 0;
}
