#include "kiln/frontier/live_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "kiln/frontier/score.h"

namespace kiln::frontier {

using json = nlohmann::json;

namespace {

std::string fixed(const char* pattern, double value) {
  char text[48];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

// Spaces and quotes would make a field ambiguous to a reader that splits on spaces.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c == '\n' ? ' ' : c);
  }
  return out + "\"";
}

}  // namespace

std::string evaluation_line(const StoredResult& r, const std::string& purpose) {
  const json summary = r.result.value("summary", json::object());
  std::string line = format_utc(r.created_ms) + " " + purpose + " " + r.id +
                     " candidate=" + (r.source_path.empty() ? "(inline)" : r.source_path) +
                     " sha256=" + r.candidate_sha256.substr(0, 12) + " status=" + r.status;
  line += " geomean=" + (r.geomean_speedup ? fixed("%.3fx", *r.geomean_speedup) : std::string("-"));
  line += " passed=" + std::to_string(summary.value("passed", 0)) + "/" +
          std::to_string(summary.value("total", 0));
  line += std::string(" scored=") + (r.scored ? "yes" : "no");
  const std::string gate = failing_gate(r.result);
  line += " gate=" + (gate.empty() ? std::string("-") : quoted(gate));
  if (r.status == "error") line += " error=" + quoted(r.result.value("error", "").substr(0, 200));
  line += " workloads=[";
  bool first = true;
  for (const auto& w : workload_rows(r.result)) {
    line += (first ? "" : "; ") + w.name + (w.passed ? " PASS " : " FAIL");
    if (w.passed)
      line += fixed("%.1fus", w.median_us) + " cv=" + fixed("%.2f%%", w.cv * 100) + " " +
              fixed("%.3fx", w.speedup);
    first = false;
  }
  return line + "]";
}

std::string decision_line(const Decision& d) {
  std::string line = format_utc(d.created_ms) + " frontier " + d.result_id +
                     " name=" + (d.name.empty() ? "-" : d.name) + " decision=" + d.verdict;
  if (d.numbers.is_object() && d.numbers.contains("geomean") && d.numbers["geomean"].is_number())
    line += " geomean=" + fixed("%.3fx", d.numbers["geomean"].get<double>());
  if (!d.revalidation_id.empty()) line += " revalidated=" + d.revalidation_id;
  return line + " reason=" + quoted(d.reason);
}

Status append_line(const std::filesystem::path& file, const std::string& line) {
  const std::string text = line + "\n";
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return make_error("cannot open " + file.string() + " to append: " + std::strerror(errno));
  ssize_t written = ::write(fd, text.data(), text.size());
  int saved = errno;
  ::close(fd);
  if (written != static_cast<ssize_t>(text.size()))
    return make_error("appending to " + file.string() + " failed: " + std::strerror(saved));
  return Ok{};
}

}  // namespace kiln::frontier
