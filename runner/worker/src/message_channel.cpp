#include "kiln/worker/message_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

namespace kiln::worker {

MessageChannel::~MessageChannel() { close(); }

MessageChannel::MessageChannel(MessageChannel&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      max_bytes_(other.max_bytes_),
      closed_(other.closed_),
      buffer_(std::move(other.buffer_)) {}

MessageChannel& MessageChannel::operator=(MessageChannel&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    max_bytes_ = other.max_bytes_;
    closed_ = other.closed_;
    buffer_ = std::move(other.buffer_);
  }
  return *this;
}

void MessageChannel::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status MessageChannel::send(const nlohmann::json& message) {
  if (fd_ < 0) return make_error("the channel is not open");
  const std::string line = message.dump() + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::send(fd_, line.data() + done, line.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      closed_ = true;
      return make_error(std::string("the other side is gone (") + std::strerror(errno) + ")");
    }
    done += static_cast<size_t>(n);
  }
  return Ok{};
}

Result<nlohmann::json> MessageChannel::receive(std::chrono::milliseconds timeout) {
  if (fd_ < 0) return make_error("the channel is not open");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t newline = buffer_.find('\n');
  while (newline == std::string::npos) {
    if (buffer_.size() > max_bytes_) {
      return make_error("a message longer than " + std::to_string(max_bytes_) +
                        " bytes arrived without its end");
    }
    if (closed_) return make_error("the other side closed the channel");
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return make_error("no answer within " + std::to_string(timeout.count()) + " ms");
    }
    pollfd p{fd_, POLLIN, 0};
    const int wait_ms = static_cast<int>(std::min<int64_t>(left.count(), 1 << 30));
    const int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return make_error(std::string("poll: ") + std::strerror(errno));
    if (ready == 0) continue;
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      closed_ = true;
      continue;
    }
    const size_t scanned = buffer_.size();
    buffer_.append(chunk, static_cast<size_t>(n));
    newline = buffer_.find('\n', scanned);
  }
  std::string line = buffer_.substr(0, newline);
  buffer_.erase(0, newline + 1);
  if (line.size() > max_bytes_) {
    return make_error("a message of " + std::to_string(line.size()) + " bytes is over the " +
                      std::to_string(max_bytes_) + "-byte bound");
  }
  nlohmann::json message = nlohmann::json::parse(line, nullptr, false);
  if (message.is_discarded() || !message.is_object()) {
    return make_error("a message that is not one JSON object: \"" +
                      line.substr(0, std::min<size_t>(line.size(), 80)) + "\"");
  }
  return message;
}

namespace {

// A new stream socket and the address of `path`, then `step` (bind and listen, or connect).
template <typename Step>
Result<int> unix_socket(const std::filesystem::path& path, const char* what, Step&& step) {
  sockaddr_un address{};
  if (path.native().size() >= sizeof address.sun_path)
    return make_error(std::string(what) + " " + path.string() + ": the path is too long");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(std::string("socket: ") + std::strerror(errno));
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (!step(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address)) {
    const Error error =
        make_error(std::string(what) + " " + path.string() + ": " + std::strerror(errno));
    ::close(fd);
    return error;
  }
  return fd;
}

}  // namespace

Result<int> listen_unix(const std::filesystem::path& path) {
  return unix_socket(path, "bind/listen", [](int fd, const sockaddr* address, socklen_t size) {
    return ::bind(fd, address, size) == 0 && ::listen(fd, 1) == 0;
  });
}

Result<int> connect_unix(const std::filesystem::path& path) {
  return unix_socket(path, "connect", [](int fd, const sockaddr* address, socklen_t size) {
    return ::connect(fd, address, size) == 0;
  });
}

}  // namespace kiln::worker
