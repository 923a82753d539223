// The run report's data (load_run_report over a real store, frontier and session recording),
// the session statistics, and the HTML page: its content, its escaping of everything a run
// holds, and that it refers to nothing outside itself. The page in a browser is
// tests/apps/report_browser_test.cpp.
#include "kiln/frontier/run_report.h"

#include <gmock/gmock.h>

#include <regex>

#include "kiln/frontier/run_report_html.h"
#include "report_fixture.h"

namespace kiln::frontier::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const ReportPoint* point(const RunReport& report, const std::string& id) {
  for (const auto& p : report.points)
    if (p.result_id == id) return &p;
  return nullptr;
}

RunReport load(const std::filesystem::path& run) {
  auto report = load_run_report(run);
  if (!report) throw std::runtime_error(report.error().message);
  return *report;
}

TEST(RunReport, HoldsEveryBenchmarkOfTheRunOldestFirstWithItsFrontierMarks) {
  TempDir run;
  const ReportRun ids = make_report_run(run.path());
  const RunReport report = load(run.path());

  ASSERT_EQ(report.points.size(), ids.benchmark_ids.size());
  ASSERT_EQ(report.points.size(), 6u);  // 4 benchmarks + 2 revalidation jobs
  for (size_t i = 0; i < ids.benchmark_ids.size(); ++i)
    EXPECT_EQ(report.points[i].result_id, ids.benchmark_ids[i]);
  for (size_t i = 1; i < report.points.size(); ++i)
    EXPECT_LE(report.points[i - 1].created_ms, report.points[i].created_ms);

  const ReportPoint* starter = point(report, ids.starter_id);
  ASSERT_NE(starter, nullptr);
  EXPECT_TRUE(starter->scored);
  EXPECT_NEAR(starter->geomean.value_or(0), 0.5, 1e-9);
  EXPECT_EQ(starter->member, "starter");
  EXPECT_TRUE(starter->member_active);  // the best of its family still
  EXPECT_FALSE(starter->best);
  EXPECT_EQ(starter->verdict, "accepted_best");

  const ReportPoint* tiled = point(report, ids.tiled_id);
  ASSERT_NE(tiled, nullptr);
  EXPECT_TRUE(tiled->best);
  EXPECT_FALSE(tiled->revalidation);
  EXPECT_EQ(tiled->passed, bundled_task()->workloads.size());

  // A subset is never scored, but its rows' geomean places it on the chart.
  const ReportPoint* subset = point(report, ids.subset_id);
  ASSERT_NE(subset, nullptr);
  EXPECT_FALSE(subset->scored);
  EXPECT_NEAR(subset->geomean.value_or(0), 1.1, 1e-9);
  EXPECT_EQ(subset->total, 3u);

  const ReportPoint* failed = point(report, ids.failed_id);
  ASSERT_NE(failed, nullptr);
  EXPECT_FALSE(failed->geomean.has_value());
  EXPECT_EQ(failed->status, "failed");
  EXPECT_THAT(failed->failing_gate, HasSubstr(benchmark_gates()[0]));
  EXPECT_EQ(failed->verdict, "refused");

  size_t revalidations = 0;
  for (const auto& p : report.points) revalidations += p.revalidation ? 1 : 0;
  EXPECT_EQ(revalidations, 2u);
}

TEST(RunReport, HoldsTheFrontierBestFirstAndEveryDecision) {
  TempDir run;
  make_report_run(run.path());
  const RunReport report = load(run.path());
  ASSERT_EQ(report.members.size(), 2u);
  EXPECT_EQ(report.members[0].name, "tiled");
  EXPECT_TRUE(report.members[0].best);
  ASSERT_TRUE(report.best.has_value());
  EXPECT_EQ(report.best->name, "tiled");
  EXPECT_EQ(report.best->score.workloads.size(), bundled_task()->workloads.size());
  EXPECT_EQ(report.decision_count, 3u);
  ASSERT_EQ(report.decisions.size(), 3u);
  EXPECT_EQ(report.decisions[0].verdict, "refused");  // newest first
  EXPECT_TRUE(report.notes.empty());
}

