// That a resource changed, from the tool that changed it to the sessions that listen:
// resources/subscribe of the 2025 revisions sends notifications/resources/updated for the
// URIs a session subscribed to. Tools mark a URI changed through CallContext::resource_changed
// (record_candidate: kiln://frontier). One per ResourceRegistry, shared by every session.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace kiln::mcp {

class ResourceChanges {
 public:
  using Listener = std::function<void(const std::string& uri)>;

  // `listener` hears of every change until remove_listener(the returned id).
  uint64_t add_listener(Listener listener);
  // Once this returns, the listener is not running and is never called again.
  void remove_listener(uint64_t id);

  // Calls every listener with `uri`, one at a time. A listener must not add or remove
  // listeners.
  void changed(const std::string& uri);

 private:
  // Held while listeners run, so remove_listener waits for a running one.
  std::mutex mutex_;
  std::map<uint64_t, Listener> listeners_;
  uint64_t next_id_ = 1;
};

}  // namespace kiln::mcp
