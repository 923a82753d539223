// The channel from a forked child (which runs one zoo entry on the GPU) to the test
// process: one JSON object per line in a file, written and flushed as events happen, so
// the parent still learns how far the child got when it crashes or hangs.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kiln::zoo {

// The child's side. Every event also goes to stderr at once (prefixed with the entry id),
// so a run shows progress live.
class Report {
 public:
  Report(const std::filesystem::path& path, std::string id);
  ~Report();
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;

  void log(const std::string& message);
  void failure(const std::string& message);
  void skip(const std::string& reason);
  void measurement(const nlohmann::ordered_json& line);
  void done();  // the last event of a run that finished (passed or not)
  int failures() const { return failures_; }

 private:
  void write(const nlohmann::ordered_json& event);
  int fd_ = -1;
  std::string id_;
  int failures_ = 0;
};

// The parent's side.
struct ReportContents {
  std::vector<std::string> logs;
  std::vector<std::string> failures;
  std::vector<std::string> skips;
  std::vector<nlohmann::ordered_json> measurements;
  bool done = false;
  std::string read_error;  // the file could not be read or held a broken line
};

ReportContents read_report(const std::filesystem::path& path);

}  // namespace kiln::zoo
