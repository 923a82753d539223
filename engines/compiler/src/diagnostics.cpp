#include "kiln/compiler/diagnostics.h"

#include <regex>
#include <sstream>

#include "kiln/base/text.h"
#include "kiln/compiler/demangle.h"

namespace kiln::compiler {

namespace {

constexpr size_t kMaxContinuations = 4;  // "argument types are", "detected during", ...

std::string normalize_severity(const std::string& word) {
  if (word.find("error") != std::string::npos || word == "fatal") return "error";
  return "warning";
}

Diagnostic located(const std::string& severity, const char* tool, const std::string& file,
                   const std::string& line, std::string message) {
  Diagnostic d;
  d.severity = normalize_severity(severity);
  d.tool = tool;
  d.file = file;
  d.line = std::stoi(line);
  d.message = std::move(message);
  return d;
}

// ptxas names kernels by their mangled names; a reader wants the source names.
std::string demangle_quoted(const std::string& message) {
  static const std::regex kQuoted(R"('(_Z[A-Za-z0-9_]+)')");
  std::string out;
  auto begin = std::sregex_iterator(message.begin(), message.end(), kQuoted);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    out += message.substr(last, static_cast<size_t>(it->position()) - last);
    out += "'" + demangle((*it)[1]) + "'";
    last = static_cast<size_t>(it->position() + it->length());
  }
  return out + message.substr(last);
}

bool is_caret_line(const std::string& line) {
  const size_t caret = line.find('^');
  return caret != std::string::npos && line.find_first_not_of(' ') == caret &&
         line.find_first_not_of(" ^~") == std::string::npos;
}

// The column in `written` of the text at `column` of nvcc's `quote` of the same line: the
// same when the line had no macros before the column, else where the rest of the quoted line
// appears in the written one.
int written_column(const std::string& quote, int column, const std::string& written) {
  if (column <= 0 || quote == written || static_cast<size_t>(column) > quote.size()) return column;
  if (quote.compare(0, static_cast<size_t>(column), written, 0, static_cast<size_t>(column)) == 0)
    return column;
  const std::string rest = quote.substr(static_cast<size_t>(column - 1));
  if (written.size() >= rest.size() &&
      written.compare(written.size() - rest.size(), rest.size(), rest) == 0)
    return static_cast<int>(written.size() - rest.size()) + 1;
  const size_t found = written.find(rest);
  return found == std::string::npos ? column : static_cast<int>(found) + 1;
}

// The front end's diagnostics span several lines: the header, indented detail lines, the
// source line (indented by two spaces) and a caret under the column.
class FrontEndBlock {
 public:
  explicit FrontEndBlock(Diagnostic diagnostic) : diagnostic_(std::move(diagnostic)) {}

  // False when `line` does not belong to this block.
  bool add(const std::string& line) {
    if (line.empty() || line[0] != ' ') return false;
    if (is_caret_line(line) && !pending_.empty()) {
      const std::string quote = pending_.back();
      pending_.pop_back();
      diagnostic_.source_line = quote.size() >= 2 ? quote.substr(2) : quote;
      diagnostic_.column = static_cast<int>(line.find('^')) - 1;
      return true;
    }
    pending_.push_back(line);
    return true;
  }

  Diagnostic finish(const SourceReader& read_source) {
    size_t shown = 0;
    for (const std::string& detail : pending_) {
      const std::string text(trim(detail));
      if (text.empty() || ++shown > kMaxContinuations) continue;
      diagnostic_.message += "; " + text;
    }
    // nvcc quotes the line after preprocessing (__device__ shows as __attribute__((device))):
    // show the line as written, and move the column to the same text in it.
    if (read_source && diagnostic_.line > 0) {
      if (auto text = read_source(diagnostic_.file)) {
        const std::string written = line_of(*text, diagnostic_.line);
        diagnostic_.column = written_column(diagnostic_.source_line, diagnostic_.column, written);
        diagnostic_.source_line = written;
      }
    }
    return diagnostic_;
  }

 private:
  Diagnostic diagnostic_;
  std::vector<std::string> pending_;
};

}  // namespace

