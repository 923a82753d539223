// Zoo kernels (kb/zoo, compiled to PTX for the simulator tests in tests/sim) launched on the
// simulator under a dynamic checker (the race detector or the sync monitor) with the default
// racecheck schedules, for the tests that hold the zoo clean under each.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/check/dynamic_racecheck.h"
#include "kiln/check/dynamic_synccheck.h"
#include "kiln/sim/device.h"
#include "kiln/sim/tensor_map.h"

namespace kiln::check {

// Launches per zoo kernel: the three default schedules and two PCT ones.
inline constexpr uint32_t kZooSchedules = 5;

inline std::string finding_text(const RaceFinding& f) { return f.message; }
inline std::string finding_text(const SyncFinding& f) { return f.kind + ": " + f.message; }

inline std::string zoo_ptx(const std::string& entry) {
  std::ifstream in(std::string(KILN_SIM_ZOO_PTX_DIR) + "/" + entry + ".ptx");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The .entry of `ptx` whose name contains every part.
inline std::string find_kernel(const std::string& ptx, const std::vector<std::string>& parts) {
  for (size_t at = 0; (at = ptx.find(".entry ", at)) != std::string::npos;) {
    at += 7;
    std::string name = ptx.substr(at, ptx.find('(', at) - at);
    bool all = true;
    for (const std::string& p : parts) all = all && name.find(p) != std::string::npos;
    if (all) return name;
  }
  return "";
}

template <typename Observer>
struct ZooLaunch {
  Observer detector;
  sim::Device device;
  ZooLaunch() : device(options(&detector)) {}
  static sim::SimulatorOptions options(Observer* d) {
    sim::SimulatorOptions o;
    o.observer = d;
    return o;
  }

  uint64_t buffer(size_t bytes, uint8_t fill) {
    uint64_t a = *device.allocate(bytes);
    EXPECT_TRUE(device.fill(a, fill, bytes).ok());
    return a;
  }

  // Runs `parts` of zoo entry `entry` under every default schedule and two PCT ones, its
  // parameters packed
  // from `args` (64 bits each, at the kernel's offsets and sizes) or, for a parameter of 128
  // bytes, from `maps`; false without the PTX.
  bool run(const std::string& entry, const std::vector<std::string>& parts, sim::Dim3 grid,
           sim::Dim3 block, const std::vector<uint64_t>& args, uint32_t smem = 0,
           const std::vector<const uint8_t*>& maps = {}) {
    std::string ptx = zoo_ptx(entry);
    if (ptx.empty()) return false;
    std::string kernel = find_kernel(ptx, parts);
    auto module = device.load_module(ptx, entry);
    EXPECT_TRUE(module.ok());
    auto info = device.kernel(*module, kernel);
    EXPECT_TRUE(info.ok()) << kernel;
    if (!info.ok()) return false;
    std::vector<std::byte> params(info->param_bytes);
    size_t next_arg = 0, next_map = 0;
    for (const sim::ParamSlot& slot : info->params) {
      if (slot.size == sim::kTensorMapBytes && next_map < maps.size()) {
        std::memcpy(params.data() + slot.offset, maps[next_map++], slot.size);
      } else if (next_arg < args.size()) {
        std::memcpy(params.data() + slot.offset, &args[next_arg++], slot.size);
      }
    }
    // The default schedules, then PCT at depths 1 and 2 (priority schedules must not invent
    // findings either).
    std::vector<sim::WarpSchedule> schedules = race_schedules(kZooSchedules - 2, 1);
    for (const sim::WarpSchedule& s : race_schedules(4, 1, sim::WarpOrder::Pct))
      if (s.order == sim::WarpOrder::Pct) schedules.push_back(s);
    for (const sim::WarpSchedule& s : schedules) {
      detector.set_schedule(s);
      sim::LaunchConfig config;
      config.grid = grid;
      config.block = block;
      config.dynamic_shared_bytes = smem;
      auto report = device.launch(*module, kernel, config, params);
      EXPECT_TRUE(report.ok() && report->ok()) << entry << " under " << schedule_label(s);
    }
    return true;
  }

  std::string findings() const {
    std::string out;
    for (const auto& f : detector.findings()) out += "\n  " + finding_text(f);
    return out;
  }
};

}  // namespace kiln::check
