#include "kiln/http/listener.h"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace kiln::http {

class Listener::Impl {
 public:
  explicit Impl(ListenerOptions options) : options_(std::move(options)) {
    options_.guard.loopback_bind = is_loopback_host(options_.host);
    int threads = options_.threads;
    http_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    http_.set_payload_max_length(options_.max_request_bytes);
    http_.set_tcp_nodelay(true);  // small replies must not wait for Nagle + delayed ACK (~40 ms)
    http_.set_read_timeout(options_.io_timeout_seconds, 0);
    http_.set_write_timeout(options_.io_timeout_seconds, 0);
    http_.set_keep_alive_timeout(options_.keep_alive_seconds);
    // httplib's default is SO_REUSEPORT, under which a second server on a port in use
    // binds too and the kernel splits the connections between them. SO_REUSEADDR alone
    // still allows a restart while old connections linger in TIME_WAIT.
    http_.set_socket_options([](int sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
  }

  Status check_address() const {
    if (!options_.guard.loopback_bind && !options_.guard.bearer_token)
      return make_error("refusing to listen on " + options_.host +
                        " without a bearer token: " + options_.token_advice);
    return Ok{};
  }

  Result<int> bind() {
    if (auto checked = check_address(); !checked) return checked.error();
    int port = options_.port == 0
                   ? http_.bind_to_any_port(options_.host)
                   : (http_.bind_to_port(options_.host, options_.port) ? options_.port : -1);
    if (port < 0)
      return make_error("cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                        " (in use, or not an address of this machine); pick another with " +
                        options_.address_flag);
    port_ = port;
    return port;
  }

  void serve() {
    serving_ = true;
    if (!stop_requested_) http_.listen_after_bind();
    serving_ = false;
  }

  void stop() {
    stop_requested_ = true;
    // httplib ignores stop() until listening has begun: wait for that (or for serve() to
    // return), so a stop that races start-up is never lost. A serve() that has not begun
    // sees stop_requested_ and does not listen at all.
    for (int i = 0; i < 2500 && serving_ && !http_.is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    http_.stop();
  }

  GuardVerdict guard(const httplib::Request& request, httplib::Response& response) const {
    GuardVerdict verdict = check_http_request(options_.guard, request_header(request, "Origin"),
                                              request_header(request, "Host"),
                                              request_header(request, "Authorization"));
    if (verdict.status == 0) return verdict;
    response.status = verdict.status;
    if (verdict.status == 401) response.set_header("WWW-Authenticate", "Bearer");
    return verdict;
  }

  httplib::Server& server() { return http_; }
  const ListenerOptions& options() const { return options_; }
  int port() const { return port_; }

 private:
  ListenerOptions options_;
  httplib::Server http_;
  int port_ = 0;
  std::atomic<bool> serving_{false};
  std::atomic<bool> stop_requested_{false};
};

Listener::Listener(ListenerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Listener::~Listener() = default;
httplib::Server& Listener::server() { return impl_->server(); }
Status Listener::check_address() const { return impl_->check_address(); }
Result<int> Listener::bind() { return impl_->bind(); }
void Listener::serve() { impl_->serve(); }
void Listener::stop() { impl_->stop(); }
const ListenerOptions& Listener::options() const { return impl_->options(); }
int Listener::port() const { return impl_->port(); }
GuardVerdict Listener::guard(const httplib::Request& request, httplib::Response& response) const {
  return impl_->guard(request, response);
}

std::optional<std::string> request_header(const httplib::Request& request, const char* name) {
  if (!request.has_header(name)) return std::nullopt;
  return request.get_header_value(name);
}

std::string exception_text(const std::exception_ptr& error) {
  try {
    if (error) std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
  }
  return "internal error";
}

}  // namespace kiln::http
