// kiln trace SESSION.jsonl: a recorded session as a person reads it (replay/trace.h). Lines
// the reader cannot use are warnings, not errors: a session cut short is still worth reading.
#include <iostream>

#include "commands.h"
#include "kiln/replay/trace.h"

namespace kiln::cli {

Runner add_trace_command(CLI::App& app, const GlobalOptions&) {
  auto* command = app.add_subcommand(
      "trace",
      "Summarize a recorded session (kiln mcp --record): each tool call with its arguments, "
      "duration and outcome, totals per tool, the longest calls");
  auto session = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  auto longest = std::make_shared<size_t>(5);
  command->add_option("session", *session, "the recording (JSONL)")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_flag("--json", *as_json, "print the trace as JSON");
  command->add_option("--longest", *longest, "how many of the longest calls to list")
      ->check(CLI::Range(0, 1000));
  return [session, as_json, longest]() -> int {
    auto recording = replay::read_recording(*session, replay::ReadMode::kLenient);
    if (!recording) {
      std::cerr << "kiln trace: " << recording.error().message << "\n";
      return 2;
    }
    const replay::Trace trace = replay::build_trace(*recording);
    if (*as_json)
      std::cout << replay::trace_json(trace).dump(2) << "\n";
    else
      std::cout << replay::format_trace(trace, *longest);
    return 0;
  };
}

}  // namespace kiln::cli