TEST(RunReport, CountsTheRecordedToolCallsPerTool) {
  TempDir run;
  make_report_run(run.path());
  const SessionStats s = load(run.path()).sessions;
  EXPECT_EQ(s.files, 1u);
  EXPECT_EQ(s.sessions, 1u);
  EXPECT_EQ(s.calls, 5u);
  EXPECT_EQ(s.errors, 2u);
  EXPECT_EQ(s.bad_lines, 1u);
  ASSERT_EQ(s.tools.size(), 4u);
  EXPECT_EQ(s.tools[0].tool, "compile");  // most called first
  EXPECT_EQ(s.tools[0].calls, 2u);
  EXPECT_EQ(s.tools[0].errors, 1u);
  EXPECT_NEAR(s.tools[0].total_s, 3.0, 1e-9);
  EXPECT_NEAR(s.tools[0].max_s, 2.0, 1e-9);
  for (const auto& t : s.tools) {
    if (t.tool == "benchmark") {
      EXPECT_EQ(t.unanswered, 1u);
    } else if (t.tool == kHostileTool) {
      EXPECT_EQ(t.errors, 1u);  // a JSON-RPC error
    } else if (t.tool == "get_task") {
      EXPECT_NEAR(t.total_s, 0.25, 1e-9);
    }
  }
}

TEST(RunReport, MatchesAnswersBySessionAndIdInABatch) {
  TempDir dir;
  const std::string batch =
      R"({"ts":"2026-12-01T10:00:00.000Z","dir":"in","session":"a","message":[)"
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_zoo"}},)"
      R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"search_zoo"}}]})"
      "\n"
      R"({"ts":"2026-12-01T10:00:01.000Z","dir":"out","session":"b","message":{"jsonrpc":"2.0","id":7,"result":{"isError":true}}})"
      "\n"
      R"({"ts":"2026-12-01T10:00:01.000Z","dir":"out","session":"a","message":[{"jsonrpc":"2.0","id":7,"result":{}},{"jsonrpc":"2.0","id":8,"result":{"isError":true}}]})"
      "\n";
  write_text(dir / "s.jsonl", batch);
  write_text(dir / "ignored.txt", "not a recording");
  const SessionStats s = read_session_stats(dir.path());
  EXPECT_EQ(s.files, 1u);
  ASSERT_EQ(s.tools.size(), 1u);
  EXPECT_EQ(s.tools[0].calls, 2u);
  EXPECT_EQ(s.tools[0].errors, 1u);  // session b's answer is not session a's
  EXPECT_EQ(s.tools[0].unanswered, 0u);
}

TEST(RunReport, AMissingSessionsFolderIsNoSessions) {
  TempDir dir;
  const SessionStats s = read_session_stats(dir / "absent");
  EXPECT_EQ(s.files, 0u);
  EXPECT_TRUE(s.tools.empty());
  EXPECT_TRUE(s.problems.empty());
}

TEST(RunReport, ParsesTheRecorderTimestamps) {
  EXPECT_EQ(parse_utc_ms("1970-01-01T00:00:01.250Z"), 1250);
  EXPECT_EQ(parse_utc_ms("2026-12-01T10:00:00Z"), 1796119200000);
  EXPECT_FALSE(parse_utc_ms("2026-12-01 10:00:00.000Z").has_value());
  EXPECT_FALSE(parse_utc_ms("2026-13-01T10:00:00.000Z").has_value());
  EXPECT_FALSE(parse_utc_ms("yesterday").has_value());
}

TEST(RunReport, ARunWithoutResultsIsAReportThatSaysSoAndCreatesNothing) {
  TempDir run;
  write_report_manifest(run.path());
  const RunReport report = load(run.path());
  EXPECT_TRUE(report.points.empty());
  EXPECT_FALSE(report.best.has_value());
  ASSERT_FALSE(report.notes.empty());
  EXPECT_THAT(report.notes[0], HasSubstr("no results yet"));
  EXPECT_FALSE(std::filesystem::exists(run / "results.sqlite"));
  const std::string page = render_run_report_html(report);
  EXPECT_THAT(page, HasSubstr("id=\"no-results\""));
  EXPECT_THAT(page, HasSubstr("id=\"no-best\""));
  EXPECT_THAT(page, Not(HasSubstr("id=\"timeline\"")));
}

TEST(RunReport, AFolderThatIsNotARunIsAnErrorThatSaysWhatToPass) {
  TempDir dir;
  auto report = load_run_report(dir.path());
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(report.error().message, HasSubstr("not a run directory"));
  EXPECT_THAT(report.error().message, HasSubstr("kiln setup"));
}

