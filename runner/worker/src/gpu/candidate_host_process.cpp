#include <cuda_runtime_api.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include "activity_recorder.h"
#include "checked_call.h"
#include "cuda_status.h"
#include "device_state.h"
#include "harness_kernels.h"
#include "harness_resources.h"
#include "kiln/base/confine.h"
#include "kiln/base/text.h"
#include "kiln/tasks/task.h"
#include "kiln/tasks/tensor_layout.h"
#include "kiln/worker/candidate_host_main.h"
#include "kiln/worker/candidate_host_protocol.h"
#include "kiln/worker/device_memory_ledger.h"
#include "kiln/worker/dynamic_library.h"
#include "kiln/worker/environment_guard.h"
#include "kiln/worker/loaded_libraries.h"
#include "kiln/worker/message_channel.h"
#include "runtime_target.h"

namespace kiln::worker {

namespace {

using nlohmann::json;

// The host's state between messages.
class Host {
 public:
  explicit Host(MessageChannel& channel) : channel_(channel) {}

  // The prepare request: CUPTI, the GPU, the harness, confinement; nothing of the candidate's.
  host::LoadReply prepare(const host::LoadRequest& request);
  // A call, a probe's (before load only: the window around the harness's empty launch) or the
  // candidate's: sends its interim answer exactly once, when the GPU's work is done or, for a
  // call that ended before its window, ahead of the answer this returns.
  json answer_call(const host::CallRequest& request);
  // The load request: the candidate's library, its load-time changes put back.
  host::LoadReply load();
  json share(const json& message);
  json release(const json& message);
  json after_calls();
  // Other threads' CUDA calls and GPU work outside every call's window, in `records`.
  std::vector<std::string> hidden_work(const std::vector<ActivityRecord>& records) const;

 private:
  json probe(const host::CallRequest& request);
  json call(const host::CallRequest& request);

