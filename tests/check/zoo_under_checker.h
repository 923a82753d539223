// Zoo kernels (kb/zoo, compiled to PTX for the simulator tests in tests/sim) launched on the
// simulator under a dynamic checker (the race detector or the sync monitor) with the default
// racecheck schedules, for the tests that hold the zoo clean under each.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
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

// A 2-d f16 tensor map with 64-element rows in 128-byte swizzle, as the zoo kernel expects.
inline std::vector<uint8_t> f16_map(uint64_t address, uint64_t rows, uint64_t cols,
                                    uint32_t box_rows) {
  sim::TensorMapDesc d;
  d.rank = 2;
  d.data_type = 6;  // CU_TENSOR_MAP_DATA_TYPE_FLOAT16
  d.element_bytes = 2;
  d.global_address = address;
  d.global_dim[0] = cols;
  d.global_dim[1] = rows;
  d.global_stride_bytes[0] = 2;
  d.global_stride_bytes[1] = cols * 2;
  d.box_dim[0] = 64;
  d.box_dim[1] = box_rows;
  d.element_strides[0] = d.element_strides[1] = 1;
  d.swizzle = 3;  // CU_TENSOR_MAP_SWIZZLE_128B
  std::vector<uint8_t> bytes(sim::kTensorMapBytes);
  sim::encode_tensor_map(d, bytes.data());
  return bytes;
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
  // parameters packed from `args` (64 bits each, at the kernel's offsets and sizes; a wider
  // parameter, a small struct, from as many consecutive args) or, for a parameter of 128 bytes,
  // from `maps`; false without the PTX.
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
        const size_t words = std::min<size_t>((slot.size + 7) / 8, args.size() - next_arg);
        std::memcpy(params.data() + slot.offset, &args[next_arg],
                    std::min<size_t>(slot.size, words * 8));
        next_arg += words;
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
      EXPECT_TRUE(report.ok() && report->ok())
          << entry << " under " << schedule_label(s) << ": "
          << (!report.ok()             ? report.error().message
              : report->faults.empty() ? std::string()
                                       : report->faults.front().message);
    }
    return true;
  }

  std::string findings() const {
    std::string out;
    for (const auto& f : detector.findings()) out += "\n  " + finding_text(f);
    return out;
  }
};

// The Hopper fp16 GEMMs whose tensor maps are A, B and C (kernel<true>(map_a, map_b, map_c, M,
// N, K, extra...)), each launched with a grid smaller than its tile count so that every CTA loops
// over several tiles: the persistent schedule, the ring's phases and the TMA-store buffers
// carried across tiles, the ping-pong turn barriers, and a 2-CTA cluster's multicast. With
// plain_c, the instantiation for a C the TMA cannot store to (kernel<false>(map_a, map_b,
// {c, row stride}, M, N, K, extra...)), here at a pitch of N + 1 elements, its staging buffers
// reused by plain stores.
struct TmaGemmCase {
  std::string entry;
  std::string kernel;
  uint32_t m, n, k;
  uint32_t box_a, box_b;  // rows per TMA box of A and B (C: 64)
  sim::Dim3 grid;
  uint32_t smem;
  std::vector<uint64_t> extra;  // scalar parameters after M, N, K
  bool plain_c = false;
};

inline std::vector<TmaGemmCase> tma_gemm_cases() {
  const uint32_t wide = 1024 + 4 * 49152 + 4 * 8192 + 2 * 4 * 8;    // 128x256 tiles, 4 stages
  const uint32_t narrow = 1024 + 6 * 32768 + 4 * 8192 + 2 * 6 * 8;  // 128x128 tiles, 6 stages
  return {
      // 2x2 tiles of 128x256, one CTA: four tiles, two K tiles each.
      {"gemm_tma_store_epilogue", "gemm_tma_store_kernel", 256, 512, 128, 128, 256, {1}, wide, {}},
      // The same tiles walked in bands of one tile column (along N).
      {"gemm_persistent_rasterized",
       "gemm_rasterized_kernel",
       256,
       512,
       128,
       128,
       256,
       {1},
       wide,
       {1, 1}},
      // 2x2 tiles of 128x128, one CTA: consumers 0 and 1 take two tiles each, in turns.
      {"gemm_pingpong_consumers", "gemm_pingpong_kernel", 256, 256, 128, 128, 128, {1}, narrow, {}},
      // 4x1 tiles of 128x256, one cluster of two CTAs: two cluster tiles, B multicast.
      {"gemm_tma_multicast_cluster",
       "gemm_multicast_kernel",
       512,
       256,
       128,
       128,
       128,
       {2},
       wide,
       {}},
  };
}