TEST(RunReport, ABrokenManifestIsAnErrorNamingTheFile) {
  TempDir run;
  write_text(run / "manifest.json", "{ not json");
  auto report = load_run_report(run.path());
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(report.error().message, HasSubstr("manifest.json"));
}

TEST(RunReportHtml, EscapesTheFiveSpecialCharacters) {
  EXPECT_EQ(html_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(html_escape("plain text, 1.043x"), "plain text, 1.043x");
  EXPECT_EQ(html_escape(""), "");
}

TEST(RunReportHtml, ScriptJsonCannotCloseTheScriptElement) {
  const json value = {{"name", "</script><!-- & <b>"}, {"n", 1}};
  const std::string text = script_json(value);
  EXPECT_EQ(text.find('<'), std::string::npos);
  EXPECT_EQ(text.find('>'), std::string::npos);
  EXPECT_EQ(text.find('&'), std::string::npos);
  EXPECT_EQ(json::parse(text), value);  // the same data once parsed
  // Invalid UTF-8 is replaced, not a crash.
  EXPECT_NO_THROW(script_json(json{{"bad", std::string("\xff\xfe")}}));
}

TEST(RunReportHtml, ThePageHoldsTheRunEscaped) {
  TempDir run;
  const ReportRun ids = make_report_run(run.path());
  const std::string page = render_run_report_html(load(run.path()));
  EXPECT_THAT(page, HasSubstr("<!DOCTYPE html>"));
  EXPECT_THAT(page, HasSubstr("kiln report: report-run"));
  EXPECT_THAT(page, HasSubstr("id=\"timeline\""));
  EXPECT_THAT(page, HasSubstr("id=\"bars\""));
  EXPECT_THAT(page, HasSubstr("<table id=\"frontier\">"));
  EXPECT_THAT(page, HasSubstr(ids.tiled_id));
  EXPECT_THAT(page, HasSubstr("1.043x"));
  // The hostile reason and tool name appear only escaped: in the tables as entities...
  EXPECT_THAT(page, HasSubstr("beats &lt;script&gt;alert(&#39;reason&#39;)&lt;/script&gt;"));
  EXPECT_THAT(page, HasSubstr("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"));
  EXPECT_THAT(page, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(page, Not(HasSubstr("<img")));
  // ...and the page has exactly its own three script elements, each closed once.
  size_t opened = 0, closed = 0;
  for (size_t at = page.find("<script"); at != std::string::npos; at = page.find("<script", at + 1))
    ++opened;
  for (size_t at = page.find("</script"); at != std::string::npos;
       at = page.find("</script", at + 1))
    ++closed;
  EXPECT_EQ(opened, 3u);
  EXPECT_EQ(closed, 3u);
}

TEST(RunReportHtml, ThePageLoadsNothingFromOutside) {
  TempDir run;
  make_report_run(run.path());
  const std::string page = render_run_report_html(load(run.path()));
  EXPECT_THAT(page, Not(HasSubstr("<link")));
  EXPECT_FALSE(std::regex_search(page, std::regex("<[^>]*\\ssrc=")));
  EXPECT_THAT(page, Not(HasSubstr("href=")));
  EXPECT_THAT(page, Not(HasSubstr("@import")));
  EXPECT_THAT(page, Not(HasSubstr("url(")));
  EXPECT_THAT(page, HasSubstr("Content-Security-Policy\" content=\"default-src 'none'"));
  // The only URL is the SVG namespace the script names.
  std::regex url("https?://[^\"' )]+");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), url); it != std::sregex_iterator();
       ++it)
    EXPECT_EQ(it->str(), "http://www.w3.org/2000/svg");
}

TEST(RunReportHtml, TheChartDataHasEveryPointAndTheBestsWorkloads) {
  TempDir run;
  const ReportRun ids = make_report_run(run.path());
  const json data = report_chart_data(load(run.path()));
  ASSERT_EQ(data["points"].size(), ids.benchmark_ids.size());
  EXPECT_EQ(data["points"][0]["id"], ids.starter_id);
  EXPECT_TRUE(data["points"][0]["member"] == "starter");
  ASSERT_TRUE(data["best"].is_object());
  EXPECT_EQ(data["best"]["name"], "tiled");
  EXPECT_EQ(data["best"]["workloads"].size(), bundled_task()->workloads.size());
  EXPECT_NEAR(data["best"]["workloads"][0]["speedup"].get<double>(), 1.043, 1e-9);
}

}  // namespace
}  // namespace kiln::frontier::testing
