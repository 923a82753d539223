// Simulator throughput: lane-instructions per second on an ALU-heavy and a memory-heavy kernel
// (bench/sim_kernels.cu, compiled to PTX at build time), single-threaded.
//
//   kiln_bench_sim_throughput [PTX_FILE] [REPEATS]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/sim/device.h"

namespace {

using kiln::sim::Device;
using kiln::sim::LaunchConfig;
using kiln::sim::LaunchReport;

template <typename T>
void pack(std::vector<std::byte>& params, T value) {
  size_t offset = (params.size() + sizeof(T) - 1) / sizeof(T) * sizeof(T);
  params.resize(offset + sizeof(T));
  std::memcpy(params.data() + offset, &value, sizeof(T));
}

struct Measurement {
  double seconds = 0;
  uint64_t lane_instructions = 0;
  uint64_t warp_instructions = 0;
};

bool measure(Device& device, kiln::sim::ModuleHandle module, const char* kernel,
             const LaunchConfig& config, const std::vector<std::byte>& params, int repeats,
             Measurement& best) {
  for (int r = 0; r < repeats; ++r) {
    kiln::Result<LaunchReport> report = device.launch(module, kernel, config, params);
    if (!report.ok()) {
      std::fprintf(stderr, "%s: %s\n", kernel, report.error().message.c_str());
      return false;
    }
    if (!report->ok()) {
      std::fprintf(stderr, "%s: %s: %s\n", kernel, report->faults[0].kind.c_str(),
                   report->faults[0].message.c_str());
      return false;
    }
    if (r == 0 || report->stats.seconds < best.seconds) {
      best.seconds = report->stats.seconds;
      best.lane_instructions = report->stats.lane_instructions;
      best.warp_instructions = report->stats.warp_instructions;
    }
  }
  return true;
}

void print(const char* name, const Measurement& m) {
  double rate = static_cast<double>(m.lane_instructions) / m.seconds;
  std::printf(
      "%-14s %12llu lane-instr %10llu warp-instr %8.3f s  %8.1f M lane-instr/s  %7.2f M "
      "warp-instr/s\n",
      name, static_cast<unsigned long long>(m.lane_instructions),
      static_cast<unsigned long long>(m.warp_instructions), m.seconds, rate / 1e6,
      static_cast<double>(m.warp_instructions) / m.seconds / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : KILN_SIM_BENCH_PTX;
  int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  std::ifstream file(path);
  if (!file) {
    std::fprintf(stderr, "cannot read %s; pass the PTX of bench/sim_kernels.cu\n", path.c_str());
    return 1;
  }
  std::stringstream text;
  text << file.rdbuf();
  Device device;
  kiln::Result<kiln::sim::ModuleHandle> module = device.load_module(text.str(), "sim_kernels.ptx");
  if (!module.ok()) {
    std::fprintf(stderr, "%s\n", module.error().message.c_str());
    return 1;
  }

  // ALU: 64 blocks x 256 threads x 2000 iterations.
  LaunchConfig alu;
  alu.grid = {64};
  alu.block = {256};
  kiln::Result<uint64_t> out = device.allocate(64 * 256 * sizeof(float));
  std::vector<std::byte> alu_params;
  pack(alu_params, *out);
  pack(alu_params, int32_t{2000});
  Measurement alu_m;
  if (!measure(device, *module, "alu_heavy", alu, alu_params, repeats, alu_m)) return 1;

  // Memory: 4M floats through 128 blocks x 256 threads.
  const int n = 4 << 20;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i % 1000) * 0.001f;
  kiln::Result<uint64_t> in = device.allocate(n * sizeof(float));
  kiln::Result<uint64_t> copy = device.allocate((n + 1) * sizeof(float));
  if (!device.copy_to_device(*in, host.data(), n * sizeof(float)).ok()) return 1;
  LaunchConfig mem;
  mem.grid = {128};
  mem.block = {256};
  std::vector<std::byte> mem_params;
  pack(mem_params, *in);
  pack(mem_params, *copy);
  pack(mem_params, int32_t{n});
  Measurement mem_m;
  if (!measure(device, *module, "memory_heavy", mem, mem_params, repeats, mem_m)) return 1;

  print("alu_heavy", alu_m);
  print("memory_heavy", mem_m);
  return 0;
}
