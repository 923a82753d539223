// RaceDetector's findings: a race as found (two shadow accesses) described for a person: the
// blocks, threads and instructions of both sides, the cause, and what to do. Also the
// detector's public surface and the schedules racecheck explores.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "race_detector_impl.h"

namespace kiln::check {

using race::Access;
using race::Hazard;
using race::RawRace;

namespace {

const char* hazard_name(Hazard h) {
  return h == Hazard::Raw ? "raw" : h == Hazard::War ? "war" : "waw";
}

const char* access_name(const Access& a, bool write) {
  if (a.flags & race::kAtomic) return "atomic";
  return write ? "write" : "read";
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// `before`: the flags of the earlier access.
std::string fix_for(const std::string& cause, bool shared, Hazard h, uint32_t before) {
  if (cause == "missing_proxy_fence") {
    return "the async proxy (TMA, wgmma) does not see generic writes without a proxy fence: "
           "every thread that wrote the bytes runs fence.proxy.async.shared::cta "
           "(fence.proxy.async.global for global memory; cutlass::arch::fence_view_async_shared()) "
           "after its writes, then the barrier (or mbarrier) that orders it before the thread "
           "issuing the TMA copy or wgmma";
  }
  if (cause == "async_proxy" && (before & race::kWgmma) && h == Hazard::War) {
    return "wgmma.mma_async reads its shared-memory operands until the wgmma.wait_group that "
           "retires its group: wait for that group before overwriting the stage or releasing it "
           "(the empty-barrier arrive or barrier that frees the stage goes after the wait)";
  }
  if (cause == "async_proxy" && (before & race::kProxy) && h == Hazard::War && shared) {
    return "a TMA store (cp.async.bulk shared -> global) reads its shared source until "
           "cp.async.bulk.wait_group.read retires it: the issuing thread waits, then a barrier, "
           "before anyone overwrites the source (and mbarrier-released stages are refilled only "
           "after the consumers' reads finished)";
  }
  if (cause == "async_proxy") {
    return h == Hazard::War
               ? "finish every read of the buffer (a barrier after the last read) before "
                 "issuing the async copy that overwrites it"
               : "wait for the copy before reading it: cp.async.wait_group/wait_all (or the "
                 "mbarrier phase a TMA copy completes), then a barrier when other threads read "
                 "the data";
  }
  if (cause == "narrow_scope") {
    return "the flag is published or read with a scope that does not include the other CTA: "
           "use __threadfence() (fence.acq_rel.gpu) instead of __threadfence_block(), atomics "
           "without the _block suffix (atom/red .gpu, not .cta), and st.release.gpu / "
           "ld.acquire.gpu (.sys across devices); .cta orders only threads of one CTA, .cluster "
           "those of one cluster";
  }
  if (cause == "missing_fence") {
    return "publish with a fence: write the data, __threadfence() (or st.release), then set the "
           "flag; the reader checks the flag, then __threadfence() (or ld.acquire) before "
           "reading the data";
  }
  if (cause == "cross_cta") {
    return shared ? "order the CTAs of the cluster with barrier.cluster (cluster.sync()) "
                    "between the write and the other CTA's access"
                  : "give each CTA its own output elements, or combine them with atomics (or a "
                    "second kernel); CTAs of one launch are not ordered";
  }
  if (cause == "warp_race") {
    return "lanes of a warp are not in lockstep (independent thread scheduling): put "
           "__syncwarp() between the write and the other lane's access";
  }
  return shared ? "put __syncthreads() (or the named barrier both sides use) between the two "
                  "accesses"
                : "order the two accesses: a barrier within the CTA, or atomics";
}

}  // namespace

RaceAccess RaceDetector::Impl::describe(const Access& a) const {
  RaceAccess out;
  uint32_t owner = a.epoch.slot / slots, local = a.epoch.slot % slots;
  out.async = local >= threads;
  uint32_t index = slot_thread(local);
  uint32_t rank = index / cta_threads, linear = index % cta_threads;
  if (owner < clusters.size() && rank < clusters[owner].size()) out.block = clusters[owner][rank];
  const sim::Dim3& b = info.block;
  out.thread = {linear % b.x, (linear / b.x) % b.y, linear / (b.x * b.y)};
  if (info.ptx_lines != nullptr && a.pc < info.ptx_lines->size()) {
    out.ptx_line = (*info.ptx_lines)[a.pc];
    out.instruction = (*info.texts)[a.pc];
  }
  return out;
}

void RaceDetector::Impl::report(const RawRace& r) {
  uint32_t before_owner = r.before.epoch.slot / slots;
  uint32_t before_index = slot_thread(r.before.epoch.slot % slots);
  uint32_t after_index = slot_thread(r.after.epoch.slot % slots);
  bool async = (r.before.flags | r.after.flags) & race::kAsync;
  bool other_cluster = before_owner != cluster;
  bool other_cta = other_cluster || before_index / cta_threads != after_index / cta_threads;
  // Data published through a flag, relaxed and without a fence on one side (a race on the
  // flag or atomic itself is a plain mix of atomic and non-atomic accesses instead).
  bool unfenced = false;
  if (((r.before.flags | r.after.flags) & race::kStrong) == 0) {
    const race::ThreadState& after_thread = thread_state[after_index];
    unfenced = after_thread.strong && !after_thread.fenced;
    if (other_cluster) {
      unfenced =
          unfenced || (before_owner < unfenced_cluster.size() && unfenced_cluster[before_owner]);
    } else {
      const race::ThreadState& before_thread = thread_state[before_index];
      unfenced = unfenced || (before_thread.strong && !before_thread.fenced);
    }
  }
  // The reader acquired through a flag but left a release out because a scope (a .cta fence
  // or atomic publishing to another CTA) was too narrow.
  const bool narrow = !async && other_cta &&
                      ((r.before.flags | r.after.flags) & race::kStrong) == 0 &&
                      thread_state[after_index].narrowed;
  const char* cause = r.cause != nullptr                      ? r.cause
                      : async                                 ? "async_proxy"
                      : narrow                                ? "narrow_scope"
                      : unfenced                              ? "missing_fence"
                      : other_cta                             ? "cross_cta"
                      : before_index / 32 == after_index / 32 ? "warp_race"
                                                              : "missing_barrier";
  const char* space = r.shared ? "shared" : "global";
  race::FindingKey key{r.before.pc, r.after.pc, r.hazard, cause, r.shared, launches};
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key || (keys[i].same_site(key) && findings[i].kernel == info.kernel)) {
      RaceFinding& seen = findings[i];
      ++seen.occurrences;
      std::string label = schedule_label(schedule);
      if (seen.schedules.empty() || seen.schedules.back() != label) {
        seen.schedules.push_back(label);
      }
      return;
    }
  }
  // Unrolled loops repeat one .cu line in many instructions: keep more instruction pairs than
  // findings until launch_end merges them by source line.
  if (findings.size() >= 4 * static_cast<size_t>(max_findings)) {
    ++dropped;
    return;
  }
  RaceFinding f;
  f.kind = hazard_name(r.hazard);
  f.cause = cause;
  f.space = space;
  f.kernel = info.kernel;
  f.address = r.address;
  f.bytes = r.bytes;
  f.first = describe(r.before);
  f.first.access = access_name(r.before, r.hazard != Hazard::War);
  f.second = describe(r.after);
  f.second.access = access_name(r.after, r.hazard != Hazard::Raw);
  f.schedule = schedule_name(schedule);
  f.seed = schedule_seed(schedule);
  f.occurrences = 1;
  f.schedules.push_back(schedule_label(schedule));
  f.message = std::string(f.kind == "raw"   ? "read after write"
                          : f.kind == "war" ? "write after read"
                                            : "write after write") +
              " race on " + std::to_string(f.bytes) + " byte(s) of " + space + " memory at " +
              hex(f.address) + ": " + f.first.access + " by block (" +
              std::to_string(f.first.block.x) + "," + std::to_string(f.first.block.y) + "," +
              std::to_string(f.first.block.z) + ") thread (" + std::to_string(f.first.thread.x) +
              "," + std::to_string(f.first.thread.y) + "," + std::to_string(f.first.thread.z) +
              ") at PTX line " + std::to_string(f.first.ptx_line) + " is not ordered before the " +
              f.second.access + " by block (" + std::to_string(f.second.block.x) + "," +
              std::to_string(f.second.block.y) + "," + std::to_string(f.second.block.z) +
              ") thread (" + std::to_string(f.second.thread.x) + "," +
              std::to_string(f.second.thread.y) + "," + std::to_string(f.second.thread.z) +
              ") at PTX line " + std::to_string(f.second.ptx_line) + " (" + cause + ")";
  f.fix = fix_for(cause, r.shared, r.hazard, r.before.flags);
  launch_findings.push_back(findings.size());
  findings.push_back(std::move(f));
  keys.push_back(key);
}

