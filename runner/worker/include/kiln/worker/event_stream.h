// The worker's stdout: one JSON event per line, flushed as it happens; the last line
// is the result (runner/protocol/PROTOCOL.md, "Worker contract").
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace kiln::worker {

class EventStream {
 public:
  explicit EventStream(std::ostream& out) : out_(out) {}

  void stage(const std::string& stage);
  void progress(const std::string& workload, int index, int total, const std::string& message);
  void log(const std::string& level, const std::string& message);
  void result(const nlohmann::json& result);

  const std::string& last_stage() const { return last_stage_; }

 private:
  void emit(const nlohmann::json& event);

  std::ostream& out_;
  std::mutex mutex_;
  std::string last_stage_ = "start";  // PROTOCOL.md: before any stage event
};

}  // namespace kiln::worker
