// A client of one runner (runner/protocol/PROTOCOL.md): health, submit, long-poll, events,
// cancel, and `run`, which does all of them for one job. Used by the MCP tools.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::runner {

struct RunnerEndpoint {
  std::string url;    // http://host:port
  std::string token;  // empty: send none
};

struct SubmitReply {
  std::string id;
  size_t position = 0;
};

struct EventsPage {
  std::vector<nlohmann::json> events;
  int64_t next = 0;  // pass as `after` for the following page
  bool more = false;
  std::string state;
};

// What `run` reports while it waits.
struct RunCallbacks {
  std::function<void(const nlohmann::json& event)> on_event;  // each event once, in order
  std::function<bool()> cancelled;                            // polled; true cancels the job
};

struct RunOutcome {
  std::string job_id;
  std::string state;      // finished | cancelled
  nlohmann::json result;  // RESULT
};

class RunnerClient {
 public:
  explicit RunnerClient(RunnerEndpoint endpoint);

  const RunnerEndpoint& endpoint() const { return endpoint_; }

  Result<nlohmann::json> health(std::chrono::seconds timeout = std::chrono::seconds(5)) const;
  Result<SubmitReply> submit(const nlohmann::json& body) const;
  Result<nlohmann::json> job(const std::string& id, double wait_seconds = 0) const;
  Result<EventsPage> events(const std::string& id, int64_t after, double wait_seconds = 0) const;
  Result<nlohmann::json> cancel(const std::string& id) const;

  // Submits, follows the events until the job ends (cancelling it when `cancelled`
  // turns true), and returns its RESULT.
  Result<RunOutcome> run(const nlohmann::json& body, const RunCallbacks& callbacks) const;

  // Long polls last this long; shorter means a cancelled call is noticed sooner.
  void set_poll_seconds(double seconds) { poll_seconds_ = seconds; }

 private:
  enum class Method { kGet, kPost, kDelete };
  Result<nlohmann::json> call(Method method, const std::string& path, const std::string& body,
                              std::chrono::milliseconds read_timeout, int expected_status) const;

  RunnerEndpoint endpoint_;
  double poll_seconds_ = 2;
};

}  // namespace kiln::runner
