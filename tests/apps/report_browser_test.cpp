// `kiln report` in a real browser: the page the binary writes for a run with results (and for
// one without) is loaded by headless Chromium from a file:// URL, and the DOM it leaves says the
// script finished without error and drew one point per benchmark result and one bar per
// workload of the best candidate; Chromium's console log must be empty (a script error, a CSP
// refusal of anything the page tried to load, would be there). The browser gets no network: a
// proxy nothing listens on, and every host name resolving to nothing. Skipped, with a message,
// when Chromium is not installed (scripts/install-deps.sh installs Debian's `chromium`).
#include <gmock/gmock.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "kiln/base/env.h"
#include "report_fixture.h"
#include "support/run_program.h"

namespace kiln::frontier::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using kiln::testing::Ran;

Ran run(std::vector<std::string> argv, const fs::path& home) {
  return kiln::testing::run_program(
      std::move(argv),
      {{}, {{"KILN_RUNNER", ""}, {"HOME", home.string()}}, std::chrono::seconds(90)});
}

// $KILN_CHROMIUM, else the first of Chromium's names on PATH; empty when there is none.
std::string find_chromium() {
  if (auto named = env_value("KILN_CHROMIUM"); named && !named->empty()) return *named;
  const std::string path = env_value("PATH").value_or("/usr/bin:/bin");
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = path.find(':', start);
      if (end == std::string::npos) end = path.size();
      const fs::path candidate = fs::path(path.substr(start, end - start)) / name;
      std::error_code error;
      if (!candidate.parent_path().empty() && fs::is_regular_file(candidate, error))
        return candidate.string();
      start = end + 1;
    }
  }
  return "";
}

struct Loaded {
  std::string dom;
  std::vector<std::string> console;  // Chromium's CONSOLE log lines
};

Loaded load_in_chromium(const std::string& chromium, const fs::path& page, const fs::path& work) {
  Ran ran = run({chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                 "--user-data-dir=" + (work / "profile").string(), "--no-first-run",
                 "--no-default-browser-check", "--disable-extensions",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-default-apps", "--proxy-server=127.0.0.1:9",
                 "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0",
                 "--virtual-time-budget=5000", "--dump-dom", "file://" + page.string()},
                work);
  EXPECT_EQ(ran.code, 0) << ran.err;
  Loaded loaded;
  loaded.dom = ran.out;
  size_t start = 0;
  while (start < ran.err.size()) {
    size_t end = ran.err.find('\n', start);
    if (end == std::string::npos) end = ran.err.size();
    const std::string line = ran.err.substr(start, end - start);
    if (line.find(":CONSOLE") != std::string::npos) loaded.console.push_back(line);
    start = end + 1;
  }
  return loaded;
}

// The attributes of the element with id="report-status", as the script left them.
std::string status_element(const std::string& dom) {
  std::smatch match;
  if (!std::regex_search(dom, match, std::regex("<p id=\"report-status\"[^>]*>[^<]*"))) return "";
  return match.str();
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class ReportBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = find_chromium();
    if (chromium_.empty())
      GTEST_SKIP() << "chromium is not installed: run scripts/install-deps.sh (it installs "
                      "Debian's chromium) or set KILN_CHROMIUM to a Chromium binary";
  }

  // `kiln report RUN --out DIR/report.html`; returns the page's path.
  fs::path write_report(const fs::path& run_dir) {
    fs::path page = work_ / "report.html";
    Ran ran = run({KILN_BIN, "report", run_dir.string(), "--out", page.string()}, work_.path());
    EXPECT_EQ(ran.code, 0) << ran.err;
    EXPECT_THAT(ran.out, HasSubstr("wrote " + page.string()));
    return page;
  }

  std::string chromium_;
  TempDir run_;
  TempDir work_;
};

TEST_F(ReportBrowserTest, ThePageDrawsEveryBenchmarkAndTheBestsBarsWithoutAScriptError) {
  const ReportRun ids = make_report_run(run_.path());
  const Loaded loaded = load_in_chromium(chromium_, write_report(run_.path()), work_.path());
  const std::string status = status_element(loaded.dom);
  EXPECT_THAT(status, HasSubstr("data-status=\"ok\"")) << status;
  EXPECT_THAT(status, HasSubstr("data-points=\"" + std::to_string(ids.benchmark_ids.size())));
  const size_t workloads = bundled_task()->workloads.size();
  EXPECT_THAT(status, HasSubstr("data-bars=\"" + std::to_string(workloads)));
  // The drawn SVG itself: one point per result, each result's own, the best ringed.
  EXPECT_EQ(count(loaded.dom, "data-result-id=\"r-"), ids.benchmark_ids.size());
  for (const auto& id : ids.benchmark_ids)
    EXPECT_THAT(loaded.dom, HasSubstr("data-result-id=\"" + id + "\"")) << id;
  EXPECT_THAT(loaded.dom,
              HasSubstr("point scored member best\" data-result-id=\"" + ids.tiled_id + "\""));
  EXPECT_THAT(loaded.dom, HasSubstr("point failed\" data-result-id=\"" + ids.failed_id + "\""));
  EXPECT_THAT(loaded.dom, HasSubstr("point subset\" data-result-id=\"" + ids.subset_id + "\""));
  EXPECT_EQ(count(loaded.dom, "<g class=\"bar "), workloads);
  // The hostile strings stayed text.
  EXPECT_THAT(loaded.dom, Not(HasSubstr("<img")));
  EXPECT_TRUE(loaded.console.empty()) << loaded.console.front();
}

TEST_F(ReportBrowserTest, ARunWithoutResultsRendersAPageThatSaysSo) {
  write_report_manifest(run_.path());
  const Loaded loaded = load_in_chromium(chromium_, write_report(run_.path()), work_.path());
  EXPECT_THAT(status_element(loaded.dom), HasSubstr("data-status=\"ok\""));
  EXPECT_THAT(status_element(loaded.dom), HasSubstr("data-points=\"0\""));
  EXPECT_THAT(loaded.dom, HasSubstr("No benchmark results yet"));
  EXPECT_TRUE(loaded.console.empty()) << loaded.console.front();
}

// The check is not vacuous: a page whose script throws is caught by both channels.
TEST_F(ReportBrowserTest, AScriptErrorIsSeenInThePageAndOnTheConsole) {
  make_report_run(run_.path());
  const fs::path page = write_report(run_.path());
  std::string html = read_text(page);
  const std::string call = "drawTimeline(document";
  const size_t at = html.find(call);
  ASSERT_NE(at, std::string::npos);
  html.replace(at, call.size(), "drawTimelineMissing(document");
  write_text(page, html);
  const Loaded loaded = load_in_chromium(chromium_, page, work_.path());
  EXPECT_THAT(status_element(loaded.dom), HasSubstr("data-status=\"error\""));
  ASSERT_FALSE(loaded.console.empty());
  EXPECT_THAT(loaded.console.front(), HasSubstr("drawTimelineMissing"));
}

}  // namespace
}  // namespace kiln::frontier::testing
