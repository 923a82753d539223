#include "kiln/worker/sanitizer_report.h"

#include <algorithm>
#include <regex>
#include <sstream>

#include "kiln/base/text.h"

namespace kiln::worker {

namespace {

// "file.cu:14" -> file, line; false when there is no trailing :number.
bool split_file_line(const std::string& text, std::string* file, int* line) {
  static const std::regex kFileLine(R"(^(.*\S):(\d+)$)");
  std::smatch m;
  if (!std::regex_match(text, m, kFileLine)) return false;
  *file = m[1];
  *line = std::stoi(m[2]);
  return true;
}

// The text after "at " in its four spellings:
//   kernel(args)+0x50 in file.cu:14        kernel():0x160 in file.cu:6
//   0x150 in kernel(args)                  0x3c8 in /dir/file.cu:42:kernel(args)
void parse_location(std::string text, SanitizerFinding* f) {
  static const std::regex kHazards(R"(\s*\[(\d+) hazards?\]\s*$)");
  std::smatch m;
  if (std::regex_search(text, m, kHazards)) {
    f->hazards = std::stoi(m[1]);
    text = text.substr(0, static_cast<size_t>(m.position(0)));
  }
  text = std::string(trim(text));
  if (text.rfind("0x", 0) == 0) {
    const size_t in = text.find(" in ");
    f->pc = text.substr(0, in);
    if (in == std::string::npos) return;
    const std::string rest = text.substr(in + 4);
    static const std::regex kFileLineKernel(R"(^(.+?):(\d+):(.+)$)");
    if (std::regex_match(rest, m, kFileLineKernel)) {
      f->file = m[1];
      f->line = std::stoi(m[2]);
      f->kernel = m[3];
    } else {
      f->kernel = rest;
    }
    return;
  }
  const size_t in = text.rfind(" in ");
  std::string left = in == std::string::npos ? text : text.substr(0, in);
  if (in != std::string::npos)
    split_file_line(std::string(trim(text.substr(in + 4))), &f->file, &f->line);
  const size_t plus = left.rfind("+0x");
  if (plus != std::string::npos) {
    f->kernel = left.substr(0, plus);
    f->pc = left.substr(plus + 1);
    return;
  }
  const size_t colon = left.rfind(":0x");
  if (colon != std::string::npos) {
    f->kernel = left.substr(0, colon);
    f->pc = left.substr(colon + 1);
    return;
  }
  f->kernel = left;
}

bool same_place(const SanitizerFinding& a, const SanitizerFinding& b) {
  return a.kind == b.kind && a.kernel == b.kernel && a.file == b.file && a.line == b.line &&
         a.pc == b.pc;
}

}  // namespace

nlohmann::json SanitizerFinding::to_json() const {
  nlohmann::json j = {
      {"tool", tool}, {"severity", severity}, {"kind", kind}, {"kernel", kernel}, {"count", count}};
  if (!file.empty()) j["file"] = file;
  if (line > 0) j["line"] = line;
  if (!pc.empty()) j["pc"] = pc;
  if (!thread.empty()) j["thread"] = thread;
  if (!block.empty()) j["block"] = block;
  if (!address.empty()) j["address"] = address;
  if (!detail.empty()) j["detail"] = detail;
  if (hazards > 0) j["hazards"] = hazards;
  return j;
}

nlohmann::json SanitizerReport::to_json(size_t limit) const {
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < findings.size() && i < limit; ++i) list.push_back(findings[i].to_json());
  nlohmann::json j = {{"findings", list}, {"distinct_findings", findings.size()}};
  if (error_summary >= 0) j["error_summary"] = error_summary;
  if (tool_failed) j["tool_failed"] = true;
  if (!tool_message.empty()) j["tool_message"] = tool_message;
  return j;
}

