// kiln-worker: one job of the kiln runner, in a fresh process (runner/protocol/PROTOCOL.md).
//
//   kiln-worker --job JOB_DIR/job.json --gpu N [--hw-dir DIR] [--build-only]
//   kiln-worker --run-once --job JOB_DIR/job.json --gpu N --workload W [--calls K] [--target
//   candidate|baseline]
//   kiln-worker --candidate-host SOCKET   (started by the worker itself: the process that runs
//                                          the candidate's code; candidate_host_main.h)
//
// stdout carries JSON events and, last, the result; stderr free-form logs. The exit code
// is 0 whenever a result was written, 2 for bad arguments, 3 when the worker itself broke.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "kiln/base/env.h"
#include "kiln/compiler/toolchain.h"
#include "kiln/worker/candidate_host_main.h"
#include "kiln/worker/event_stream.h"
#include "kiln/worker/job_driver.h"
#include "kiln/worker/job_spec.h"
#include "kiln/worker/run_once.h"

namespace {

// The protocol's stdout, moved to a private descriptor at start: fd 1 then points at
// stderr, so whatever the candidate (or device printf, or a library) prints cannot
// interleave with, or forge, the JSON event lines the server reads.
class ProtocolOutput : public std::streambuf {
 public:
  ProtocolOutput() {
    fd_ = ::dup(STDOUT_FILENO);
    if (fd_ >= 0) ::dup2(STDERR_FILENO, STDOUT_FILENO);
  }
  ~ProtocolOutput() override {
    sync();
    if (fd_ >= 0) ::close(fd_);
  }
  ProtocolOutput(const ProtocolOutput&) = delete;
  ProtocolOutput& operator=(const ProtocolOutput&) = delete;

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return 0;
    buffer_ += static_cast<char>(c);
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    buffer_.append(s, static_cast<size_t>(n));
    return n;
  }
  int sync() override {
    size_t done = 0;
    while (done < buffer_.size()) {
      const ssize_t n =
          ::write(fd_ >= 0 ? fd_ : STDOUT_FILENO, buffer_.data() + done, buffer_.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    buffer_.clear();
    return 0;
  }

 private:
  int fd_ = -1;
  std::string buffer_;
};

int usage(const std::string& problem) {
  std::cerr
      << "kiln-worker: " << problem << "\n"
      << "usage: kiln-worker --job JOB_DIR/job.json --gpu N [--hw-dir DIR] [--build-only]\n"
      << "       kiln-worker --run-once --job JOB_DIR/job.json --gpu N --workload W [--calls K]"
         " [--target candidate|baseline]\n";
  return 2;
}

// What the command line leaves unsaid, from the environment: the one place the worker reads
// it. --hw-dir wins over KILN_HW_DIR; KILN_NCU and KILN_COMPUTE_SANITIZER name the tools
// (else the toolkit's, else PATH's); the toolchain is KILN_CUDA_ROOT's and the like
// (kiln/compiler/toolchain.h). A variable set to the empty string counts as unset.
void read_environment(kiln::worker::WorkerOptions* options) {
  if (options->hw_dir.empty()) options->hw_dir = kiln::env_or("KILN_HW_DIR", "");
  options->ncu = kiln::env_or("KILN_NCU", "");
  options->compute_sanitizer = kiln::env_or("KILN_COMPUTE_SANITIZER", "");
  options->toolchain = kiln::compiler::toolchain_from_environment(options->executable);
}

std::filesystem::path self_path(const char* argv0) {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) return path;
  return std::filesystem::absolute(argv0, ec);
}

}  // namespace

int main(int argc, char** argv) {
  // The candidate host reads no job file and writes no protocol line: its only channel is the
  // socket its verifier listens on.
  if (argc == 3 && std::string(argv[1]) == "--candidate-host")
    return kiln::worker::serve_candidate_host(argv[2]);
  kiln::worker::WorkerOptions options;
  kiln::worker::RunOnceOptions once;
  bool run_once = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string text;
    if (arg == "--job" && value(&text)) {
      options.job_path = text;
    } else if (arg == "--gpu" && value(&text)) {
      options.gpu = std::atoi(text.c_str());
    } else if (arg == "--hw-dir" && value(&text)) {
      options.hw_dir = text;
    } else if (arg == "--build-only") {
      options.build_only = true;
    } else if (arg == "--run-once") {
      run_once = true;
    } else if (arg == "--workload" && value(&text)) {
      once.workload = text;
    } else if (arg == "--calls" && value(&text)) {
      once.calls = std::max(1, std::atoi(text.c_str()));
    } else if (arg == "--target" && value(&text)) {
      once.target = text;
    } else if (arg == "--version") {
      std::cout << "kiln-worker (kiln " << KILN_WORKER_VERSION << ")\n";
      return 0;
    } else {
      return usage("unexpected argument \"" + arg + "\"");
    }
  }
  if (options.job_path.empty()) return usage("--job is required");
  options.executable = self_path(argv[0]);
  options.job_path = std::filesystem::absolute(options.job_path);
  read_environment(&options);

  auto spec = kiln::worker::JobSpec::load(options.job_path);
  if (!run_once) std::cout.flush();
  ProtocolOutput protocol_buffer;
  std::ostream protocol(&protocol_buffer);
  if (run_once) {
    if (!spec) return usage(spec.error().message);
    if (once.workload.empty()) return usage("--run-once needs --workload");
    return kiln::worker::run_once(*spec, options, once);
  }
  if (!spec) {
    // A job the worker cannot read still gets a result, so the server can show why.
    kiln::worker::EventStream events(protocol);
    events.result({{"status", "error"}, {"stage", "build"}, {"error", spec.error().message}});
    return 0;
  }
  bool fatal = false;
  int code = 3;
  try {
    code = kiln::worker::drive_job(*spec, options, protocol, &fatal);
  } catch (const std::exception& e) {
    kiln::worker::EventStream events(protocol);
    events.result({{"status", "error"},
                   {"stage", "verify"},
                   {"error", std::string("worker failure: ") + e.what()}});
    code = 0;
    fatal = true;
  }
  protocol.flush();
  std::fflush(nullptr);
  // After a dead or hung CUDA context, tearing down (module unload, cudaFree in
  // destructors) can block: leave at once.
  if (fatal) std::_Exit(code);
  return code;
}
