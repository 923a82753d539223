#include "kiln/worker/event_stream.h"

namespace kiln::worker {

void EventStream::emit(const nlohmann::json& event) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Invalid UTF-8 (a compiler log quoting odd bytes) is replaced, never a throw.
  out_ << event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  out_.flush();
}

void EventStream::stage(const std::string& stage) {
  last_stage_ = stage;
  emit({{"event", "stage"}, {"stage", stage}});
}

void EventStream::progress(const std::string& workload, int index, int total,
                           const std::string& message) {
  emit({{"event", "progress"},
        {"workload", workload},
        {"index", index},
        {"total", total},
        {"message", message}});
}

void EventStream::log(const std::string& level, const std::string& message) {
  emit({{"event", "log"}, {"level", level}, {"message", message}});
}

void EventStream::result(const nlohmann::json& result) {
  emit({{"event", "result"}, {"result", result}});
}

}  // namespace kiln::worker
