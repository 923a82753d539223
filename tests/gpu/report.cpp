#include "report.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace kiln::zoo {

Report::Report(const std::filesystem::path& path, std::string id) : id_(std::move(id)) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0)
    std::fprintf(stderr, "[zoo %s] cannot write the report file %s\n", id_.c_str(), path.c_str());
}

Report::~Report() {
  if (fd_ >= 0) ::close(fd_);
}

void Report::write(const nlohmann::ordered_json& event) {
  if (fd_ < 0) return;
  const std::string line =
      event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n <= 0) return;
    written += static_cast<size_t>(n);
  }
}

void Report::log(const std::string& message) {
  std::fprintf(stderr, "[zoo %s] %s\n", id_.c_str(), message.c_str());
  write({{"log", message}});
}

void Report::failure(const std::string& message) {
  ++failures_;
  std::fprintf(stderr, "[zoo %s] FAIL: %s\n", id_.c_str(), message.c_str());
  write({{"failure", message}});
}

void Report::skip(const std::string& reason) {
  std::fprintf(stderr, "[zoo %s] SKIP: %s\n", id_.c_str(), reason.c_str());
  write({{"skip", reason}});
}

void Report::measurement(const nlohmann::ordered_json& line) { write({{"measurement", line}}); }

void Report::done() { write({{"done", true}}); }

ReportContents read_report(const std::filesystem::path& path) {
  ReportContents contents;
  std::ifstream in(path);
  if (!in) {
    contents.read_error = "cannot read the child's report " + path.string();
    return contents;
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto event = nlohmann::ordered_json::parse(line, nullptr, false);
    if (!event.is_object()) {
      contents.read_error = "a broken line in the child's report (it died while writing?)";
      continue;
    }
    if (event.contains("log")) contents.logs.push_back(event["log"].get<std::string>());
    if (event.contains("failure")) contents.failures.push_back(event["failure"].get<std::string>());
    if (event.contains("skip")) contents.skips.push_back(event["skip"].get<std::string>());
    if (event.contains("measurement")) contents.measurements.push_back(event["measurement"]);
    if (event.contains("done")) contents.done = true;
  }
  return contents;
}

}  // namespace kiln::zoo