  MessageChannel& channel_;
  ActivityRecorder recorder_;
  HarnessResources harness_;
  DeviceState device_state_;
  CallEnvironment env_;
  std::optional<tasks::Task> task_;
  std::map<std::string, tasks::WorkloadLayout> layouts_;
  std::filesystem::path library_path_;
  std::optional<DynamicLibrary> library_;
  kiln_launch_fn launch_ = nullptr;
  struct Mapping {
    void* base = nullptr;
    int64_t offset = 0;
  };
  std::map<int64_t, Mapping> mappings_;
  std::vector<CallWindow> windows_;
  LoadedLibraries libraries_;
  DeviceMemoryLedger memory_;
};

// The probes' stand-in for kiln_launch: one empty kernel on the call's stream.
int empty_launch(const kiln_tensor*, int, const kiln_scalar*, int, cudaStream_t stream) {
  return launch_empty(stream) == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}

// A call's reply from its window's report (a probe's or the candidate's).
host::CallReply reply_from(const host::CallRequest& request, const CallReport& report) {
  host::CallReply reply;
  reply.seq = request.seq;
  reply.nonce = request.nonce;
  reply.status = report.status;
  reply.cuda_error = report.cuda_error;
  reply.fatal = report.fatal;
  reply.hung = report.hung;
  reply.event_us = report.event_us;
  reply.span_us = report.span_us;
  reply.tail_us = report.tail_us;
  reply.kernels = report.findings.kernels;
  reply.hidden = report.findings.violations;
  reply.notes = report.findings.notes;
  reply.host_syncs = report.findings.host_syncs;
  reply.waited = report.waited_in_call;
  reply.device_state_changes = report.device_state_changes;
  reply.activity = report.activity;
  reply.activity_problem = report.activity_problem;
  reply.harness_error = report.harness_error;
  return reply;
}

host::LoadReply Host::prepare(const host::LoadRequest& request) {
  host::LoadReply reply;
  library_path_ = request.library;
  // CUPTI before the first CUDA call, so it sees every kernel of the context.
  if (const Status s = recorder_.start(); !s) reply.activity_note = s.error().message;
  if (auto s = cuda_ok(cudaSetDevice(request.gpu), "cudaSetDevice"); !s) {
    reply.harness_error = s.error().message;
    return reply;
  }
  // No flush buffer: the verifier flushes L2 before each timed call it sends, where a candidate
  // that writes this process's memory cannot skip it.
  if (auto s = harness_.init(std::nullopt); !s) {
    reply.harness_error = s.error().message;
    return reply;
  }
  env_ = harness_.environment();
  env_.hang_timeout_seconds = request.hang_timeout_seconds;
  if (recorder_.running()) {
    if (auto s = harness_.learn_activity_ids(recorder_, &env_.activity); s) {
      env_.recorder = &recorder_;
      reply.activity = true;
    } else {
      reply.activity_note =
          "CUPTI did not see the harness's marker kernels (" + s.error().message + ")";
    }
  }
  auto state = DeviceState::capture(env_.launch_stream);
  if (!state) {
    reply.harness_error = state.error().message;
    return reply;
  }
  device_state_ = *state;
  env_.device_state = &device_state_;
  auto task = tasks::load_task(request.task_dir);
  if (!task) {
    reply.harness_error = "cannot load the task bundle: " + task.error().message;
    return reply;
  }
  task_ = std::move(*task);
  std::vector<std::string> runtime_notes;  // the verifier reports them; the task is the same
  adapt_task_to_runtime(&*task_, &runtime_notes);

  // Confined before any of the candidate's code runs (its load-time constructors included).
  ConfinePolicy policy = ConfinePolicy::for_cuda_process(request.cuda_root);
  for (const auto& path : request.readable) policy.readable.push_back(path);
  extend_confinement_for_runtime(&policy);
  // The task's banned libraries are never loaded here; hidden, they cannot be read and mapped
  // by a loader of the candidate's own either.
  const auto banned_files = ConfinePolicy::find_libraries(request.cuda_root, task_->banned_symbols);
  policy.hide(banned_files);
  auto confined = confine_this_process(policy);
  if (!confined) {
    reply.harness_error = "cannot confine the candidate's process: " + confined.error().message;
    return reply;
  }
  if (!confined->seccomp || (confined->landlock_abi > 0 && !confined->landlock_all_threads)) {
    reply.harness_error = "the candidate's process could not be fully confined (" +
                          join(confined->notes, "; ") + "); the candidate was not loaded";
    return reply;
  }
  reply.confinement = {{"process", "separate (the candidate never runs in the verifier)"},
                       {"seccomp", confined->seccomp},
                       {"landlock_abi", confined->landlock_abi},
                       {"landlock_all_threads", confined->landlock_all_threads},
                       {"notes", confined->notes}};
  reply.ok = true;
  return reply;
}

json Host::answer_call(const host::CallRequest& request) {
  bool ran = false;
  env_.gpu_done = [&] {
    if (ran) return;
    ran = true;
    (void)channel_.send({{"op", host::op::kRan}, {"seq", request.seq}});
  };
  json answer = request.probe ? probe(request) : call(request);
  env_.gpu_done();
  env_.gpu_done = nullptr;
  return answer;
}

json Host::probe(const host::CallRequest& request) {
  CallReport report;
  report.owner = "candidate";  // the window is charged as the candidate's calls are
  run_call_window(env_, empty_launch, {}, {}, request.timed, &report);
  windows_.push_back(report.window);
  host::CallReply reply = reply_from(request, report);
  if (env_.recorder != nullptr) reply.dropped = recorder_.dropped();
  return reply.to_json();
}

host::LoadReply Host::load() {
  host::LoadReply reply;
  (void)libraries_.new_since_last();  // the host's own, before the candidate's load
  const EnvironmentGuard environment;
  auto library = DynamicLibrary::open(library_path_);
  for (const auto& variable : environment.restore())
    reply.load_changes.push_back("the environment (" + variable + ")");
  for (auto& change : device_state_.restore(env_.launch_stream))
    reply.load_changes.push_back(change);
  if (!library) {
    reply.error = library.error().message;
    return reply;
  }
  library_ = std::move(*library);
  auto symbol = library_->symbol("kiln_launch");
  if (!symbol) {
    reply.error = symbol.error().message;
    return reply;
  }
  launch_ = reinterpret_cast<kiln_launch_fn>(*symbol);
  reply.libraries = libraries_.new_since_last();
  reply.ok = true;
  return reply;
}

json Host::share(const json& message) {
  auto request = host::ShareRequest::from_json(message);
  std::string error = request ? "" : request.error().message;
  for (const auto& b : request ? request->buffers : std::vector<host::SharedBuffer>()) {
    cudaIpcMemHandle_t handle;
    if (!host::from_hex(b.handle, &handle, sizeof handle)) {
      error = "a malformed buffer handle";
      break;
    }
    void* base = nullptr;
    if (auto s = cuda_ok(cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess),
                         "cudaIpcOpenMemHandle");
        !s) {
      error = s.error().message;
      break;
    }
    mappings_[b.id] = {base, b.offset};
  }
  return {{"op", host::op::kShared}, {"error", error}};
}

json Host::release(const json& message) {
  if (message.contains("ids") && message["ids"].is_array()) {
    for (const auto& id : message["ids"]) {
      if (!id.is_number_integer()) continue;
      auto found = mappings_.find(id.get<int64_t>());
      if (found == mappings_.end()) continue;
      cudaIpcCloseMemHandle(found->second.base);
      mappings_.erase(found);
    }
  }
  windows_.clear();
  return {{"op", host::op::kReleased}};
}

json Host::call(const host::CallRequest& request) {
  host::CallReply reply;
  reply.seq = request.seq;
  reply.nonce = request.nonce;
  auto found = layouts_.find(request.workload);
  if (found == layouts_.end()) {
    auto workload = tasks::find_workload(*task_, request.workload);
    auto layout = workload ? tasks::layout_workload(*task_, *workload)
                           : Result<tasks::WorkloadLayout>(workload.error());
    if (!layout) {
      reply.harness_error = layout.error().message;
      return reply.to_json();
    }
    found = layouts_.emplace(request.workload, std::move(*layout)).first;
  }
  const tasks::WorkloadLayout& layout = found->second;
  if (request.buffers.size() != layout.tensors.size()) {
    reply.harness_error = "the call names " + std::to_string(request.buffers.size()) +
                          " buffers for " + std::to_string(layout.tensors.size()) + " tensors";
    return reply.to_json();
  }
  std::vector<void*> pointers;
  for (int64_t id : request.buffers) {
    auto mapping = mappings_.find(id);
    pointers.push_back(mapping == mappings_.end()
                           ? nullptr
                           : static_cast<unsigned char*>(mapping->second.base) +
                                 mapping->second.offset);
  }
  CallReport report;
  report.owner = "candidate";
  run_call_window(env_, launch_, layout.abi_tensors(pointers), layout.abi_scalars(), request.timed,
                  &report);
  windows_.push_back(report.window);
  reply = reply_from(request, report);
  reply.libraries = libraries_.new_since_last();
  if (env_.recorder != nullptr) {
    for (auto& work : hidden_work(report.records)) reply.hidden.push_back(std::move(work));
    reply.dropped = recorder_.dropped();
    reply.memory = recorder_.memory_recorded();
    memory_.add_call(report.records, report.window);
    reply.memory_leak = memory_.leak();
    reply.outstanding_bytes = memory_.outstanding_bytes();
  }
  return reply.to_json();
}

std::vector<std::string> Host::hidden_work(const std::vector<ActivityRecord>& records) const {
  std::vector<std::string> hidden = ActivityAnalysis::foreign_thread_calls(records, env_.activity);
  std::vector<std::string> owners;  // every window here is the candidate's
  for (auto& work : ActivityAnalysis::stray_work(records, windows_, env_.activity, &owners))
    hidden.push_back(std::move(work));
  return hidden;
}

json Host::after_calls() {
  json hidden = json::array();
  if (env_.recorder != nullptr) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    cudaDeviceSynchronize();
    hidden = hidden_work(recorder_.drain());
  }
  return {{"op", host::op::kAfterCalls}, {"hidden", hidden}};
}

}  // namespace

