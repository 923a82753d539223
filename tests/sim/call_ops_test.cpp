#include <gtest/gtest.h>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class CallOpsTest : public SimTest {};

int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

TEST_F(CallOpsTest, CallsPassArgumentsReturnResultsAndRecurse) {
  const std::string ptx = built_ptx("call_kernels.ptx");
  if (ptx.empty()) GTEST_SKIP() << "no call_kernels.ptx (building it needs the CUDA toolkit)";
  ASSERT_NE(ptx.find("call.uni"), std::string::npos) << "nvcc inlined the calls";
  ModuleHandle m = load(ptx);
  const uint32_t n = 64;
  std::vector<float> in(n);
  for (uint32_t i = 0; i < n; ++i) in[i] = 0.5f * static_cast<float>(i);
  uint64_t pin = upload(in), out = zeros<float>(n), fibs = zeros<int32_t>(n);
  uint64_t odd = upload(std::vector<int32_t>(n, -1));
  LaunchReport r = run(m, "calls", {1}, {n}, Params().add(pin).add(out).add(fibs).add(odd));
  std::vector<float> got = download<float>(out, n);
  std::vector<int32_t> f = download<int32_t>(fibs, n), o = download<int32_t>(odd, n);
  for (uint32_t t = 0; t < n; ++t) {
    EXPECT_EQ(got[t], in[t] * 2.0f + 1.0f) << t;
    EXPECT_EQ(f[t], fib(static_cast<int>(t % 13))) << t;
    EXPECT_EQ(o[t], t % 2 ? static_cast<int32_t>(2 * t) : -1) << t;
  }
  EXPECT_GT(stat(r.stats.by_class, "control"), 0u);
}

TEST_F(CallOpsTest, CallingAFunctionWithoutABodyNamesIt) {
  ModuleHandle m = load(ptx_module(R"(
.extern .func (.param .b32 func_retval0) helper(.param .b64 helper_param_0);

.visible .entry k()
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  mov.u64 %rd1, 0;
  {
  .param .b64 param0;
  st.param.b64 [param0], %rd1;
  .param .b32 retval0;
  call.uni (retval0), helper, (param0);
  ld.param.b32 %r1, [retval0];
  }
  ret;
}
)"));
  LaunchReport r = launch(m, "k", {1}, {32}, Params());
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].kind, "unsupported_instruction");
  EXPECT_NE(r.faults[0].message.find("'helper' (no body in this module)"), std::string::npos)
      << r.faults[0].message;
  EXPECT_EQ(r.faults[0].ptx_line, 17u);
}

}  // namespace
}  // namespace kiln::sim::testing
