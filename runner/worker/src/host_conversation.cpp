#include "kiln/worker/host_conversation.h"

#include <thread>

namespace kiln::worker {

const std::string& HostConversation::breach(const std::string& why) {
  if (broken_.empty()) broken_ = why;
  return broken_;
}

std::string HostConversation::gone(const std::string& otherwise) const {
  // The process usually ends a moment after its channel closes: wait briefly to say how.
  std::string end;
  for (int i = 0; i < 200 && describe_end_ && (end = describe_end_()).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return end.empty() ? otherwise : "the candidate's process " + end;
}

Result<nlohmann::json> HostConversation::exchange(const nlohmann::json& request,
                                                  const char* reply_op,
                                                  std::chrono::milliseconds timeout) {
  return exchange(request, Interim{}, reply_op, timeout);
}

Result<nlohmann::json> HostConversation::exchange(const nlohmann::json& request,
                                                  const Interim& interim, const char* reply_op,
                                                  std::chrono::milliseconds timeout) {
  if (broken()) return make_error(broken_);
  if (auto s = channel_.send(request); !s) {
    return make_error(breach(gone("the candidate's process is gone (" + s.error().message + ")") +
                             " while the verifier waited for its \"" +
                             (interim.op != nullptr ? interim.op : reply_op) + "\" answer"));
  }
  if (interim.op != nullptr) {
    if (auto step = receive(request, interim.op, timeout, false); !step) return step.error();
    if (interim.then) interim.then();
  }
  return receive(request, reply_op, timeout, true);
}

Result<nlohmann::json> HostConversation::receive(const nlohmann::json& request, const char* op,
                                                 std::chrono::milliseconds timeout, bool last) {
  const std::string waiting =
      std::string(" while the verifier waited for its \"") + op + "\" answer";
  auto answer = channel_.receive(timeout);
  if (!answer) {
    const std::string why = channel_.closed() ? gone("the candidate's process closed its channel")
                                              : answer.error().message;
    return make_error(breach(why + waiting));
  }
  const nlohmann::json& got = *answer;
  if (!got.contains("op") || !got["op"].is_string() || got["op"] != op) {
    return make_error(breach("the candidate's process answered out of turn (expected \"" +
                             std::string(op) + "\", got " + got.dump().substr(0, 120) + ")"));
  }
  if (request.contains("seq") && (!got.contains("seq") || got["seq"] != request["seq"])) {
    return make_error(breach("the candidate's process answered call " + request["seq"].dump() +
                             " with the answer to another call"));
  }
  if (last && channel_.has_buffered_line())
    return make_error(
        breach("the candidate's process sent a second answer where one was expected"));
  return answer;
}

std::string breach_in_call_reply(const host::CallRequest& request, const host::CallReply& reply,
                                 double wall_us) {
  if (reply.nonce != request.nonce) {
    return "the candidate's process answered call " + std::to_string(request.seq) +
           " without the call's nonce: the answer was not the host's";
  }
  if (reply.span_us > wall_us || reply.event_us > wall_us) {
    return "the candidate's process reported " + std::to_string(reply.span_us) +
           " us of GPU time (events " + std::to_string(reply.event_us) +
           " us) for a call that took " + std::to_string(wall_us) +
           " us on the verifier's clock, round trip included";
  }
  if (!reply.harness_error.empty())
    return "the candidate's process could not run the call: " + reply.harness_error;
  return "";
}

}  // namespace kiln::worker
