// What a replay does not compare: the parts of an answer that differ from run to run by nature.
//
// A pattern is either
//   - a JSON pointer into the response message, "/result/serverInfo/version", where a segment
//     may hold `*` (any run of characters: "/result/content/*/text" or "/result/*_s"), or
//   - a bare key, "elapsed_s" or "*_seconds", which matches that key at any depth.
// A matched value is left out whole (its subtree, and whether it is there at all).
//
// The default list (kDefaultVolatileFields, also in README.md, "Replaying a session"):
//   times and durations   seconds, *_seconds, *_s, *_ms, *_us
//   cache hits            cache_hit
//   job, result and other ids   job_id, result_id, revalidation_id, decision_id, taskId,
//                         sessionId, requestState (sealed with a key each process draws)
//   timestamps            ts, timestamp, *_at, *At, started_unix
//   the server's version  /result/serverInfo/version,
//                         /result/_meta/io.modelcontextprotocol~1serverInfo/version
// and, inside every string, text that says the same things (kVolatileText): a duration
// ("3.16 s", "120 ms"), an ISO-8601 time, a job or result id (job-0123..., j-..., r-...), the
// hash nvcc puts in a mangled anonymous namespace (_GLOBAL__N__0f530bab_, from the folder it
// compiled in), the compile line's "cache hit, " — each replaced by a placeholder on both
// sides before the strings are compared.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::replay {

extern const std::span<const std::string_view> kDefaultVolatileFields;

class IgnoreList {
 public:
  // The default list.
  static IgnoreList defaults();
  // Nothing ignored.
  IgnoreList() = default;

  // Adds a pattern (above); an empty one, or a pointer with a bad ~ escape, is an error.
  Status add(std::string_view pattern);
  // Whether the value at `path` (the unescaped keys and indices from the message's root) is
  // left out.
  bool ignores(const std::vector<std::string>& path) const;
  const std::vector<std::string>& patterns() const { return patterns_; }

 private:
  struct Pattern {
    bool anywhere = false;              // a bare key
    std::vector<std::string> segments;  // unescaped, each a glob with *
  };
  std::vector<std::string> patterns_;
  std::vector<Pattern> compiled_;
};

// `text` with volatile runs (durations, times, ids, "cache hit, ") replaced by placeholders.
std::string mask_volatile_text(std::string_view text);

// What a GPU call's answer (benchmark, profile, ...; gpu_calls.h) measures, which a second run on
// the same runner gives differently by nature: its numbers are left out except those that
// count outcomes (kVerdictNumbers: passed, total, mismatches, nan, inf, registers, spills,
// distinct_findings), and in its strings every number is masked except an "N/M" count
// ("PASSED 3/3 workloads", "gates: 7/7 passed"), as are URLs (the runner's label). Statuses,
// stages, gate names and states, errors and every boolean are still compared.
extern const std::span<const std::string_view> kVerdictNumbers;
bool is_verdict_number(std::string_view key);
// `text` (already through mask_volatile_text) with measured numbers and URLs masked.
std::string mask_measured_text(std::string_view text);

// `*` in `glob` matches any run of characters; nothing else is special.
bool glob_match(std::string_view glob, std::string_view text);

}  // namespace kiln::replay
