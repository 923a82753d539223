// Session recording: every message in and out as one JSON line
// {"ts": ISO-8601 UTC with milliseconds, "dir": "in"|"out", "session": ..., "message": ...}.
#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "kiln/base/result.h"

namespace kiln::mcp {

class Recorder {
 public:
  // Appends to `path` (created when missing).
  static Result<std::unique_ptr<Recorder>> open(const std::filesystem::path& path);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  void incoming(const nlohmann::json& message, const std::string& session = "");
  // Text that was not valid JSON is recorded as {"raw": text}.
  void incoming_raw(const std::string& text, const std::string& session = "");
  void outgoing(const nlohmann::json& message, const std::string& session = "");

 private:
  explicit Recorder(std::FILE* file) : file_(file) {}
  void write(const char* direction, const nlohmann::json& message, const std::string& session);

  std::FILE* file_;
  std::mutex mutex_;
};

std::string utc_timestamp_now();

}  // namespace kiln::mcp
