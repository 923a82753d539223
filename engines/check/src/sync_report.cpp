// SyncMonitor's findings and public surface: a finding of a launch described for a person
// (blocks, threads, PTX lines and .cu positions of both operations), merged across launches and
// schedules; and the observer that runs racecheck and synccheck in one pass.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "kiln/check/dynamic_racecheck.h"
#include "sync_monitor_impl.h"

namespace kiln::check {

namespace {

nlohmann::json site_json(const SyncSite& s) {
  return {{"block", {s.block.x, s.block.y, s.block.z}},
          {"thread", {s.thread.x, s.thread.y, s.thread.z}},
          {"ptx_line", s.ptx_line},
          {"instruction", s.instruction},
          {"source", s.source}};
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

SyncSite SyncMonitor::Impl::describe(const syncmon::Op& o,
                                     const std::vector<std::string>& sources) const {
  SyncSite s;
  if (!o.valid) return s;
  s.block = o.block;
  const sim::Dim3& b = info.block;
  if (b.x != 0 && b.y != 0)
    s.thread = {o.linear % b.x, (o.linear / b.x) % b.y, o.linear / (b.x * b.y)};
  if (info.ptx_lines != nullptr && o.pc < info.ptx_lines->size()) {
    s.ptx_line = (*info.ptx_lines)[o.pc];
    s.instruction = (*info.texts)[o.pc];
  }
  if (o.pc < sources.size()) s.source = sources[o.pc];
  return s;
}

// Merges this launch's findings into the distinct ones, by kernel, kind and both PTX lines.
void SyncMonitor::Impl::publish(const std::vector<std::string>& sources) {
  const std::string label = schedule_label(schedule);
  for (const syncmon::Raw& r : raw) {
    SyncSite site = describe(r.site, sources);
    SyncSite earlier = describe(r.earlier, sources);
    auto same = [&](const SyncFinding& f) {
      return f.kernel == info.kernel && f.kind == r.kind && f.site.ptx_line == site.ptx_line &&
             f.earlier.ptx_line == earlier.ptx_line;
    };
    auto it = std::find_if(findings.begin(), findings.end(), same);
    if (it != findings.end()) {
      ++it->occurrences;
      if (std::find(it->schedules.begin(), it->schedules.end(), label) == it->schedules.end()) {
        it->schedules.push_back(label);
      }
      continue;
    }
    if (findings.size() >= max_findings) {
      ++dropped;
      continue;
    }
    SyncFinding f;
    f.kind = r.kind;
    f.object = r.object;
    f.kernel = info.kernel;
    f.id = r.id;
    f.site = site;
    f.has_earlier = r.earlier.valid;
    f.earlier = earlier;
    for (const auto& [op, what] : r.stuck)
      f.stuck.push_back({describe(op, sources), op.linear / 32, what});
    f.schedule = schedule_name(schedule);
    f.seed = schedule_seed(schedule);
    f.schedules = {label};
    f.occurrences = 1;
    f.message = r.message;
    if (!f.stuck.empty()) {
      f.message += ": ";
      for (size_t i = 0; i < f.stuck.size() && i < 8; ++i) {
        const StuckWarp& w = f.stuck[i];
        f.message += (i ? "; " : "") + w.waits_on + " (PTX line " +
                     std::to_string(w.site.ptx_line) +
                     (w.site.source.empty() ? "" : ", " + w.site.source) + ")";
      }
      if (f.stuck.size() > 8) f.message += "; " + std::to_string(f.stuck.size() - 8) + " more";
    }
    f.fix = r.fix;
    findings.push_back(std::move(f));
  }
  raw.clear();
  deadlock = -1;
}

nlohmann::json to_json(const SyncFinding& f) {
  nlohmann::json out = {{"kind", f.kind},           {"object", f.object},
                        {"kernel", f.kernel},       {"site", site_json(f.site)},
                        {"schedule", f.schedule},   {"seed", f.seed},
                        {"schedules", f.schedules}, {"occurrences", f.occurrences},
                        {"message", f.message},     {"fix", f.fix}};
  if (f.object == "mbarrier") {
    out["offset"] = hex(f.id);
  } else if (f.object == "barrier") {
    out["barrier"] = f.id;
  }
  if (f.has_earlier) out["earlier"] = site_json(f.earlier);
  if (!f.stuck.empty()) {
    nlohmann::json stuck = nlohmann::json::array();
    for (const StuckWarp& w : f.stuck) {
      nlohmann::json one = site_json(w.site);
      one["warp"] = w.warp;
      one["waits_on"] = w.waits_on;
      stuck.push_back(one);
    }
    out["stuck"] = stuck;
  }
  return out;
}

SyncMonitor::SyncMonitor(uint32_t max_findings) : impl_(std::make_unique<Impl>()) {
  impl_->max_findings = max_findings;
}
SyncMonitor::~SyncMonitor() = default;

void SyncMonitor::set_schedule(const sim::WarpSchedule& s) {
  impl_->schedule = s;
  impl_->log.set_schedule(s);
}
const std::vector<SyncFinding>& SyncMonitor::findings() const { return impl_->findings; }
uint64_t SyncMonitor::dropped_findings() const { return impl_->dropped; }
uint64_t SyncMonitor::launches() const { return impl_->launches; }
uint64_t SyncMonitor::uniform_barriers() const { return impl_->uniform; }
sim::WarpSchedule SyncMonitor::schedule() const { return impl_->schedule; }
void SyncMonitor::cluster_schedule(const sim::ClusterSchedule& c) {
  impl_->log.cluster_schedule(c);
}
const ScheduleLog& SyncMonitor::schedule_log() const { return impl_->log; }

void SyncMonitor::launch_begin(const sim::LaunchInfo& info) {
  ++impl_->launches;
  impl_->info = info;
  impl_->raw.clear();
  impl_->deadlock = -1;
}

void SyncMonitor::cluster_begin(const std::vector<sim::Dim3>& ctas) {
  Impl& d = *impl_;
  d.ctas = ctas;
  d.mbarriers.clear();
  d.barriers.clear();
  d.last_pending.clear();
  d.last_exit.assign(ctas.size(), syncmon::Op{});
  d.exited.assign(ctas.size(), 0);
}

void SyncMonitor::access(const sim::AccessEvent&) {}

void SyncMonitor::launch_end(const std::vector<std::string>& sources) { impl_->publish(sources); }

FanOutObserver::FanOutObserver(std::vector<sim::MemoryObserver*> observers)
    : observers_(std::move(observers)) {}
sim::WarpSchedule FanOutObserver::schedule() const {
  return observers_.empty() ? sim::WarpSchedule{} : observers_.front()->schedule();
}
void FanOutObserver::launch_begin(const sim::LaunchInfo& info) {
  for (sim::MemoryObserver* o : observers_) o->launch_begin(info);
}
void FanOutObserver::cluster_begin(const std::vector<sim::Dim3>& ctas) {
  for (sim::MemoryObserver* o : observers_) o->cluster_begin(ctas);
}
void FanOutObserver::access(const sim::AccessEvent& event) {
  for (sim::MemoryObserver* o : observers_) o->access(event);
}
void FanOutObserver::sync(const sim::SyncEvent& event) {
  for (sim::MemoryObserver* o : observers_) o->sync(event);
}
void FanOutObserver::launch_end(const std::vector<std::string>& sources) {
  for (sim::MemoryObserver* o : observers_) o->launch_end(sources);
}
void FanOutObserver::cluster_schedule(const sim::ClusterSchedule& cluster) {
  for (sim::MemoryObserver* o : observers_) o->cluster_schedule(cluster);
}

}  // namespace kiln::check
