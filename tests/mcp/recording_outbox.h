// An Outbox that records what a session sends and lets a test wait for it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kiln/mcp/outbox.h"

namespace kiln::mcp::testing {

using json = nlohmann::json;
using namespace std::chrono_literals;

class RecordingOutbox : public Outbox {
 public:
  struct Reply {
    json id;
    std::optional<json> response;
  };
  struct Note {
    json message;
    json about;
  };

  void notify(const json& message, const json& about) override {
    {
      std::lock_guard lock(mutex_);
      notes_.push_back({message, about});
    }
    changed_.notify_all();
  }
  void respond(const json& id, std::optional<json> response) override {
    {
      std::lock_guard lock(mutex_);
      replies_.push_back({id, std::move(response)});
    }
    changed_.notify_all();
  }

  // The first reply to `id`, waiting up to `timeout` for it.
  std::optional<Reply> wait_reply(const json& id, std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mutex_);
    std::optional<Reply> found;
    changed_.wait_for(lock, timeout, [&] {
      for (const auto& reply : replies_)
        if (reply.id == id) found = reply;
      return found.has_value();
    });
    return found;
  }
  std::vector<Reply> replies_to(const json& id) {
    std::lock_guard lock(mutex_);
    std::vector<Reply> out;
    for (const auto& reply : replies_)
      if (reply.id == id) out.push_back(reply);
    return out;
  }
  std::vector<Reply> replies() {
    std::lock_guard lock(mutex_);
    return replies_;
  }
  std::vector<Note> notes() {
    std::lock_guard lock(mutex_);
    return notes_;
  }
  // The first message sent with `method` (a notification, or a request to the client), waiting
  // up to `timeout` for it.
  std::optional<Note> wait_note(const std::string& method, std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mutex_);
    std::optional<Note> found;
    changed_.wait_for(lock, timeout, [&] {
      for (const auto& note : notes_)
        if (note.message.value("method", "") == method) found = note;
      return found.has_value();
    });
    return found;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Reply> replies_;
  std::vector<Note> notes_;
};

}  // namespace kiln::mcp::testing
