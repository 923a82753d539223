// Helpers for the simulator tests: a device with buffers, parameter packing, and small PTX
// kernels wrapped in the boilerplate every module needs.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/sim/device.h"

namespace kiln::sim::testing {

// Packs kernel arguments with their natural alignment, as the .param layout expects.
class Params {
 public:
  template <typename T>
  Params& add(T value) {
    size_t align = sizeof(T);
    size_t offset = (bytes_.size() + align - 1) / align * align;
    bytes_.resize(offset + sizeof(T));
    std::memcpy(bytes_.data() + offset, &value, sizeof(T));
    return *this;
  }
  const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

// PTX that nvcc compiled at build time (tests/sim/CMakeLists.txt: zoo entries, call_kernels,
// printf_kernels), by file name; empty when it was not built (no CUDA toolkit).
inline std::string built_ptx(const std::string& file) {
#ifdef KILN_SIM_ZOO_PTX_DIR
  std::ifstream in(std::string(KILN_SIM_ZOO_PTX_DIR) + "/" + file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
#else
  (void)file;
  return {};
#endif
}

// ".version 8.0 .target sm_90a .address_size 64" then `body`.
inline std::string ptx_module(const std::string& body, const std::string& target = "sm_90a") {
  return ".version 8.5\n.target " + target + "\n.address_size 64\n\n" + body;
}

class SimTest : public ::testing::Test {
 public:
  explicit SimTest(SimulatorOptions options = {}) : device_(options) {}

  ModuleHandle load(const std::string& ptx) {
    Result<ModuleHandle> m = device_.load_module(ptx, "test.ptx");
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
    return m.ok() ? *m : 0;
  }

  template <typename T>
  uint64_t upload(const std::vector<T>& values) {
    Result<uint64_t> a = device_.allocate(std::max<size_t>(1, values.size()) * sizeof(T));
    EXPECT_TRUE(a.ok());
    if (!values.empty()) {
      EXPECT_TRUE(device_.copy_to_device(*a, values.data(), values.size() * sizeof(T)).ok());
    }
    return *a;
  }

  template <typename T>
  uint64_t zeros(size_t count) {
    return upload(std::vector<T>(count, T{}));
  }

  template <typename T>
  std::vector<T> download(uint64_t address, size_t count) {
    std::vector<T> out(count);
    Status s = device_.copy_to_host(out.data(), address, count * sizeof(T));
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    return out;
  }

  LaunchReport launch(ModuleHandle m, const std::string& kernel, Dim3 grid, Dim3 block,
                      const Params& params, uint32_t dynamic_shared = 0) {
    LaunchConfig config;
    config.grid = grid;
    config.block = block;
    config.dynamic_shared_bytes = dynamic_shared;
    Result<LaunchReport> r = device_.launch(m, kernel, config, params.bytes());
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : LaunchReport{};
  }

  // Launches and expects no fault; prints the fault otherwise.
  LaunchReport run(ModuleHandle m, const std::string& kernel, Dim3 grid, Dim3 block,
                   const Params& params, uint32_t dynamic_shared = 0) {
    LaunchReport r = launch(m, kernel, grid, block, params, dynamic_shared);
    for (const LaunchFault& f : r.faults) {
      ADD_FAILURE() << f.kind << ": " << f.message << " [" << f.instruction << " line "
                    << f.ptx_line << "]";
    }
    return r;
  }

  // Runs `instruction` once per element: %a, %b, %c hold a[i], b[i], c[i] (`in_bits` wide),
  // the instruction writes %d (`out_bits` wide), which comes back. %p, %q, %s are predicates.
  std::vector<uint64_t> eval(const std::string& instruction, int in_bits, int out_bits,
                             const std::vector<uint64_t>& a, const std::vector<uint64_t>& b = {},
                             const std::vector<uint64_t>& c = {}) {
    std::string ib = std::to_string(in_bits), ob = std::to_string(out_bits);
    std::string text = ptx_module(R"(
.visible .entry eval(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{
  .reg .b64 %rd<16>;
  .reg .b32 %t;
  .reg .b)" + ib + R"( %a, %b, %c;
  .reg .b)" + ob + R"( %d;
  .reg .pred %p, %q, %s;
  mov.u32 %t, %tid.x;
  mul.wide.u32 %rd5, %t, 8;
  ld.param.u64 %rd1, [pa];
  add.s64 %rd1, %rd1, %rd5;
  ld.global.b)" + ib + R"( %a, [%rd1];
  ld.param.u64 %rd2, [pb];
  add.s64 %rd2, %rd2, %rd5;
  ld.global.b)" + ib + R"( %b, [%rd2];
  ld.param.u64 %rd3, [pc];
  add.s64 %rd3, %rd3, %rd5;
  ld.global.b)" + ib + R"( %c, [%rd3];
  ld.param.u64 %rd4, [pd];
  add.s64 %rd4, %rd4, %rd5;
  ld.global.b)" + ob + R"( %d, [%rd4];
  )" + instruction + R"(;
  st.global.b)" + ob + R"( [%rd4], %d;
  ret;
}
)");
    ModuleHandle m = load(text);
    size_t n = a.size();
    auto padded = [&](const std::vector<uint64_t>& v) {
      std::vector<uint64_t> out(v);
      out.resize(n, 0);
      return out;
    };
    uint64_t pa = upload(a), pb = upload(padded(b)), pc = upload(padded(c));
    uint64_t pd = upload(std::vector<uint64_t>(n, 0));
    run(m, "eval", {1}, {static_cast<uint32_t>(n)}, Params().add(pa).add(pb).add(pc).add(pd));
    std::vector<uint64_t> out = download<uint64_t>(pd, n);
    if (out_bits < 64) {
      for (uint64_t& v : out) v &= (1ull << out_bits) - 1;
    }
    return out;
  }

  static uint64_t stat(const std::vector<std::pair<std::string, uint64_t>>& list,
                       const std::string& key) {
    for (const auto& [k, v] : list) {
      if (k == key) return v;
    }
    return 0;
  }

  Device device_;
};

}  // namespace kiln::sim::testing