int serve_candidate_host(const std::filesystem::path& socket) {
  auto fd = connect_unix(socket);
  if (!fd) {
    std::cerr << "kiln-worker --candidate-host: " << fd.error().message << "\n";
    return 3;
  }
  MessageChannel channel(*fd);
  Host host(channel);
  constexpr auto kForever = std::chrono::hours(24 * 365);
  auto first = channel.receive(kForever);
  if (!first) return channel.closed() ? 0 : 3;
  auto request = host::LoadRequest::from_json(*first);
  if (!request) {
    host::LoadReply reply;
    reply.harness_error = request.error().message;
    (void)channel.send(reply.to_json());
    return 3;
  }
  const host::LoadReply prepared = host.prepare(*request);
  if (!channel.send(prepared.to_json(host::op::kPrepared))) return 3;
  if (!prepared.ok) return 0;
  // Probes until the load; anything else before it is out of turn.
  while (true) {
    auto message = channel.receive(kForever);
    if (!message) return channel.closed() ? 0 : 3;
    const std::string op = message->value("op", "");
    if (op == host::op::kLoad) break;
    if (op == host::op::kExit) return 0;
    auto probe = op == host::op::kCall ? host::CallRequest::from_json(*message)
                                       : Result<host::CallRequest>(make_error("not a call"));
    if (!probe || !probe->probe) return 3;
    if (!channel.send(host.answer_call(*probe))) return 0;
  }
  const host::LoadReply loaded = host.load();
  if (!channel.send(loaded.to_json())) return 3;
  if (!loaded.ok) return 0;
  while (true) {
    auto message = channel.receive(kForever);
    if (!message) return channel.closed() ? 0 : 3;
    const std::string op = message->value("op", "");
    json answer;
    if (op == host::op::kCall) {
      auto call = host::CallRequest::from_json(*message);
      if (!call || call->probe) return 3;  // probes come before the load only
      answer = host.answer_call(*call);
    } else if (op == host::op::kShare) {
      answer = host.share(*message);
    } else if (op == host::op::kRelease) {
      answer = host.release(*message);
    } else if (op == host::op::kAfterCalls) {
      answer = host.after_calls();
    } else if (op == host::op::kExit) {
      return 0;
    } else {
      return 3;
    }
    if (!channel.send(answer)) return 0;
  }
}

}  // namespace kiln::worker
