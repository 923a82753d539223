#include "candidate_host.h"

#include <cuda_runtime_api.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <random>
#include <system_error>

#include "cuda_status.h"
#include "kiln/base/file.h"
#include "kiln/base/process.h"

namespace kiln::worker {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string fresh_nonce() {
  std::random_device device;
  const uint32_t words[4] = {device(), device(), device(), device()};
  return host::to_hex(words, sizeof words);
}

void forward_to_stderr(std::string_view chunk) {
  size_t done = 0;
  while (done < chunk.size()) {
    const ssize_t n = ::write(STDERR_FILENO, chunk.data() + done, chunk.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

std::string describe_exit(const ProcessExit& exit) {
  switch (exit.how) {
    case ProcessExit::How::kExited:
      return "exited with status " + std::to_string(exit.exit_code);
    case ProcessExit::How::kSignaled:
      return "was killed by " + signal_name(exit.signal);
    case ProcessExit::How::kSpawnFailed:
      return "could not be started (" + exit.spawn_error + ")";
    default:
      return "was stopped by the verifier";
  }
}

// The parent of process `pid`, from /proc (0 when unknown).
pid_t parent_of(pid_t pid) {
  auto read = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!read) return 0;
  const std::string& text = *read;
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 4 > text.size()) return 0;
  // ") S PPID ..."
  return static_cast<pid_t>(std::atol(text.c_str() + close + 4));
}

// A listening socket in a fresh private folder, and the folder.
Result<int> listen_in(std::filesystem::path* dir, std::filesystem::path* socket_path) {
  char pattern[] = "/tmp/kiln-host-XXXXXX";
  if (::mkdtemp(pattern) == nullptr)
    return make_error(std::string("mkdtemp: ") + std::strerror(errno));
  *dir = pattern;
  *socket_path = *dir / "s";
  return listen_unix(*socket_path);
}

}  // namespace

Result<std::unique_ptr<CandidateHost>> CandidateHost::start(const Options& options,
                                                            host::LoadReply* reply) {
  std::unique_ptr<CandidateHost> self(new CandidateHost());
  self->hang_timeout_seconds_ = options.load.hang_timeout_seconds;
  std::filesystem::path socket_path;
  auto listener = listen_in(&self->socket_dir_, &socket_path);
  if (!listener) return listener.error();

  ProcessSpec spec;
  spec.argv = {options.executable.string(), "--candidate-host", socket_path.string()};
  spec.working_dir = options.load.library.parent_path();  // not the job folder
  CandidateHost* raw = self.get();
  self->supervisor_ = std::thread([raw, spec] {
    ProcessLimits limits;
    limits.cancel = &raw->cancel_;
    ProcessOutput output;
    output.on_stdout = [](std::string_view chunk) {
      forward_to_stderr(chunk);
      return true;
    };
    output.on_stderr = forward_to_stderr;
    const ProcessExit exit = run_supervised(spec, limits, output);
    {
      const std::lock_guard<std::mutex> lock(raw->exit_mutex_);
      raw->exit_description_ = describe_exit(exit);
    }
    raw->exited_ = true;
  });

  // The host connects once its process is up; nothing else may (the folder is private and
  // the peer must be our child).
  const auto deadline = Clock::now() + options.start_timeout;
  int fd = -1;
  while (fd < 0) {
    if (self->exited_) {
      ::close(*listener);
      const std::lock_guard<std::mutex> lock(self->exit_mutex_);
      return make_error("the candidate's process " + self->exit_description_ +
                        " before it connected");
    }
    if (Clock::now() > deadline) {
      ::close(*listener);
      return make_error("the candidate's process did not connect within " +
                        std::to_string(options.start_timeout.count()) + " s");
    }
    pollfd p{*listener, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    fd = ::accept4(*listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ucred peer{};
    socklen_t length = sizeof peer;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 ||
        parent_of(peer.pid) != ::getpid()) {
      ::close(fd);  // not our child
      fd = -1;
    }
  }
  ::close(*listener);
  std::error_code ignored;
  std::filesystem::remove_all(self->socket_dir_, ignored);
  self->socket_dir_.clear();
  self->conversation_ =
      HostConversation(MessageChannel(fd), [raw] { return raw->end_description(); });

  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(options.start_timeout);
  auto answer = self->conversation_.exchange(options.load.to_json(), host::op::kPrepared, timeout);
  if (!answer)
    return make_error("the candidate's process did not start: " + answer.error().message);
  auto prepared = host::LoadReply::from_json(*answer, host::op::kPrepared);
  if (!prepared) return prepared.error();
  *reply = std::move(*prepared);
  if (!reply->ok || !reply->harness_error.empty()) {
    reply->ok = false;
    return self;
  }
  for (int i = 0; i < options.probes; ++i) {
    double overhead_us = 0;
    if (auto s = self->probe(&overhead_us); !s)
      return make_error("the candidate's process failed a probe call: " + s.error().message);
    self->probe_overhead_us_.push_back(overhead_us);
  }
  answer = self->conversation_.exchange({{"op", host::op::kLoad}}, host::op::kLoaded, timeout);
  if (!answer) return make_error("the candidate's process did not load: " + answer.error().message);
  auto loaded = host::LoadReply::from_json(*answer);
  if (!loaded) return loaded.error();
  reply->ok = loaded->ok;
  reply->error = loaded->error;
  reply->load_changes = loaded->load_changes;
  reply->libraries = loaded->libraries;
  return self;
}

Result<host::CallReply> CandidateHost::exchange_call(const host::CallRequest& request,
                                                     const std::function<void()>& at_ran,
                                                     std::chrono::milliseconds timeout,
                                                     double* wall_us) {
  // The clock runs from sending the call to its interim answer and what the verifier does at
  // it: the GPU's work is done then, and what the host does afterwards is its own bookkeeping
  // (candidate_host_protocol.h).
  const auto sent = Clock::now();
  auto ran = sent;
  auto answer = conversation_.exchange(request.to_json(),
                                       {host::op::kRan,
                                        [&] {
                                          if (at_ran) at_ran();
                                          ran = Clock::now();
                                        }},
                                       host::op::kCalled, timeout);
  *wall_us = std::chrono::duration<double, std::micro>(ran - sent).count();
  if (!answer) return answer.error();
  auto reply = host::CallReply::from_json(*answer);
  if (!reply) return make_error("the candidate's process sent " + reply.error().message);
  if (const std::string breach = breach_in_call_reply(request, *reply, *wall_us); !breach.empty())
    return make_error(breach);
  return reply;
}

Status CandidateHost::probe(double* overhead_us) {
  host::CallRequest request;
  request.seq = next_seq_++;
  request.nonce = fresh_nonce();
  request.timed = true;
  request.probe = true;
  double wall_us = 0;
  auto reply = exchange_call(request, {}, std::chrono::milliseconds(30000), &wall_us);
  if (!reply) return reply.error();
  if (reply->status != 0 || !reply->cuda_error.empty())
    return make_error("its empty launch failed (" + reply->cuda_error + ")");
  *overhead_us = wall_us - reply->span_us;
  return Ok{};
}

CandidateHost::~CandidateHost() {
  if (conversation_.open() && !conversation_.broken()) {
    (void)conversation_.tell({{"op", host::op::kExit}});
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (!exited_ && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  cancel_ = true;
  if (supervisor_.joinable()) supervisor_.join();
  if (!socket_dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(socket_dir_, ignored);
  }
}

const std::string& CandidateHost::mark_broken(const std::string& why) {
  cancel_ = true;  // a host out of step with the verifier is not used again
  return conversation_.breach(why);
}

std::string CandidateHost::end_description() const {
  if (!exited_) return "";
  const std::lock_guard<std::mutex> lock(exit_mutex_);
  return exit_description_;
}

Result<int64_t> CandidateHost::share(const GuardedBuffer& buffer) {
  if (auto found = shared_.find(buffer.base()); found != shared_.end()) return found->second;
  cudaIpcMemHandle_t handle;
  if (auto s = cuda_ok(cudaIpcGetMemHandle(&handle, buffer.base()), "cudaIpcGetMemHandle"); !s)
    return s.error();
  const int64_t id = next_id_++;
  host::ShareRequest request;
  request.buffers.push_back(
      {id, host::to_hex(&handle, sizeof handle), buffer.data_offset(), buffer.bytes()});
  auto answer =
      conversation_.exchange(request.to_json(), host::op::kShared, std::chrono::seconds(30));
  if (!answer) return answer.error();
  auto error = host::share_error(*answer);
  if (!error)
    return make_error(mark_broken("the candidate's process sent " + error.error().message));
  if (!error->empty())
    return make_error(
        mark_broken("the candidate's process could not open a shared buffer: " + *error));
  shared_[buffer.base()] = id;
  return id;
}

void CandidateHost::release_all() {
  if (shared_.empty() || conversation_.broken()) {
    shared_.clear();
    return;
  }
  json ids = json::array();
  for (const auto& [base, id] : shared_) ids.push_back(id);
  shared_.clear();
  (void)conversation_.exchange({{"op", host::op::kRelease}, {"ids", ids}}, host::op::kReleased,
                               std::chrono::seconds(30));
}

void CandidateHost::call(const tasks::WorkloadLayout& layout, const TensorSet& inputs,
                         const TensorSet& outputs, bool timed, const std::function<void()>& at_ran,
                         CallReport* report) {
  report->remote = true;
  report->window.owner = report->owner;
  host::CallRequest request;
  request.seq = next_seq_++;
  request.nonce = fresh_nonce();
  request.workload = layout.workload;
  request.timed = timed;
  for (size_t t = 0; t < layout.tensors.size(); ++t) {
    const GuardedBuffer* buffer = (layout.tensors[t].is_output ? outputs : inputs).at(t);
    if (buffer == nullptr) {
      request.buffers.push_back(-1);
      continue;
    }
    auto id = share(*buffer);
    if (!id) {
      report->integrity_error = id.error().message;
      report->fatal = true;
      return;
    }
    request.buffers.push_back(*id);
  }
  double wall_us = 0;
  auto reply = exchange_call(
      request, at_ran,
      std::chrono::milliseconds(static_cast<int64_t>(1000 * hang_timeout_seconds_) + 30000),
      &wall_us);
  if (!reply) {
    report->integrity_error = mark_broken(reply.error().message);
    report->fatal = true;
    return;
  }
  report->status = reply->status;
  report->cuda_error = reply->cuda_error;
  report->fatal = reply->fatal;
  report->hung = reply->hung;
  report->event_us = reply->event_us;
  report->span_us = reply->span_us;
  report->tail_us = reply->tail_us;
  report->findings.kernels = reply->kernels;
  report->findings.violations = reply->hidden;
  report->findings.notes = reply->notes;
  report->findings.host_syncs = reply->host_syncs;
  report->waited_in_call = reply->waited;
  report->device_state_changes = reply->device_state_changes;
  report->activity = reply->activity;
  report->activity_problem = reply->activity_problem;
  report->wall_us = wall_us;
  report->libraries = reply->libraries;
  report->memory_recorded = reply->memory;
  report->memory_leak = reply->memory_leak;
  dropped_ = reply->dropped;
}

Result<std::vector<std::string>> CandidateHost::work_after_calls() {
  auto answer = conversation_.exchange({{"op", host::op::kAfterCalls}}, host::op::kAfterCalls,
                                       std::chrono::seconds(30));
  if (!answer) return answer.error();
  auto hidden = host::after_calls_findings(*answer);
  if (!hidden)
    return make_error(mark_broken("the candidate's process sent " + hidden.error().message));
  return hidden;
}

}  // namespace kiln::worker
