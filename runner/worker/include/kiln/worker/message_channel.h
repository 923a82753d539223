// One JSON message per line over a connected stream socket: how kiln-worker (the verifier)
// and its candidate host (the confined process that runs the candidate's code) talk
// (candidate_host_protocol.h). The verifier trusts nothing the other side sends: a message
// that is not one JSON object, longer than the bound, or late is an error, never a crash,
// and a peer that has closed its end is told apart from one that is slow.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "kiln/base/result.h"

namespace kiln::worker {

class MessageChannel {
 public:
  // Takes ownership of `fd` (closed on destruction).
  explicit MessageChannel(int fd = -1, size_t max_message_bytes = kDefaultMaxBytes)
      : fd_(fd), max_bytes_(max_message_bytes) {}
  ~MessageChannel();
  MessageChannel(MessageChannel&& other) noexcept;
  MessageChannel& operator=(MessageChannel&& other) noexcept;
  MessageChannel(const MessageChannel&) = delete;
  MessageChannel& operator=(const MessageChannel&) = delete;

  bool open() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  // Writes `message` and a newline, all of it (a peer that is gone is an error).
  Status send(const nlohmann::json& message);

  // The next message, waiting at most `timeout`. Errors say which: the peer closed the
  // channel (closed() is then true), the time ran out, the line is too long, or it is not
  // a JSON object.
  Result<nlohmann::json> receive(std::chrono::milliseconds timeout);
  bool closed() const { return closed_; }
  // Whether a complete line is already waiting (a second answer where one was expected).
  bool has_buffered_line() const { return buffer_.find('\n') != std::string::npos; }

  static constexpr size_t kDefaultMaxBytes = size_t{16} << 20;

 private:
  void close();

  int fd_ = -1;
  size_t max_bytes_;
  bool closed_ = false;
  std::string buffer_;
};

// A stream socket at `path`, listening for one connection, or connected to one listening there;
// the descriptor (close-on-exec), or what failed with its errno.
Result<int> listen_unix(const std::filesystem::path& path);
Result<int> connect_unix(const std::filesystem::path& path);

}  // namespace kiln::worker
