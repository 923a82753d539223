#include "kiln/worker/activity_analysis.h"

#include <algorithm>
#include <map>

namespace kiln::worker {

namespace {

bool overlaps(const ActivityRecord& r, uint64_t open, uint64_t close) {
  return r.end >= open && r.start <= close;
}

std::string describe(const ActivityRecord& r) {
  const char* what = r.kind == ActivityRecord::Kind::kKernel   ? "kernel "
                     : r.kind == ActivityRecord::Kind::kMemcpy ? "memcpy "
                     : r.kind == ActivityRecord::Kind::kMemset ? "memset "
                                                               : "call ";
  std::string name = r.name;
  if (name.size() > 80) name = name.substr(0, 77) + "...";
  return what + (name.empty() ? std::string() : "`" + name + "` ") + "on stream " +
         std::to_string(r.stream_id);
}

// The launch gate's hold kernel of a gated window: the first kernel on the launch stream in
// the window, when it carries the hold's name. Known by its place, not by its name alone: a
// kernel of the candidate's named like the harness's is charged like any other.
const ActivityRecord* gate_hold(const std::vector<ActivityRecord>& records,
                                const CallWindow& window, const ActivityContext& context) {
  if (!window.gated) return nullptr;
  const ActivityRecord* first = nullptr;
  for (const auto& r : records) {
    if (r.kind != ActivityRecord::Kind::kKernel || r.stream_id != context.launch_stream ||
        !overlaps(r, window.open, window.close))
      continue;
    if (first == nullptr || r.start < first->start) first = &r;
  }
  if (first == nullptr || first->name.find("kiln_harness_hold") == std::string::npos)
    return nullptr;
  return first;
}

}  // namespace

WindowFindings ActivityAnalysis::analyze(const std::vector<ActivityRecord>& records,
                                         const CallWindow& window, const ActivityContext& context) {
  WindowFindings f;
  uint64_t first = UINT64_MAX;
  uint64_t last = 0;
  std::map<std::string, int> late_off_stream;
  std::map<std::string, int> early_off_stream;
  std::map<std::string, int> syncs;
  const ActivityRecord* hold = gate_hold(records, window, context);
  for (const auto& r : records) {
    if (!r.is_gpu()) {
      // Host synchronization inside kiln_launch (by the calling thread) costs the candidate
      // time the sample does not show; the caller fails it unless the task allows it.
      if (r.start >= window.launch_begin && r.end <= window.launch_end &&
          r.name.find("Synchronize") != std::string::npos &&
          context.harness_threads.count(r.thread_id) != 0) {
        ++syncs[r.name];
      }
      continue;
    }
    if (context.harness_streams.count(r.stream_id) != 0 || &r == hold) continue;
    if (!overlaps(r, window.open, window.close)) continue;
    ++f.gpu_records;
    first = std::min(first, r.start);
    last = std::max(last, r.end);
    if (r.kind == ActivityRecord::Kind::kKernel) {
      ++f.kernels;
      f.kernel_names.insert(r.name);
    }
    if (r.stream_id != context.launch_stream) {
      if (r.end > window.launch_end) {
        ++late_off_stream[describe(r)];
      } else {
        ++early_off_stream[describe(r)];
      }
    }
  }
  if (f.gpu_records > 0 && last >= first) f.span_ns = last - first;
  for (const auto& [what, count] : late_off_stream) {
    f.violations.push_back(what + (count > 1 ? " (x" + std::to_string(count) + ")" : "") +
                           " ran outside the stream given to kiln_launch (stream " +
                           std::to_string(context.launch_stream) +
                           ") and was still running when kiln_launch returned");
  }
  for (const auto& [what, count] : early_off_stream) {
    f.notes.push_back(
        what + (count > 1 ? " (x" + std::to_string(count) + ")" : "") +
        " ran outside the given stream but finished before kiln_launch returned (charged)");
  }
  for (const auto& [versioned, count] : syncs) {
    const std::string name = versioned.substr(
        0, versioned.rfind("_v") != std::string::npos ? versioned.rfind("_v") : versioned.size());
    f.host_syncs.push_back(name + (count > 1 ? " " + std::to_string(count) + " times" : ""));
  }
  return f;
}

std::vector<std::string> ActivityAnalysis::stray_work(const std::vector<ActivityRecord>& records,
                                                      const std::vector<CallWindow>& windows,
                                                      const ActivityContext& context,
                                                      std::vector<std::string>* owners) {
  std::vector<std::string> out;
  for (const auto& r : records) {
    if (!r.is_gpu() || context.harness_streams.count(r.stream_id) != 0) continue;
    bool inside = false;
    const CallWindow* before = nullptr;
    for (const auto& w : windows) {
      if (overlaps(r, w.open, w.close)) inside = true;
      if (w.close <= r.start && (before == nullptr || w.close > before->close)) before = &w;
    }
    if (inside) continue;
    const std::string owner = before != nullptr ? before->owner : "unknown";
    out.push_back(describe(r) + " ran after the " + owner +
                  "'s call had returned and the device had been synchronized");
    if (owners != nullptr) owners->push_back(owner);
  }
  return out;
}

std::vector<std::string> ActivityAnalysis::foreign_thread_calls(
    const std::vector<ActivityRecord>& records, const ActivityContext& context) {
  // Runtime calls, and the driver calls that put work on the GPU. Other driver calls
  // may come from threads the CUDA libraries run for themselves.
  auto counts = [](const ActivityRecord& r) {
    if (r.kind == ActivityRecord::Kind::kRuntimeApi) return true;
    if (r.kind != ActivityRecord::Kind::kDriverApi) return false;
    for (const char* prefix : {"cuLaunch", "cuMemcpy", "cuMemset", "cuGraphLaunch"}) {
      if (r.name.rfind(prefix, 0) == 0) return true;
    }
    return false;
  };
  std::map<std::string, int> calls;
  for (const auto& r : records) {
    if (r.is_gpu() || !counts(r) || context.harness_threads.count(r.thread_id) != 0) continue;
    ++calls[r.name.empty() ? "a CUDA API call" : r.name];
  }
  std::vector<std::string> out;
  for (const auto& [versioned, count] : calls) {
    // cudaLaunchKernel_v7000 -> cudaLaunchKernel
    std::string name = versioned;
    const size_t v = name.rfind("_v");
    if (v != std::string::npos && v + 2 < name.size() &&
        name.find_first_not_of("0123456789", v + 2) == std::string::npos) {
      name.resize(v);
    }
    out.push_back(name + (count > 1 ? " x" + std::to_string(count) : "") +
                  " from a host thread other than the one that called kiln_launch");
  }
  return out;
}

}  // namespace kiln::worker