SanitizerReport SanitizerReport::parse(const std::string& output, const std::string& tool) {
  static const std::regex kSummary(R"(ERROR SUMMARY:\s*([\d,]+) errors?\s*$)");
  static const std::regex kThread(R"(by thread (\([^)]*\)) in block (\([^)]*\)))");
  static const std::regex kAddress(R"((?:Address|Access to) (0x[0-9a-fA-F]+))");
  SanitizerReport report;
  std::istringstream lines(output);
  std::string raw;
  SanitizerFinding current;
  bool open = false;
  bool in_backtrace = false;
  auto close = [&] {
    if (!open) return;
    open = false;
    for (auto& f : report.findings) {
      if (same_place(f, current)) {
        ++f.count;
        f.hazards += current.hazards;
        return;
      }
    }
    report.findings.push_back(current);
  };
  while (std::getline(lines, raw)) {
    const std::string marker = "=========";
    if (raw.rfind(marker, 0) != 0) continue;
    const std::string body = raw.substr(marker.size());
    const std::string text(trim(body));
    if (text.empty()) {
      close();
      continue;
    }
    std::smatch m;
    if (std::regex_search(text, m, kSummary)) {
      close();
      std::string digits = m[1];
      digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
      if (report.error_summary < 0) report.error_summary = std::stoi(digits);
      continue;
    }
    if (text.find("ERROR SUMMARY") != std::string::npos ||
        text.find("errors were skipped") != std::string::npos) {
      close();
      if (report.tool_message.empty())
        report.tool_message = text;  // "N errors were not printed", ...
      continue;
    }
    const size_t indent = body.find_first_not_of(' ');
    const bool top = indent != std::string::npos && indent <= 1;
    if (top) {
      if (text == "COMPUTE-SANITIZER" || text.find("SUMMARY") != std::string::npos) continue;
      if (text.find("Device not supported") != std::string::npos ||
          text.find("Unable to find injection library") != std::string::npos ||
          text.find("Failed to") == 0) {
        report.tool_failed = true;
        report.tool_message = text;
        continue;
      }
      if (text.find("Target application returned an error") != std::string::npos) {
        report.tool_message = text;
        continue;
      }
      close();
      in_backtrace = false;
      current = SanitizerFinding();
      current.tool = tool;
      open = true;
      std::string message = text;
      current.severity = "error";
      if (message.rfind("Warning:", 0) == 0) {
        current.severity = "warning";
        message = trim(message.substr(8));
      } else if (message.rfind("Error:", 0) == 0) {
        message = trim(message.substr(6));
      }
      // "Race reported between Write access at LOCATION": the location is in the message.
      const size_t at = message.find(" access at ");
      if (at != std::string::npos) {
        parse_location(message.substr(at + 11), &current);
        current.kind = message.substr(0, at + 7);
      } else {
        current.kind = message;
      }
      continue;
    }
    if (!open) continue;
    if (text.rfind("Saved host backtrace", 0) == 0 || text.rfind("Host Frame", 0) == 0) {
      in_backtrace = true;
      continue;
    }
    if (in_backtrace) continue;
    if (text.rfind("at ", 0) == 0 && current.kernel.empty()) {
      parse_location(text.substr(3), &current);
    } else if (std::regex_search(text, m, kThread)) {
      current.thread = m[1];
      current.block = m[2];
    } else if (text.rfind("Device Frame", 0) == 0) {
      continue;
    } else {
      if (std::regex_search(text, m, kAddress) && current.address.empty()) current.address = m[1];
      if (text.rfind("and ", 0) == 0) {
        SanitizerFinding other;
        const size_t at = text.find(" access at ");
        if (at != std::string::npos) parse_location(text.substr(at + 11), &other);
        current.hazards += other.hazards;
        std::string where = other.kernel;
        if (!other.file.empty()) where += " at " + other.file + ":" + std::to_string(other.line);
        current.detail += (current.detail.empty() ? "" : "; ") +
                          text.substr(0, at == std::string::npos ? text.size() : at + 7) +
                          (where.empty() ? "" : " in " + where);
      } else if (current.detail.size() < 400) {
        current.detail += (current.detail.empty() ? "" : "; ") + text;
      }
    }
  }
  close();
  return report;
}

}  // namespace kiln::worker