// Each case with the TMA store and with plain stores.
inline std::vector<TmaGemmCase> tma_gemm_cases_both_stores() {
  std::vector<TmaGemmCase> cases;
  for (const TmaGemmCase& c : tma_gemm_cases()) {
    cases.push_back(c);
    cases.push_back(c);
    cases.back().plain_c = true;
  }
  return cases;
}

inline std::string tma_gemm_case_label(const TmaGemmCase& c) {
  return c.plain_c ? c.entry + "_plain_c" : c.entry;
}

inline void PrintTo(const TmaGemmCase& c, std::ostream* os) { *os << tma_gemm_case_label(c); }

inline std::string tma_gemm_case_name(const ::testing::TestParamInfo<TmaGemmCase>& info) {
  return tma_gemm_case_label(info.param);
}

// A 2-D tensor map over a row-major [rows, k] matrix of bytes (s8 or e4m3), in 128x128 boxes
// with the 128-byte swizzle, as the 8-bit wgmma GEMMs load their operands.
inline std::vector<uint8_t> byte_tile_map(uint64_t address, uint32_t rows, uint32_t k) {
  sim::TensorMapDesc d;
  d.rank = 2;
  d.data_type = 0;  // CU_TENSOR_MAP_DATA_TYPE_UINT8
  d.element_bytes = 1;
  d.global_address = address;
  d.global_dim[0] = k;
  d.global_dim[1] = rows;
  d.global_stride_bytes[0] = 1;
  d.global_stride_bytes[1] = k;
  d.box_dim[0] = 128;
  d.box_dim[1] = 128;
  d.element_strides[0] = d.element_strides[1] = 1;
  d.swizzle = 3;  // CU_TENSOR_MAP_SWIZZLE_128B
  std::vector<uint8_t> map(sim::kTensorMapBytes);
  sim::encode_tensor_map(d, map.data());
  return map;
}

// gemm_fp8_blockscaled on one 128x128 tile, six 128-deep K tiles through four stages (two
// refills), with its 1x128 and 128x128 scale tensors; false without the PTX.
template <typename Launch>
bool run_fp8_blockscaled(Launch& z) {
  const uint32_t m = 128, n = 128, k = 768, k_blocks = k / 128;
  uint64_t a = z.buffer(size_t{m} * k, 0x38), b = z.buffer(size_t{n} * k, 0x38),
           scale_a = z.buffer(size_t{m} * k_blocks * 4, 0), scale_b = z.buffer(k_blocks * 4, 0),
           out = z.buffer(size_t{m} * n * 2, 0);
  const std::vector<uint8_t> map_a = byte_tile_map(a, m, k), map_b = byte_tile_map(b, n, k);
  return z.run("gemm_fp8_blockscaled", {"gemm_fp8_blockscaled_kernel"}, {1, 1}, {256},
               {scale_a, k_blocks, 1, scale_b, k_blocks, 1, out, m, n, k, n, 1},
               1024 + 4 * 32768 + 2 * 4 * 8, {map_a.data(), map_b.data()});
}

// gemm_int8_wgmma on one 128x128 tile, six 128-deep K tiles of s8 through three stages (each
// stage refilled once); false without the PTX.
template <typename Launch>
bool run_int8_gemm(Launch& z) {
  const uint32_t m = 128, n = 128, k = 768;
  uint64_t a = z.buffer(size_t{m} * k, 0x03), b = z.buffer(size_t{n} * k, 0xfd),
           out = z.buffer(size_t{m} * n * 4, 0);
  const std::vector<uint8_t> map_a = byte_tile_map(a, m, k), map_b = byte_tile_map(b, n, k);
  return z.run("gemm_int8_wgmma", {"gemm_int8_kernel"}, {1, 1}, {256}, {out, m, n, k, n, 1},
               1024 + 3 * 32768 + 2 * 3 * 8, {map_a.data(), map_b.data()});
}

// A [G][rows][cols] bf16 tensor map with 64-element boxes of box_rows rows, one group deep.
inline std::vector<uint8_t> bf16_map_3d(uint64_t address, uint64_t groups, uint64_t rows,
                                        uint64_t cols, uint32_t box_rows) {
  sim::TensorMapDesc d;
  d.rank = 3;
  d.data_type = 9;  // CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
  d.element_bytes = 2;
  d.global_address = address;
  d.global_dim[0] = cols;
  d.global_dim[1] = rows;
  d.global_dim[2] = groups;
  d.global_stride_bytes[0] = 2;
  d.global_stride_bytes[1] = cols * 2;
  d.global_stride_bytes[2] = rows * cols * 2;
  d.box_dim[0] = 64;
  d.box_dim[1] = box_rows;
  d.box_dim[2] = 1;
  d.element_strides[0] = d.element_strides[1] = d.element_strides[2] = 1;
  d.swizzle = 3;  // CU_TENSOR_MAP_SWIZZLE_128B
  std::vector<uint8_t> bytes(sim::kTensorMapBytes);
  sim::encode_tensor_map(d, bytes.data());
  return bytes;
}

