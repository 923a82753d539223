// The verifier's side of the conversation with its candidate host (candidate_host_protocol.h):
// one request, one answer, checked before anything in it is used. An answer of the wrong op,
// for another call, a second answer, a malformed line, silence past the timeout or a closed
// channel breaks the conversation for good: the host is out of step with the verifier (or was
// never the host), so nothing it says afterwards is trusted. Also the checks of a call's answer
// that need no GPU: its nonce, and its times against the verifier's own clock.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "kiln/base/result.h"
#include "kiln/worker/candidate_host_protocol.h"
#include "kiln/worker/message_channel.h"

namespace kiln::worker {

class HostConversation {
 public:
  // `describe_end` says how the host process ended ("exited with status 0"), or "" while it
  // runs; asked when the channel closes, to name what happened.
  explicit HostConversation(MessageChannel channel = MessageChannel(),
                            std::function<std::string()> describe_end = {})
      : channel_(std::move(channel)), describe_end_(std::move(describe_end)) {}

  // Sends `request` and returns the answer of op `reply_op` (repeating the request's `seq`,
  // when it has one). Any other outcome breaks the conversation; the error says why.
  Result<nlohmann::json> exchange(const nlohmann::json& request, const char* reply_op,
                                  std::chrono::milliseconds timeout);
  // The same with one interim answer first: `interim.op` (repeating the request's `seq`) is
  // read, `interim.then` runs, and only then is the answer of `reply_op` taken. Each of the two
  // waits is bounded by `timeout`; the interim answer out of turn, missing or for another call
  // breaks the conversation as the answer would.
  struct Interim {
    const char* op = nullptr;
    std::function<void()> then;
  };
  Result<nlohmann::json> exchange(const nlohmann::json& request, const Interim& interim,
                                  const char* reply_op, std::chrono::milliseconds timeout);
  // Sends without waiting (the exit request).
  Status tell(const nlohmann::json& message) { return channel_.send(message); }

  bool open() const { return channel_.open(); }
  bool broken() const { return !broken_.empty(); }
  const std::string& broken_reason() const { return broken_; }
  // Breaks the conversation (the first reason is kept); returns it.
  const std::string& breach(const std::string& why);

 private:
  // Reads one answer of `op` to `request`; `last` when nothing may follow it unasked.
  Result<nlohmann::json> receive(const nlohmann::json& request, const char* op,
                                 std::chrono::milliseconds timeout, bool last);
  // How the host went away, for a channel that failed (`otherwise` while it runs).
  std::string gone(const std::string& otherwise) const;

  MessageChannel channel_;
  std::function<std::string()> describe_end_;
  std::string broken_;
};

// A call's answer against its request and the verifier's clock: the nonce repeated, no time
// beyond the round trip the verifier saw, no harness failure reported. Empty when it holds.
std::string breach_in_call_reply(const host::CallRequest& request, const host::CallReply& reply,
                                 double wall_us);

}  // namespace kiln::worker
