// A run's report (run_report.h) as one self-contained HTML page: inline CSS, an inline script
// that draws the two charts as SVG from the data embedded in the page, and the tables as plain
// HTML, so the page needs no network (its Content-Security-Policy forbids any) and its tables
// read without JavaScript. Every string from the run goes through html_escape() or, inside the
// embedded data, script_json().
//
// The script's result is written into the page: #report-status gets data-status="ok" and
// data-points / data-bars (what it drew) when it finished, "error" with the message when a
// script error happened; each timeline point is an SVG <g class="point ..."
// data-result-id="r-...">, each bar a <g class="bar ..." data-workload="...">.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace kiln::frontier {

struct RunReport;

// Text for HTML element content and quoted attribute values: & < > " ' as entities.
std::string html_escape(std::string_view text);

// JSON that is safe inside a <script> element: '<', '>' and '&' written as \u escapes (so no
// "</script>" or "<!--" can end or change it), invalid UTF-8 replaced.
std::string script_json(const nlohmann::json& value);

// The data the page's script draws: {"points": [...], "best": {...} | null}.
nlohmann::json report_chart_data(const RunReport& report);

std::string render_run_report_html(const RunReport& report);

}  // namespace kiln::frontier