// One finding per (kind, cause, space, kernel, both .cu lines): the instruction pairs of an
// unrolled loop become one, with their occurrences and schedules summed; then the cap.
void RaceDetector::Impl::merge_by_source() {
  auto site = [](const RaceAccess& a) {
    return a.source.empty() ? "ptx:" + std::to_string(a.ptx_line) : a.source;
  };
  std::vector<RaceFinding> merged;
  std::vector<race::FindingKey> merged_keys;
  for (size_t i = 0; i < findings.size(); ++i) {
    RaceFinding& f = findings[i];
    bool folded = false;
    for (RaceFinding& m : merged) {
      if (m.kind == f.kind && m.cause == f.cause && m.space == f.space && m.kernel == f.kernel &&
          site(m.first) == site(f.first) && site(m.second) == site(f.second)) {
        m.occurrences += f.occurrences;
        for (const std::string& label : f.schedules) {
          if (std::find(m.schedules.begin(), m.schedules.end(), label) == m.schedules.end()) {
            m.schedules.push_back(label);
          }
        }
        folded = true;
        break;
      }
    }
    if (folded) continue;
    if (merged.size() >= max_findings) {
      ++dropped;
      continue;
    }
    merged.push_back(std::move(f));
    merged_keys.push_back(keys[i]);
  }
  findings = std::move(merged);
  keys = std::move(merged_keys);
}