// grouped_gemm_masked_bf16 (bf16) with one persistent CTA: three groups of 192 rows counting
// 192, 0 and 70, so the CTA walks three tiles (one a consumer sits out) of eight K tiles
// through the six-stage ring, carrying its phases across tiles, while the producer's idle warps
// zero the rows past the counts. Also checks the output after the last schedule: every valid
// row holds the product, every other row (poisoned before the launches) is zero. False without
// the PTX.
template <typename Launch>
bool run_masked_grouped_gemm(Launch& z) {
  const uint32_t groups = 3, m = 192, n = 128, k = 512;
  const size_t c_elements = size_t{groups} * m * n;
  uint64_t a = z.buffer(size_t{groups} * m * k * 2, 0x3c),
           b = z.buffer(size_t{groups} * n * k * 2, 0x3c), out = z.buffer(c_elements * 2, 0xff),
           masked_m = z.buffer(groups * 4, 0);
  const int32_t counts[groups] = {192, 0, 70};
  EXPECT_TRUE(z.device.copy_to_device(masked_m, counts, sizeof counts).ok());
  std::vector<uint8_t> map_a = bf16_map_3d(a, groups, m, k, 128),
                       map_b = bf16_map_3d(b, groups, n, k, 128);
  if (!z.run("grouped_gemm_masked_bf16", {"grouped_gemm_masked_kernel", "ILb1E"}, {1}, {384},
             {masked_m, groups, out, m, n, k, uint64_t{m} * n, n, 1},
             1024 + 6 * 32768 + 2 * 8192 + 2 * 6 * 8, {map_a.data(), map_b.data()}))
    return false;
  std::vector<uint16_t> c(c_elements);
  EXPECT_TRUE(z.device.copy_to_host(c.data(), out, c_elements * 2).ok());
  // Every product is 512 * bf16(0x3c3c)^2 = 0.0674 (bf16 0x3d8a).
  for (uint32_t g = 0; g < groups; ++g) {
    for (uint32_t r = 0; r < m; ++r) {
      const uint16_t want = static_cast<int32_t>(r) < counts[g] ? 0x3d8a : 0;
      const uint16_t got = c[(size_t{g} * m + r) * n + (r % n)];
      EXPECT_EQ(got, want) << "C[" << g << ", " << r << "]";
      if (got != want) return true;
    }
  }
  return true;
}

// Runs `c` under every default schedule of `z`'s checker; false without the PTX. With plain_c,
// also checks C after the last schedule: every element the same product, the pad column (past
// N) untouched.
template <typename Launch>
bool run_tma_gemm(Launch& z, const TmaGemmCase& c) {
  const uint32_t pitch = c.plain_c ? c.n + 1 : c.n;
  uint64_t a = z.buffer(size_t{c.m} * c.k * 2, 0x3c), b = z.buffer(size_t{c.n} * c.k * 2, 0x3c),
           out = z.buffer(size_t{c.m} * pitch * 2, 0);
  std::vector<uint8_t> map_a = f16_map(a, c.m, c.k, c.box_a), map_b = f16_map(b, c.n, c.k, c.box_b),
                       map_c = f16_map(out, c.m, c.n, 64);
  std::vector<uint64_t> args = c.plain_c ? std::vector<uint64_t>{out, pitch, c.m, c.n, c.k}
                                         : std::vector<uint64_t>{c.m, c.n, c.k};
  args.insert(args.end(), c.extra.begin(), c.extra.end());
  std::vector<const uint8_t*> maps = {map_a.data(), map_b.data()};
  if (!c.plain_c) maps.push_back(map_c.data());
  if (!z.run(c.entry, {c.kernel, c.plain_c ? "ILb0E" : "ILb1E"}, c.grid, {384}, args, c.smem, maps))
    return false;
  if (!c.plain_c) return true;
  std::vector<uint16_t> out_host(size_t{c.m} * pitch);
  EXPECT_TRUE(z.device.copy_to_host(out_host.data(), out, out_host.size() * 2).ok());
  EXPECT_NE(out_host[0], 0);
  for (size_t i = 0; i < out_host.size(); ++i) {
    const uint16_t want = i % pitch == c.n ? 0 : out_host[0];
    EXPECT_EQ(out_host[i], want) << "C[" << i / pitch << ", " << i % pitch << "]";
    if (out_host[i] != want) break;
  }
  return true;
}

}  // namespace kiln::check
