#include "kiln/frontier/run_report_html.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "kiln/frontier/result_store.h"
#include "kiln/frontier/run_report.h"
#include "run_report_assets.h"

namespace kiln::frontier {

using json = nlohmann::json;

namespace {

std::string esc(std::string_view text) { return html_escape(text); }

std::string fixed(double value, int digits) {
  if (!std::isfinite(value)) return "n/a";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string times(double value) { return fixed(value, 3) + "x"; }
std::string percent(double fraction) { return fixed(fraction * 100.0, 2) + "%"; }
std::string when(int64_t ms) { return ms > 0 ? format_utc(ms) : "n/a"; }
// "2026-12-01 20:59:49" (UTC), for table cells.
std::string when_short(int64_t ms) {
  if (ms <= 0) return "n/a";
  std::string text = format_utc(ms).substr(0, 19);
  text[10] = ' ';
  return text;
}
std::string short_hash(const std::string& hash) { return hash.substr(0, 12); }

std::string td(std::string_view text, const char* cls = nullptr) {
  std::string out = cls ? std::string("<td class=\"") + cls + "\">" : std::string("<td>");
  return out + esc(text) + "</td>";
}

std::string card(const std::string& value, const std::string& label) {
  return "<div class=\"card\"><div class=\"value\">" + esc(value) + "</div><div class=\"label\">" +
         esc(label) + "</div></div>\n";
}

std::string header(const RunReport& report) {
  const RunManifest& m = report.manifest;
  std::string runners;
  for (const auto& r : m.runners) {
    std::string gpus;
    for (const auto& g : r.gpus) gpus += (gpus.empty() ? "" : ", ") + g;
    runners += (runners.empty() ? "" : "; ") + r.url + (gpus.empty() ? "" : " (" + gpus + ")");
  }
  if (runners.empty()) runners = "none (an offline run: CPU tools only, or a local GPU)";
  std::string out = "<header>\n<h1>kiln report: " + esc(m.run_id) + "</h1>\n";
  out += "<p class=\"meta\">task <b>" + esc(m.task_name) + "</b> <code>" + esc(m.task_sha256) +
         "</code></p>\n";
  out += "<p class=\"meta\">created " + esc(m.created) + " by kiln " + esc(m.kiln_version) +
         (m.kiln_commit.empty() ? "" : " (" + esc(short_hash(m.kiln_commit)) + ")") +
         "; runners: " + esc(runners) + "</p>\n";
  out += "<p class=\"meta\">budget: promotion margin " + percent(m.budget.promotion_margin) +
         ", max CV " + percent(m.budget.max_cv) + ", revalidation tolerance " +
         percent(m.budget.revalidation_tolerance) + "; run folder <code>" +
         esc(report.run_dir.string()) + "</code>; report made " + esc(when(report.generated_ms)) +
         "</p>\n</header>\n";
  return out;
}

std::string cards(const RunReport& report) {
  size_t scored = 0, failed = 0;
  for (const auto& p : report.points) {
    scored += p.scored ? 1 : 0;
    failed += p.status != "passed" ? 1 : 0;
  }
  std::string out = "<section class=\"cards\">\n";
  out += card(
      std::to_string(report.points.size()),
      "benchmarks (" + std::to_string(scored) + " scored, " + std::to_string(failed) + " failed)");
  out += card(report.best ? times(report.best->reference_geomean()) : "none",
              report.best ? "best: " + report.best->name : "no frontier member yet");
  out += card(std::to_string(report.members.size()), "frontier members");
  out += card(std::to_string(report.sessions.calls),
              "tool calls in " + std::to_string(report.sessions.sessions) + " session(s), " +
                  std::to_string(report.sessions.errors) + " errors");
  return out + "</section>\n";
}

std::string timeline(const RunReport& report) {
  std::string out = "<section id=\"timeline-section\">\n<h2>Speedup over time</h2>\n";
  if (report.points.empty()) {
    return out +
           "<p class=\"empty\" id=\"no-results\">No benchmark results yet. Benchmark a candidate "
           "in this run (the <code>benchmark</code> tool), then run <code>kiln report</code> "
           "again.</p>\n</section>\n";
  }
  out +=
      "<p class=\"hint\">Every benchmark of the run: its geomean speedup over the baseline "
      "(hover a point for its numbers).</p>\n"
      "<svg id=\"timeline\" class=\"chart\" role=\"img\" aria-label=\"geomean speedup of every "
      "benchmark over time\"></svg>\n"
      "<div class=\"legend\">"
      "<span><svg width=\"14\" height=\"14\"><circle cx=\"7\" cy=\"7\" r=\"5\" fill=\"#2f6fdb\"/>"
      "</svg> scored benchmark</span>"
      "<span><svg width=\"14\" height=\"14\"><circle cx=\"7\" cy=\"7\" r=\"4\" fill=\"#fff\" "
      "stroke=\"#2f6fdb\" stroke-width=\"2\"/></svg> subset (unscored)</span>"
      "<span><svg width=\"14\" height=\"14\"><path d=\"M2 2 L12 12 M2 12 L12 2\" "
      "stroke=\"#c0392b\" "
      "stroke-width=\"2\"/></svg> failed</span>"
      "<span><svg width=\"14\" height=\"14\"><rect x=\"3\" y=\"3\" width=\"8\" height=\"8\" "
      "fill=\"#7b5cd6\" transform=\"rotate(45 7 7)\"/></svg> revalidation</span>"
      "<span><svg width=\"22\" height=\"22\"><circle cx=\"11\" cy=\"11\" r=\"9\" fill=\"none\" "
      "stroke=\"#c98a00\" stroke-width=\"2.5\"/></svg> frontier member</span>"
      "<span><svg width=\"22\" height=\"10\"><path d=\"M1 8 H10 V2 H21\" fill=\"none\" "
      "stroke=\"#c98a00\" stroke-width=\"1.5\"/></svg> best scored so far</span>"
      "</div>\n";
  return out + "</section>\n";
}

std::string best_section(const RunReport& report) {
  std::string out = "<section id=\"best-section\">\n<h2>Best candidate against the baseline</h2>\n";
  if (!report.best) {
    return out +
           "<p class=\"empty\" id=\"no-best\">No frontier member yet. Keep a fully benchmarked "
           "candidate with <code>record_candidate</code>.</p>\n</section>\n";
  }
  const Member& b = *report.best;
  out += "<p class=\"hint\"><b>" + esc(b.name) + "</b> (" + esc(b.approach) +
         "): " + times(b.score.geomean) + " geomean" +
         (b.revalidated_geomean ? ", revalidated " + times(*b.revalidated_geomean) : "") + ", " +
         std::to_string(b.score.passed) + "/" + std::to_string(b.score.total) +
         " workloads passed; result <code>" + esc(b.result_id) +
         "</code>. Bars: its speedup "
         "over the baseline on each workload; the dashed line is the baseline (1.0x).</p>\n"
         "<svg id=\"bars\" class=\"chart\" role=\"img\" aria-label=\"speedup per workload\">"
         "</svg>\n";
  return out + "</section>\n";
}

std::string frontier_table(const RunReport& report) {
  std::string out = "<section id=\"frontier-section\">\n<h2>Frontier</h2>\n";
  if (report.members.empty())
    return out + "<p class=\"empty\">The frontier is empty.</p>\n</section>\n";
  out +=
      "<div class=\"scroll\"><table id=\"frontier\"><thead><tr><th>name</th><th>approach</th><th "
      "class=\"num\">"
      "geomean</th><th class=\"num\">revalidated</th><th class=\"num\">passed</th><th "
      "class=\"num\">max CV</th><th>result</th><th>revalidation</th><th>since</th><th>reason"
      "</th></tr></thead><tbody>\n";
  for (const auto& m : report.members) {
    out += m.best ? "<tr class=\"best\">" : "<tr>";
    out += "<td><b>" + esc(m.name) + "</b>" + (m.best ? " (best)" : "") + "</td>";
    out +=
        td(m.approach + (m.family.empty() || m.family == m.approach ? "" : " [" + m.family + "]"));
    out += td(times(m.score.geomean), "num");
    out += td(m.revalidated_geomean ? times(*m.revalidated_geomean) : "-", "num");
    out += td(std::to_string(m.score.passed) + "/" + std::to_string(m.score.total), "num");
    out += td(percent(m.score.max_cv), "num");
    out +=
        td(m.result_id, "mono") + td(m.revalidation_id.empty() ? "-" : m.revalidation_id, "mono");
    out += td(when_short(m.created_ms), "when") + td(m.reason) + "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  if (!report.former.empty()) {
    out += "<p class=\"muted\">Former members: ";
    for (size_t i = 0; i < report.former.size(); ++i)
      out += (i ? ", " : "") + esc(report.former[i].name) + " (" +
             times(report.former[i].score.geomean) + ", replaced by " +
             esc(report.former[i].superseded_by) + ")";
    out += "</p>\n";
  }
  return out + "</section>\n";
}

std::string decisions_table(const RunReport& report) {
  std::string out = "<section id=\"decisions-section\">\n<h2>Frontier decisions</h2>\n";
  if (report.decisions.empty())
    return out + "<p class=\"empty\">No candidate was recorded yet.</p>\n</section>\n";
  if (report.decision_count > report.decisions.size())
    out += "<p class=\"hint\">The newest " + std::to_string(report.decisions.size()) + " of " +
           std::to_string(report.decision_count) + ".</p>\n";
  out +=
      "<div class=\"scroll\"><table "
      "id=\"decisions\"><thead><tr><th>when</th><th>name</th><th>verdict</th><th>result"
      "</th><th>reason</th><th>commit</th></tr></thead><tbody>\n";
  for (const auto& d : report.decisions) {
    const std::string verdict_class = "verdict-" + d.verdict;
    out += "<tr>" + td(when_short(d.created_ms), "when") + td(d.name) +
           td(d.verdict, verdict_class.c_str()) + td(d.result_id, "mono") + td(d.reason) +
           td(!d.commit_id.empty()      ? short_hash(d.commit_id)
              : !d.commit_error.empty() ? "failed: " + d.commit_error
                                        : "-",
              "mono") +
           "</tr>\n";
  }
  return out + "</tbody></table></div>\n</section>\n";
}

std::string results_table(const RunReport& report) {
  if (report.points.empty()) return "";
  std::string out =
      "<section id=\"results-section\">\n<h2>Benchmark results</h2>\n<details><summary>All " +
      std::to_string(report.points.size()) +
      " results, newest first</summary>\n<div class=\"scroll\"><table "
      "id=\"results\"><thead><tr><th>when</th><th>"
      "result</th><th>status</th><th class=\"num\">geomean</th><th class=\"num\">passed</th>"
      "<th>failing gate</th><th>source</th><th>frontier</th></tr></thead><tbody>\n";
  for (auto it = report.points.rbegin(); it != report.points.rend(); ++it) {
    const ReportPoint& p = *it;
    const std::string status_class = "status-" + p.status;
    std::string geomean = p.geomean ? times(*p.geomean) + (p.scored ? "" : " (subset)") : "-";
    std::string frontier = p.verdict;
    if (!p.member.empty())
      frontier += (frontier.empty() ? "" : "; ") +
                  std::string(p.revalidation ? "revalidates " : "") + p.member;
    out += "<tr>" + td(when_short(p.created_ms), "when") + td(p.result_id, "mono") +
           td(p.status, status_class.c_str()) + td(geomean, "num") +
           td(std::to_string(p.passed) + "/" + std::to_string(p.total), "num") +
           td(p.failing_gate) + td(p.source_path.empty() ? "(inline)" : p.source_path, "mono") +
           td(frontier) + "</tr>\n";
  }
  return out + "</tbody></table></div>\n</details>\n</section>\n";
}

std::string tools_table(const RunReport& report) {
  const SessionStats& s = report.sessions;
  std::string out = "<section id=\"tools-section\">\n<h2>Tool calls</h2>\n";
  if (s.files == 0) {
    return out +
           "<p class=\"empty\">No recorded sessions in <code>sessions/</code>. Sessions started "
           "from the run's <code>.mcp.json</code> or <code>.codex/config.toml</code> are "
           "recorded there.</p>\n</section>\n";
  }
  out += "<p class=\"hint\">" + std::to_string(s.calls) + " calls in " +
         std::to_string(s.sessions) + " session(s), " + std::to_string(s.files) +
         " recording file(s)" +
         (s.first_ms > 0 ? ", " + when(s.first_ms) + " to " + when(s.last_ms) : std::string()) +
         (s.bad_lines ? "; " + std::to_string(s.bad_lines) + " line(s) that are not records"
                      : std::string()) +
         ".</p>\n";
  if (s.tools.empty()) return out + "<p class=\"empty\">No tool was called.</p>\n</section>\n";
  out +=
      "<table id=\"tools\"><thead><tr><th>tool</th><th class=\"num\">calls</th><th class=\"num\">"
      "errors</th><th class=\"bar-cell\">error share</th><th class=\"num\">unanswered</th><th "
      "class=\"num\">mean time</th><th class=\"num\">longest</th></tr></thead><tbody>\n";
  for (const auto& t : s.tools) {
    const size_t answered = t.calls - t.unanswered;
    const double share = t.calls ? static_cast<double>(t.errors) / static_cast<double>(t.calls) : 0;
    out += "<tr>" + td(t.tool, "mono") + td(std::to_string(t.calls), "num") +
           td(std::to_string(t.errors), t.errors ? "num errors" : "num") +
           "<td class=\"bar-cell\"><span style=\"width:" + fixed(share * 100.0, 0) +
           "%\"></span></td>" + td(std::to_string(t.unanswered), "num") +
           td(answered ? fixed(t.total_s / static_cast<double>(answered), 2) + " s" : "-", "num") +
           td(answered ? fixed(t.max_s, 2) + " s" : "-", "num") + "</tr>\n";
  }
  return out + "</tbody></table>\n</section>\n";
}

std::string notes(const RunReport& report) {
  if (report.notes.empty()) return "";
  std::string out = "<section id=\"notes-section\">\n<h2>Notes</h2>\n<ul>\n";
  for (const auto& n : report.notes) out += "<li>" + esc(n) + "</li>\n";
  return out + "</ul>\n</section>\n";
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string script_json(const json& value) {
  const std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {  // these occur only inside JSON strings, where \u escapes mean the same
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

json report_chart_data(const RunReport& report) {
  json points = json::array();
  for (const auto& p : report.points) {
    points.push_back({{"id", p.result_id},
                      {"t", p.created_ms},
                      {"geomean", p.geomean ? json(*p.geomean) : json(nullptr)},
                      {"scored", p.scored},
                      {"status", p.status},
                      {"passed", p.passed},
                      {"total", p.total},
                      {"gate", p.failing_gate},
                      {"member", p.member},
                      {"active", p.member_active},
                      {"best", p.best},
                      {"revalidation", p.revalidation},
                      {"verdict", p.verdict}});
  }
  json best = nullptr;
  if (report.best) {
    json rows = json::array();
    for (const auto& w : report.best->score.workloads)
      rows.push_back({{"name", w.name}, {"speedup", w.speedup}, {"passed", w.passed}});
    best = {
        {"name", report.best->name}, {"geomean", report.best->score.geomean}, {"workloads", rows}};
  }
  return {{"points", points}, {"best", best}};
}

std::string render_run_report_html(const RunReport& report) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      // Self-contained by construction: the page may load nothing from anywhere.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'; script-src 'unsafe-inline'\">\n"
      "<title>kiln report: " +
      esc(report.manifest.run_id) + " (" + esc(report.manifest.task_name) + ")</title>\n<style>" +
      report_assets::kStyle + "</style>\n</head>\n<body>\n";
  out += header(report) + cards(report) + timeline(report) + best_section(report) +
         frontier_table(report) + decisions_table(report) + results_table(report) +
         tools_table(report) + notes(report);
  out +=
      "<footer>\n<p id=\"report-status\" data-status=\"pending\">The charts were not drawn: the "
      "page's script did not run (is JavaScript off?). The tables above hold every number."
      "</p>\n</footer>\n";
  out += "<script type=\"application/json\" id=\"report-data\">" +
         script_json(report_chart_data(report)) + "</script>\n";
  out += std::string("<script>") + report_assets::kErrorScript + "</script>\n<script>" +
         report_assets::kScript + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace kiln::frontier
