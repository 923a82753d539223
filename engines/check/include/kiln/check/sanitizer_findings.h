// compute-sanitizer's findings, as a runner's sanitize job reports them (the worker's
// SanitizerFinding JSON: tool, severity, kind = the message, kernel, file, line, thread, block,
// address, detail, count, hazards), in kiln's finding format, so the GPU engine of synccheck
// and racecheck answers like the static one.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "kiln/check/finding.h"

namespace kiln::check {

// The report of one sanitize job: the findings of `tool` ("synccheck", "racecheck", ...) from
// the RESULT's sanitize.tools array. The verdict is `clean` when the tool ran and found
// nothing, `findings` otherwise; a tool that could not run gives `incomplete` with its message
// as a note.
CheckReport report_from_sanitizer(const nlohmann::json& sanitize_tools, std::string_view tool);

}  // namespace kiln::check
