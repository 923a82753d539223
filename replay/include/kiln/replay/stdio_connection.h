// A server run as a child and spoken to over stdio: newline-delimited JSON-RPC on its stdin
// and stdout, its stderr kept (the last few KB) for the message when it dies.
//
// base's run_supervised (kiln/base/process.h) gives every child /dev/null as stdin, so it
// cannot hold a conversation; this starts the child the same way otherwise: posix_spawn, its
// own process group (killed whole when it outstays finish()), default signals, only
// descriptors 0, 1 and 2.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kiln/base/process_output.h"
#include "kiln/replay/connection.h"

namespace kiln::replay {

class StdioConnection : public Connection {
 public:
  // Starts argv (argv[0] looked up in PATH when it has no '/').
  static Result<std::unique_ptr<StdioConnection>> start(const std::vector<std::string>& argv);
  ~StdioConnection() override;
  StdioConnection(const StdioConnection&) = delete;
  StdioConnection& operator=(const StdioConnection&) = delete;

  Status send(const nlohmann::json& message) override;
  Status send_raw(const std::string& text) override;
  std::optional<nlohmann::json> receive(Clock::time_point deadline) override;
  std::string closed() override;
  void finish() override;

 private:
  StdioConnection() = default;
  Status write_line(std::string text);
  void read_stdout(int fd);
  void read_stderr(int fd);
  // The child's status once it exited ("exited with status 1"); empty while it runs.
  std::string reap(bool wait);

  std::string program_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  std::thread stdout_reader_, stderr_reader_;
  Inbox inbox_;
  std::mutex mutex_;  // the fields below
  OutputTail stderr_tail_{4096};
  std::string exit_;  // how it ended, once reaped
};

}  // namespace kiln::replay
