// kiln report [RUN] [--out FILE]: a run's HTML report (frontier/run_report_html.h), one
// self-contained page a person opens in a browser.
#include <iomanip>
#include <iostream>

#include "commands.h"
#include "kiln/base/file.h"
#include "kiln/frontier/run_report.h"
#include "kiln/frontier/run_report_html.h"

namespace kiln::cli {

namespace fs = std::filesystem;

Runner add_report_command(CLI::App& app, const GlobalOptions&) {
  auto* command = app.add_subcommand(
      "report",
      "Write a run's report as one self-contained HTML page: the speedup of every benchmark "
      "over time, the best candidate per workload, the frontier and the sessions' tool calls");
  auto run = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  command->add_option("run", *run,
                      "the run directory (default: this folder, or its parent in a worktree)");
  command->add_option("--out", *out, "where to write the page (default: RUN/report.html)");
  return [run, out]() -> int {
    fs::path dir = run->empty() ? fs::current_path() : fs::path(*run);
    if (run->empty() && !fs::exists(dir / "manifest.json") &&
        fs::exists(dir.parent_path() / "manifest.json"))
      dir = dir.parent_path();
    if (!fs::exists(dir / "manifest.json")) {
      std::cerr << "kiln report: " << dir.string()
                << " is not a run directory (no manifest.json); pass the folder `kiln setup` "
                   "made, e.g. `kiln report runs/RUN`\n";
      return 2;
    }
    dir = fs::absolute(dir).lexically_normal();
    auto report = frontier::load_run_report(dir);
    if (!report) {
      std::cerr << "kiln report: " << report.error().message << "\n";
      return 1;
    }
    const fs::path page = out->empty() ? dir / "report.html" : fs::absolute(*out);
    if (auto written = write_file(page, frontier::render_run_report_html(*report)); !written) {
      std::cerr << "kiln report: " << written.error().message
                << "; choose a writable file with --out\n";
      return 1;
    }
    size_t scored = 0;
    for (const auto& p : report->points) scored += p.scored ? 1 : 0;
    std::cout << "kiln report: wrote " << page.string() << "\n  " << report->points.size()
              << " benchmark result(s) (" << scored << " scored), " << report->members.size()
              << " frontier member(s)";
    if (report->best)
      std::cout << ", best " << report->best->name << " " << std::fixed << std::setprecision(3)
                << report->best->reference_geomean() << "x";
    std::cout << ", " << report->sessions.calls << " tool call(s) in " << report->sessions.sessions
              << " session(s)\n";
    for (const auto& note : report->notes) std::cout << "  note: " << note << "\n";
    std::cout << "  open file://" << page.string() << " in a browser\n";
    return 0;
  };
}

}  // namespace kiln::cli
