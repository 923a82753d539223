#include "kiln/replay/replay_report.h"

#include <cstdio>
#include <sstream>

#include "kiln/base/text.h"

namespace kiln::replay {

using json = nlohmann::json;

namespace {

std::string seconds_text(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f s", seconds);
  return buffer;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find('\n', start);
    out.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

std::string quote(std::string_view text, size_t max_bytes = 160) {
  std::string out = json(std::string(utf8_prefix(text, max_bytes))).dump();
  if (text.size() > max_bytes) out += "...";
  return out;
}

// Two texts of many lines: the first line that differs, with its number, is what a person
// needs to see; the whole of each would bury it.
std::string string_difference(const std::string& old, const std::string& now) {
  const auto a = lines_of(old), b = lines_of(now);
  if (a.size() <= 1 && b.size() <= 1) return "";
  size_t i = 0;
  while (i < a.size() && i < b.size() && mask_volatile_text(a[i]) == mask_volatile_text(b[i])) ++i;
  std::ostringstream out;
  out << "      text line " << (i + 1) << " of " << a.size() << " / " << b.size() << "\n";
  out << "        old: " << (i < a.size() ? quote(a[i]) : "(no such line)") << "\n";
  out << "        new: " << (i < b.size() ? quote(b[i]) : "(no such line)") << "\n";
  return out.str();
}

std::string format_difference(const Difference& d) {
  std::ostringstream out;
  out << "    " << (d.path.empty() ? "(the whole answer)" : d.path) << "\n";
  if (d.old && d.now && d.old->is_string() && d.now->is_string()) {
    std::string lines = string_difference(d.old->get<std::string>(), d.now->get<std::string>());
    if (!lines.empty()) return out.str() + lines;
  }
  out << "      old: " << show_value(d.old) << "\n";
  out << "      new: " << show_value(d.now) << "\n";
  return out.str();
}

}  // namespace

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kSame:
      return "same";
    case Outcome::kDiffers:
      return "differs";
    case Outcome::kNewError:
      return "new error";
    case Outcome::kNoGpu:
      return "not replayed (no GPU)";
    case Outcome::kSkipped:
      return "skipped";
  }
  return "?";
}

ReplaySummary ReplayReport::summary() const {
  ReplaySummary s;
  for (const auto& v : verdicts) {
    switch (v.outcome) {
      case Outcome::kSame:
        ++s.same;
        break;
      case Outcome::kDiffers:
        ++s.differ;
        break;
      case Outcome::kNewError:
        ++s.new_errors;
        break;
      case Outcome::kNoGpu:
        ++s.no_gpu;
        break;
      case Outcome::kSkipped:
        ++s.skipped;
        break;
    }
  }
  return s;
}

std::string summary_line(const ReplaySummary& s) {
  std::string line = std::to_string(s.same) + " same, " + std::to_string(s.differ) + " differ, " +
                     std::to_string(s.new_errors) + " new error" + (s.new_errors == 1 ? "" : "s");
  std::vector<std::string> aside;
  if (s.no_gpu) aside.push_back(std::to_string(s.no_gpu) + " not replayed (no GPU)");
  if (s.skipped) aside.push_back(std::to_string(s.skipped) + " skipped");
  if (!aside.empty()) line += " (" + join(aside, ", ") + ")";
  return line;
}

std::string format_verdict(const Verdict& v) {
  std::ostringstream out;
  out << "line " << v.line << " " << v.what << ": " << outcome_name(v.outcome);
  if (v.outcome == Outcome::kSame || v.outcome == Outcome::kDiffers ||
      v.outcome == Outcome::kNewError)
    out << " (" << seconds_text(v.seconds) << ")";
  if (!v.note.empty()) out << " - " << v.note;
  out << "\n";
  for (const auto& d : v.differences) out << format_difference(d);
  if (v.truncated) out << "    ... and more differences (see --report FILE)\n";
  return out.str();
}

std::string format_report(const ReplayReport& report, bool all) {
  std::ostringstream out;
  for (const auto& v : report.verdicts)
    if (all || v.outcome != Outcome::kSame) out << format_verdict(v);
  for (const auto& note : report.notes) out << "note: " << note << "\n";
  out << report.recording << ": " << summary_line(report.summary()) << " in "
      << seconds_text(report.seconds) << "\n";
  return out.str();
}

json report_json(const ReplayReport& report) {
  const ReplaySummary s = report.summary();
  json verdicts = json::array();
  for (const auto& v : report.verdicts) {
    json differences = json::array();
    for (const auto& d : v.differences) {
      json item{{"path", d.path}};
      if (d.old) item["old"] = *d.old;
      if (d.now) item["new"] = *d.now;
      differences.push_back(std::move(item));
    }
    json entry{{"line", v.line},
               {"what", v.what},
               {"outcome", outcome_name(v.outcome)},
               {"seconds", v.seconds},
               {"recorded_seconds", v.recorded_seconds},
               {"differences", differences}};
    if (!v.session.empty()) entry["session"] = v.session;
    if (!v.note.empty()) entry["note"] = v.note;
    if (v.truncated) entry["truncated"] = true;
    verdicts.push_back(std::move(entry));
  }
  return json{{"recording", report.recording},
              {"target", report.target},
              {"seconds", report.seconds},
              {"summary",
               {{"same", s.same},
                {"differ", s.differ},
                {"new_errors", s.new_errors},
                {"not_replayed_no_gpu", s.no_gpu},
                {"skipped", s.skipped},
                {"passed", s.passed()}}},
              {"notes", report.notes},
              {"verdicts", verdicts}};
}

}  // namespace kiln::replay
