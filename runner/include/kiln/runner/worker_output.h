// The worker's stdout, read as runner/protocol/PROTOCOL.md defines it: one JSON event per line
// (stage, progress, log) and a last line {"event": "result", "result": RESULT}.
// Anything else makes the output untrusted, and the job an error.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::runner {

class WorkerOutput {
 public:
  // Receives each stage/progress/log event, reduced to the protocol's fields.
  using EventSink = std::function<void(nlohmann::json event)>;
  explicit WorkerOutput(EventSink sink);

  // One stdout line. False once the output cannot be trusted; problem() says why.
  bool add_line(std::string_view line);

  const std::optional<nlohmann::json>& result() const { return result_; }
  const std::string& last_stage() const { return last_stage_; }  // "start" before any
  const std::string& problem() const { return problem_; }
  size_t lines() const { return lines_; }

 private:
  bool fail(std::string problem);

  EventSink sink_;
  std::optional<nlohmann::json> result_;
  std::string last_stage_ = "start";
  std::string problem_;
  size_t lines_ = 0;
};

// The first `max` bytes of `text`, marked when cut, for messages that quote output.
std::string clip(std::string_view text, size_t max);

}  // namespace kiln::runner
