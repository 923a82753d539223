// What a replay found: one verdict per message of the client that the server answers (or
// should have), the summary line "N same, M differ, K new errors", and the same as JSON for
// --report FILE.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/replay/json_diff.h"

namespace kiln::replay {

enum class Outcome {
  kSame,      // the answer matches the recording (volatile fields aside)
  kDiffers,   // it does not
  kNewError,  // the recording has a success; the replay an error, isError or no answer
  kNoGpu,     // a GPU tool with no runner configured: not replayed, neither pass nor failure
  kSkipped,   // left out (--only), or a client answer to a request the server did not send
};

const char* outcome_name(Outcome outcome);  // "same", "differs", "new error", ...

struct Verdict {
  size_t line = 0;      // the recording's line of the client's message
  std::string session;  // "" for stdio and stateless HTTP
  std::string what;     // "tools/call compile", "initialize", "text that is not JSON"
  Outcome outcome = Outcome::kSame;
  std::vector<Difference> differences;
  bool truncated = false;       // more differences than were kept
  std::string note;             // why it was skipped, or what came instead of an answer
  double seconds = 0;           // from sending it to its answer in the replay
  double recorded_seconds = 0;  // the same in the recording (0 when unknown)
};

struct ReplaySummary {
  size_t same = 0, differ = 0, new_errors = 0, no_gpu = 0, skipped = 0;
  bool passed() const { return differ == 0 && new_errors == 0; }
};

struct ReplayReport {
  std::string recording;  // the file replayed
  std::string target;     // the command or URL it was replayed against
  std::vector<Verdict> verdicts;
  std::vector<std::string> notes;  // about the whole replay (sessions, stray output)
  double seconds = 0;              // the whole replay

  ReplaySummary summary() const;
};

// "12 same, 1 differ, 0 new errors (2 not replayed: no GPU)".
std::string summary_line(const ReplaySummary& summary);
// One verdict for a person: "line 14 tools/call compile: differs" and, below, each difference
// as its JSON path with the old and the new value (two strings: their first differing line).
std::string format_verdict(const Verdict& verdict);
// Every verdict that is not "same", then the notes and the summary (with `all`, every verdict).
std::string format_report(const ReplayReport& report, bool all = false);
nlohmann::json report_json(const ReplayReport& report);

}  // namespace kiln::replay