nlohmann::json to_json(const RaceFinding& f) {
  auto side = [](const RaceAccess& a) {
    return nlohmann::json{{"block", {a.block.x, a.block.y, a.block.z}},
                          {"thread", {a.thread.x, a.thread.y, a.thread.z}},
                          {"access", a.access},
                          {"async", a.async},
                          {"ptx_line", a.ptx_line},
                          {"instruction", a.instruction},
                          {"source", a.source}};
  };
  return {{"kind", f.kind},
          {"cause", f.cause},
          {"space", f.space},
          {"kernel", f.kernel},
          {"address", hex(f.address)},
          {"bytes", f.bytes},
          {"first", side(f.first)},
          {"second", side(f.second)},
          {"schedule", f.schedule},
          {"seed", f.seed},
          {"occurrences", f.occurrences},
          {"schedules", f.schedules},
          {"message", f.message},
          {"fix", f.fix}};
}

RaceDetector::RaceDetector(uint32_t max_findings) : impl_(std::make_unique<Impl>()) {
  impl_->max_findings = max_findings;
}
RaceDetector::~RaceDetector() = default;

void RaceDetector::set_schedule(const sim::WarpSchedule& s) {
  impl_->schedule = s;
  impl_->log.set_schedule(s);
}
const std::vector<RaceFinding>& RaceDetector::findings() const { return impl_->findings; }
uint64_t RaceDetector::evicted_reads() const { return impl_->evicted; }
uint64_t RaceDetector::dropped_findings() const { return impl_->dropped; }
uint64_t RaceDetector::launches() const { return impl_->launches; }
sim::WarpSchedule RaceDetector::schedule() const { return impl_->schedule; }
void RaceDetector::cluster_schedule(const sim::ClusterSchedule& c) {
  impl_->log.cluster_schedule(c);
}
const ScheduleLog& RaceDetector::schedule_log() const { return impl_->log; }

void RaceDetector::launch_begin(const sim::LaunchInfo& info) {
  Impl& d = *impl_;
  ++d.launches;
  d.info = info;
  d.scopes.clear();
  if (info.texts != nullptr) {
    d.scopes.reserve(info.texts->size());
    for (const std::string& text : *info.texts) d.scopes.push_back(race::scope_of(text));
  }
  d.cta_threads = info.threads_per_cta;
  d.cluster_size = info.cluster.x * info.cluster.y * info.cluster.z;
  d.threads = d.cta_threads * d.cluster_size;
  d.cta_warps = (d.cta_threads + 31) / 32;
  d.pool_base = 2 * d.threads + d.cta_warps * d.cluster_size;
  d.slots = d.pool_base + Impl::kChannels;
  d.clusters.clear();
  d.unfenced_cluster.clear();
  d.locations.clear();
  d.global.reset();
  d.launch_findings.clear();
}

void RaceDetector::cluster_begin(const std::vector<sim::Dim3>& ctas) { impl_->start_cluster(ctas); }
void RaceDetector::access(const sim::AccessEvent& e) { impl_->access(e); }
void RaceDetector::sync(const sim::SyncEvent& e) { impl_->sync(e); }

void RaceDetector::launch_end(const std::vector<std::string>& sources) {
  Impl& d = *impl_;
  if (!d.deferred.empty()) d.run_deferred(UINT32_MAX, race::Completion::Bulk, 0);
  for (size_t i : d.launch_findings) {
    RaceFinding& f = d.findings[i];
    for (RaceAccess* a : {&f.first, &f.second}) {
      for (size_t pc = 0; d.info.ptx_lines != nullptr && pc < d.info.ptx_lines->size(); ++pc) {
        if ((*d.info.ptx_lines)[pc] == a->ptx_line && pc < sources.size()) {
          a->source = sources[pc];
          break;
        }
      }
    }
  }
  d.launch_findings.clear();
  d.merge_by_source();
  d.info.ptx_lines = nullptr;
  d.info.texts = nullptr;
}

}  // namespace kiln::check
