// kiln replay SESSION.jsonl: re-send a recorded session's client messages to a kiln (started
// with --against, or this binary's `kiln mcp`, or one running at --url) and compare every answer
// with the recorded one (replay/replayer.h). Exit status 0 only when nothing differs.
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "kiln/base/file.h"
#include "kiln/base/text.h"
#include "kiln/replay/command_line.h"
#include "kiln/replay/http_connection.h"
#include "kiln/replay/replayer.h"
#include "kiln/replay/run_of_recording.h"
#include "kiln/replay/stdio_connection.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

struct ReplayCommandOptions {
  std::string session;
  std::string against;
  std::string url;
  std::vector<std::string> only;
  std::vector<std::string> ignore;
  std::vector<std::string> map;
  std::string report;
  int timeout_s = 300;
  bool quiet = false;
};

// This binary's `kiln mcp`, with the global options given to this one and, for a recording in
// a run's sessions/ folder (what `kiln setup` configures), that run.
std::vector<std::string> default_server(const GlobalOptions& global, const fs::path& session) {
  std::vector<std::string> argv{program_path().string()};
  if (!global.tasks_dir.empty()) argv.insert(argv.end(), {"--tasks-dir", global.tasks_dir});
  if (!global.task.empty()) argv.insert(argv.end(), {"--task", global.task});
  argv.insert(argv.end(), {"--log-level", "warn", "mcp"});
  if (auto run = replay::run_of_recording(session))
    argv.insert(argv.end(), {"--run-dir", run->string()});
  return argv;
}

int run_replay(const ReplayCommandOptions& options, const GlobalOptions& global) {
  auto recording = replay::read_recording(options.session, replay::ReadMode::kStrict);
  if (!recording) {
    std::cerr << "kiln replay: " << recording.error().message << "\n";
    return 2;
  }
  replay::ReplayOptions replay;
  replay.only = options.only;
  // GPU calls go to a runner when one is configured: KILN_RUNNER, or the runner in the
  // manifest of the run the default server gets.
  const bool default_server_used = options.url.empty() && options.against.empty();
  replay.gpu = replay::runner_configured(
      default_server_used ? replay::run_of_recording(options.session) : std::nullopt);
  replay.answer_timeout = std::chrono::seconds(options.timeout_s);
  for (const auto& pattern : options.ignore)
    if (auto added = replay.ignore.add(pattern); !added) {
      std::cerr << "kiln replay: " << added.error().message << "\n";
      return 2;
    }
  for (const auto& pair : options.map) {
    const size_t equals = pair.find('=');
    if (equals == 0 || equals == std::string::npos) {
      std::cerr << "kiln replay: --map " << pair << ": wants FROM=TO, e.g. /kiln=$PWD\n";
      return 2;
    }
    replay.map.emplace_back(pair.substr(0, equals), pair.substr(equals + 1));
  }
  const bool quiet = options.quiet;
  replay.on_verdict = [quiet](const replay::Verdict& verdict) {
    if (!quiet || verdict.outcome != replay::Outcome::kSame)
      std::cout << replay::format_verdict(verdict) << std::flush;
  };

  replay::ConnectionFactory connect;
  std::string target;
  if (!options.url.empty()) {
    auto endpoint = replay::parse_http_url(options.url);
    if (!endpoint) {
      std::cerr << "kiln replay: " << endpoint.error().message << "\n";
      return 2;
    }
    target = options.url;
    connect = [endpoint = *endpoint,
               timeout = replay.answer_timeout]() -> Result<std::unique_ptr<replay::Connection>> {
      return std::unique_ptr<replay::Connection>(new replay::HttpConnection(endpoint, timeout));
    };
  } else {
    std::vector<std::string> argv;
    if (!options.against.empty()) {
      auto split = replay::split_command_line(options.against);
      if (!split) {
        std::cerr << "kiln replay: " << split.error().message << "\n";
        return 2;
      }
      argv = *split;
    } else {
      argv = default_server(global, options.session);
    }
    target = join(argv, " ");
    connect = [argv]() -> Result<std::unique_ptr<replay::Connection>> {
      auto started = replay::StdioConnection::start(argv);
      if (!started) return started.error();
      return std::unique_ptr<replay::Connection>(std::move(started).value());
    };
  }
  std::cout << "kiln replay: " << options.session << " against " << target << "\n" << std::flush;
  auto report = replay::replay_recording(*recording, replay, connect);
  if (!report) {
    std::cerr << "kiln replay: " << report.error().message << "\n";
    return 2;
  }
  report->target = target;
  for (const auto& note : report->notes) std::cout << "note: " << note << "\n";
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f s", report->seconds);
  std::cout << report->recording << ": " << replay::summary_line(report->summary()) << " in "
            << seconds << "\n";
  if (!options.report.empty()) {
    if (auto written = write_file(options.report, replay::report_json(*report).dump(2) + "\n");
        !written) {
      std::cerr << "kiln replay: " << written.error().message << "; choose another --report\n";
      return 2;
    }
  }
  return report->summary().passed() ? 0 : 1;
}

}  // namespace

Runner add_replay_command(CLI::App& app, const GlobalOptions& global) {
  auto* command = app.add_subcommand(
      "replay",
      "Re-send a recorded session (kiln mcp --record) to a kiln and compare every answer with "
      "the recorded one; exit 0 only when nothing differs");
  auto options = std::make_shared<ReplayCommandOptions>();
  command->add_option("session", options->session, "the recording (JSONL)")
      ->required()
      ->check(CLI::ExistingFile);
  auto* against = command->add_option(
      "--against", options->against,
      "the server to start and speak stdio to, as one string (default: this kiln's `kiln mcp`, "
      "with the run directory when the recording is in RUN/sessions/)");
  command
      ->add_option("--url", options->url,
                   "a running server's Streamable HTTP endpoint instead, e.g. "
                   "http://127.0.0.1:8765/mcp")
      ->excludes(against);
  command
      ->add_option("--only", options->only, "replay only the calls of these tools (others skipped)")
      ->delimiter(',');
  command
      ->add_option("--ignore", options->ignore,
                   "more JSON pointers (/result/x, * matches any run) or keys (x) to leave out of "
                   "the comparison, besides the volatile defaults")
      ->delimiter(',');
  command->add_option("--map", options->map,
                      "FROM=TO: replace FROM in the recording's strings (sent and compared) with "
                      "TO, for paths of the machine it was recorded on (repeatable)");
  command->add_option("--report", options->report, "write every verdict as JSON to FILE");
  command->add_option("--timeout", options->timeout_s, "seconds to wait for each answer")
      ->check(CLI::Range(1, 86400));
  command->add_flag("--quiet", options->quiet, "print only the verdicts that are not `same`");
  return [options, &global]() -> int { return run_replay(*options, global); };
}

}  // namespace kiln::cli