std::string line_of(const std::string& text, int line) {
  if (line <= 0) return "";
  size_t start = 0;
  for (int i = 1; i < line; ++i) {
    start = text.find('\n', start);
    if (start == std::string::npos) return "";
    ++start;
  }
  if (start >= text.size()) return "";
  const size_t end = text.find('\n', start);
  std::string out = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (!out.empty() && out.back() == '\r') out.pop_back();
  return out;
}

std::string Diagnostic::to_string() const {
  std::string out = file.empty() ? tool : file;
  if (line > 0) out += ":" + std::to_string(line);
  if (line > 0 && column > 0) out += ":" + std::to_string(column);
  out += ": " + severity;
  if (!code.empty()) out += " #" + code;
  out += ": " + message;
  if (!source_line.empty()) out += "\n    " + std::string(trim(source_line));
  return out;
}

nlohmann::json Diagnostic::to_json() const {
  nlohmann::json j = {{"severity", severity},
                      {"tool", tool},
                      {"file", file},
                      {"line", line},
                      {"column", column},
                      {"message", message},
                      {"source_line", source_line}};
  if (!code.empty()) j["code"] = code;
  if (ptx_line > 0) j["ptx_line"] = ptx_line;
  return j;
}

Diagnostic Diagnostic::from_json(const nlohmann::json& j) {
  Diagnostic d;
  d.severity = j.value("severity", "error");
  d.tool = j.value("tool", "");
  d.file = j.value("file", "");
  d.line = j.value("line", 0);
  d.column = j.value("column", 0);
  d.code = j.value("code", "");
  d.message = j.value("message", "");
  d.source_line = j.value("source_line", "");
  d.ptx_line = j.value("ptx_line", 0);
  return d;
}

std::vector<Diagnostic> parse_diagnostics(const std::string& output,
                                          const SourceReader& read_source) {
  static const std::regex kFrontEnd(
      R"(^(.+)\((\d+)\): (error|warning|catastrophic error|remark)(?: #(\S+))?: (.*)$)");
  static const std::regex kHost(R"(^(.+?):(\d+):(?:(\d+):)? (error|warning|fatal error): (.*)$)");
  static const std::regex kPtxasAt(R"(^ptxas (.+), line (\d+); (error|warning)\s*: (.*)$)");
  static const std::regex kTool(
      R"(^(nvcc|ptxas|nvlink|fatbinary|cicc)\s+(fatal|error|warning)\s*: (.*)$)");

  std::vector<Diagnostic> out;
  std::optional<FrontEndBlock> block;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (block && block->add(line)) continue;
    if (block) {
      out.push_back(block->finish(read_source));
      block.reset();
    }
    std::smatch m;
    if (std::regex_match(line, m, kFrontEnd)) {
      if (m[3] == "remark") continue;
      Diagnostic d = located(m[3], "nvcc", m[1], m[2], m[5]);
      d.code = m[4];
      block.emplace(std::move(d));
    } else if (std::regex_match(line, m, kPtxasAt)) {
      Diagnostic d = located(m[3], "ptxas", m[1], m[2], demangle_quoted(m[4]));
      d.ptx_line = d.line;
      out.push_back(std::move(d));
    } else if (std::regex_match(line, m, kTool)) {
      const std::string message = m[3];
      // ptxas's summary after its own errors says nothing new.
      if (message.find("assembly aborted due to errors") != std::string::npos) continue;
      Diagnostic d;
      d.severity = normalize_severity(m[2]);
      d.tool = m[1] == "ptxas" ? "ptxas" : "nvcc";
      d.message = demangle_quoted(message);
      out.push_back(std::move(d));
    } else if (std::regex_match(line, m, kHost)) {
      Diagnostic d = located(m[4], "host", m[1], m[2], m[5]);
      d.column = m[3].matched ? std::stoi(m[3]) : 0;
      if (read_source) {
        if (auto text = read_source(d.file)) d.source_line = line_of(*text, d.line);
      }
      out.push_back(std::move(d));
    }
  }
  if (block) out.push_back(block->finish(read_source));
  return out;
}

}  // namespace kiln::compiler
