// tasks/attention_fwd: the bundle loads; its CPU reference (built as the harness builds it)
// computes attention exactly; and the tolerance tells kernels apart: fp32 flash-attention
// arithmetic (with or without P rounded to bf16 for the second product, as tensor-core kernels
// do) passes, while a missing causal mask, a wrong softmax scale or a dropped last key block
// fails. Each tolerance test prints the largest error as a share of the allowance
// (|out - ref| / (atol + rtol |ref|)), the number the bundle's README quotes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "kiln/tasks/numeric_codec.h"
#include "kiln/tasks/output_comparison.h"
#include "kiln/tasks/task.h"
#include "reference_fixture.h"

namespace kiln::tasks {
namespace {

struct Shape {
  int64_t batch, heads, seq, dim;
  bool causal;
  int64_t size() const { return batch * heads * seq * dim; }
  int64_t rows() const { return batch * heads * seq; }
};

// Q, K, V drawn as the task draws them (Q, K uniform in [-2, 2), V in [-1, 1), bf16).
struct Inputs {
  std::vector<uint16_t> q, k, v;
};

Inputs draw(const Shape& s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> wide(-2, 2), narrow(-1, 1);
  Inputs in;
  for (int64_t i = 0; i < s.size(); ++i) {
    in.q.push_back(static_cast<uint16_t>(encode(KILN_BF16, wide(rng))));
    in.k.push_back(static_cast<uint16_t>(encode(KILN_BF16, wide(rng))));
    in.v.push_back(static_cast<uint16_t>(encode(KILN_BF16, narrow(rng))));
  }
  return in;
}

struct Outputs {
  std::vector<uint16_t> o;
  std::vector<float> lse;
};

// What an fp32 kernel computes, with one of the mistakes a kernel makes.
enum class Flaw { kNone, kRoundP, kNoCausalMask, kScaleOverD, kDropLastKeyBlock };

// Flash-attention arithmetic in fp32: keys in blocks of 64, scores in log2 units, a running
// maximum and sum, O rescaled per block and divided by l at the end, LSE = m ln 2 + ln l.
Outputs flash_fp32(const Shape& s, const Inputs& in, Flaw flaw) {
  constexpr int64_t kBlock = 64;
  Outputs out{std::vector<uint16_t>(static_cast<size_t>(s.size())),
              std::vector<float>(static_cast<size_t>(s.rows()))};
  const double scale = flaw == Flaw::kScaleOverD ? 1.0 / static_cast<double>(s.dim)
                                                 : 1.0 / std::sqrt(static_cast<double>(s.dim));
  const auto scale_log2 = static_cast<float>(scale * 1.4426950408889634);
  const bool masked = s.causal && flaw != Flaw::kNoCausalMask;
  std::vector<float> acc(static_cast<size_t>(s.dim));
  auto widen = [](const std::vector<uint16_t>& bits) {
    std::vector<float> values;
    for (uint16_t b : bits) values.push_back(static_cast<float>(decode(KILN_BF16, b)));
    return values;
  };
  const std::vector<float> q = widen(in.q), k = widen(in.k), v = widen(in.v);
  for (int64_t row = 0; row < s.rows(); ++row) {
    const int64_t i = row % s.seq;
    const int64_t head = row - i;
    int64_t keys = masked ? i + 1 : s.seq;
    if (flaw == Flaw::kDropLastKeyBlock && keys > kBlock) keys = (keys - 1) / kBlock * kBlock;
    float m = -INFINITY;
    float l = 0;
    std::fill(acc.begin(), acc.end(), 0.f);
    for (int64_t j0 = 0; j0 < keys; j0 += kBlock) {
      const int64_t j1 = std::min(keys, j0 + kBlock);
      std::vector<float> p;
      float block_max = -INFINITY;
      for (int64_t j = j0; j < j1; ++j) {
        float dot = 0;
        for (int64_t d = 0; d < s.dim; ++d) dot += q[row * s.dim + d] * k[(head + j) * s.dim + d];
        p.push_back(dot * scale_log2);
        block_max = std::max(block_max, p.back());
      }
      const float m_new = std::max(m, block_max);
      const float alpha = std::exp2(m - m_new);
      l *= alpha;
      for (float& a : acc) a *= alpha;
      for (int64_t j = j0; j < j1; ++j) {
        float pj = std::exp2(p[j - j0] - m_new);
        l += pj;
        if (flaw == Flaw::kRoundP)
          pj = static_cast<float>(decode(KILN_BF16, encode(KILN_BF16, pj)));
        for (int64_t d = 0; d < s.dim; ++d) acc[d] += pj * v[(head + j) * s.dim + d];
      }
      m = m_new;
    }
    for (int64_t d = 0; d < s.dim; ++d)
      out.o[row * s.dim + d] = static_cast<uint16_t>(encode(KILN_BF16, acc[d] / l));
    out.lse[row] = m * 0.69314718f + std::log(l);
  }
  return out;
}

Tolerance task_tolerance() {
  auto task = load_task(testing::bundled_tasks_dir() / "attention_fwd");
  EXPECT_TRUE(task.ok()) << task.error().message;
  return task.ok() ? task->tolerance : Tolerance{};
}

// The largest |out - ref| / (atol + rtol |ref|) over O and LSE: below 1 passes.
double worst_share(const Outputs& out, const Outputs& ref, const Tolerance& t) {
  double worst = 0;
  for (size_t i = 0; i < ref.o.size(); ++i) {
    const double r = decode(KILN_BF16, ref.o[i]);
    const double a = decode(KILN_BF16, out.o[i]);
    worst = std::max(worst, std::fabs(a - r) / (t.atol + t.rtol * std::fabs(r)));
  }
  for (size_t i = 0; i < ref.lse.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(out.lse[i]) - ref.lse[i]) /
                                (t.atol + t.rtol * std::fabs(static_cast<double>(ref.lse[i]))));
  }
  return worst;
}

// Both outputs under the task's comparison rule (the one the harness applies).
bool passes(const Shape& s, const Outputs& out, const Outputs& ref, const Tolerance& t) {
  const std::vector<int64_t> o_shape = {s.batch, s.heads, s.seq, s.dim};
  const std::vector<int64_t> lse_shape = {s.batch, s.heads, s.seq};
  const ErrorStats o = compare_host(out.o.data(), ref.o.data(), KILN_BF16, s.size(), o_shape, t, 0);
  const ErrorStats l =
      compare_host(out.lse.data(), ref.lse.data(), KILN_F32, s.rows(), lse_shape, t, 0);
  return o.passes(t.max_mismatch_fraction) && l.passes(t.max_mismatch_fraction);
}

// The reference is built once for the suite (a few seconds of g++).
class AttentionReference : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    const compiler::BuildOutcome build = testing::reference_builder().build(
        testing::reference_request("attention_fwd", dir_->path() / "reference"));
    if (build.ok) built_ = testing::load_reference(build.library);
    build_log_ = new std::string(build.error + build.log);
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete build_log_;
  }
  void SetUp() override {
    reference_ = built_;
    ASSERT_NE(reference_, nullptr) << *build_log_;
  }

  int run(const Shape& s, Inputs& in, Outputs& out, int64_t causal_value = -1) {
    out.o.assign(static_cast<size_t>(s.size()), 0xffff);
    out.lse.assign(static_cast<size_t>(s.rows()), NAN);
    const int64_t sd = s.seq * s.dim;
    kiln_tensor t[5] = {};
    const kiln_tensor bhsd = {
        nullptr, KILN_BF16, 4, {s.batch, s.heads, s.seq, s.dim}, {s.heads * sd, sd, s.dim, 1}, ""};
    for (int i = 0; i < 4; ++i) t[i] = bhsd;
    t[0].data = in.q.data();
    t[1].data = in.k.data();
    t[2].data = in.v.data();
    t[3].data = out.o.data();
    t[4] = {out.lse.data(), KILN_F32, 3, {s.batch, s.heads, s.seq}, {s.heads * s.seq, s.seq, 1},
            "LSE"};
    kiln_scalar causal{};
    causal.name = "causal";
    causal.dtype = KILN_I64;
    causal.value.i = causal_value >= 0 ? causal_value : (s.causal ? 1 : 0);
    return reference_(t, 5, &causal, 1);
  }

  Outputs reference(const Shape& s, Inputs& in) {
    Outputs out;
    EXPECT_EQ(run(s, in, out), KILN_OK);
    return out;
  }

  static inline testing::TempDir* dir_ = nullptr;
  static inline std::string* build_log_ = nullptr;
  static inline kiln_reference_fn built_ = nullptr;
  kiln_reference_fn reference_ = nullptr;
};

TEST(AttentionFwdTask, BundleLoadsWithCausalAsADimAndTheFlopsHalvedWhenCausal) {
  auto task = load_task(testing::bundled_tasks_dir() / "attention_fwd");
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->name, "attention_fwd");
  EXPECT_GE(task->workloads.size(), 8u);
  ASSERT_EQ(task->tensors.size(), 5u);
  EXPECT_EQ(task->tensors[4].name, "LSE");
  EXPECT_EQ(task->tensors[4].dtype, "f32");
  ASSERT_EQ(task->scalars.size(), 1u);
  EXPECT_FALSE(task->gpu_reference_path.empty());
  bool saw_full = false;
  bool saw_causal = false;
  for (const Workload& w : task->workloads) {
    auto causal = evaluate(task->scalars[0].value, w.dims);
    ASSERT_TRUE(causal.ok());
    (*causal == 1 ? saw_causal : saw_full) = true;
    auto flops = evaluate(task->flops, w.dims);
    ASSERT_TRUE(flops.ok());
    const auto& d = w.dims;
    const int64_t full = 4 * d.at("B") * d.at("H") * d.at("S") * d.at("S") * d.at("D");
    EXPECT_EQ(*flops, *causal == 1 ? full / 2 : full) << w.name;
    EXPECT_EQ(d.at("S") % 128, 0) << w.name << ": the baseline needs S % 128 == 0";
  }
  EXPECT_TRUE(saw_full && saw_causal);
  for (const Workload& w : task->sim_workloads) {
    auto causal = evaluate(task->scalars[0].value, w.dims);
    ASSERT_TRUE(causal.ok());
    EXPECT_TRUE(*causal == 0 || *causal == 1) << w.name;
  }
}

TEST(AttentionFwdTask, BaselineIsTheZooWgmmaKernelBelowItsHeader) {
  const std::string baseline =
      testing::read_text(testing::bundled_tasks_dir() / "attention_fwd" / "baseline.cu");
  const std::string zoo = testing::read_text(testing::bundled_tasks_dir() / ".." / "kb" / "zoo" /
                                             "attention_hopper_wgmma" / "kernel.cu");
  ASSERT_FALSE(zoo.empty());
  // baseline.cu is a five-line comment, then the zoo entry's kernel.cu unchanged.
  size_t start = 0;
  for (int line = 0; line < 5 && start != std::string::npos; ++line)
    start = baseline.find('\n', start) + 1;
  EXPECT_EQ(baseline.substr(start), zoo) << "copy kb/zoo/attention_hopper_wgmma/kernel.cu below "
                                            "baseline.cu's header";
}

TEST_F(AttentionReference, MatchesAHandComputedSoftmaxOfTwoKeys) {
  // D = 4, S = 2, one head: q0 = (2, 0, 0, 0), k0 = (1, 0, 0, 0), k1 = (0, 0, 0, 0), so the
  // scores of row 0 are 2/2 = 1 and 0; V rows (1, 0, 0, 0) and (0, 1, 0, 0).
  const Shape s{1, 1, 2, 4, false};
  Inputs in{std::vector<uint16_t>(8, 0), std::vector<uint16_t>(8, 0), std::vector<uint16_t>(8, 0)};
  in.q[0] = 0x4000;  // 2
  in.k[0] = 0x3f80;  // 1
  in.v[0] = 0x3f80;
  in.v[5] = 0x3f80;
  Outputs out = reference(s, in);
  const double e = std::exp(1.0);
  EXPECT_EQ(out.o[0], encode(KILN_BF16, e / (e + 1)));
  EXPECT_EQ(out.o[1], encode(KILN_BF16, 1 / (e + 1)));
  EXPECT_EQ(out.o[2], 0);
  EXPECT_EQ(out.lse[0], static_cast<float>(std::log(e + 1)));
  // Row 1 has q = 0: equal weights, log-sum-exp ln 2.
  EXPECT_EQ(out.o[4], encode(KILN_BF16, 0.5));
  EXPECT_EQ(out.o[5], encode(KILN_BF16, 0.5));
  EXPECT_EQ(out.lse[1], static_cast<float>(std::log(2.0)));
  // Causal: row 0 sees only key 0, so O = V[0] and LSE = its score.
  Outputs causal;
  ASSERT_EQ(run(s, in, causal, 1), KILN_OK);
  EXPECT_EQ(causal.o[0], 0x3f80);
  EXPECT_EQ(causal.o[1], 0);
  EXPECT_EQ(causal.lse[0], 1.0f);
  EXPECT_EQ(causal.o[4], out.o[4]);
}

TEST_F(AttentionReference, RefusesBadArguments) {
  const Shape s{1, 1, 2, 4, false};
  Inputs in{std::vector<uint16_t>(8), std::vector<uint16_t>(8), std::vector<uint16_t>(8)};
  Outputs out;
  EXPECT_EQ(run(s, in, out, 2), KILN_ERR_BAD_ARGUMENT);  // causal is 0 or 1
  out.o.assign(8, 0);
  out.lse.assign(2, 0);
  kiln_tensor t[5] = {};
  for (int i = 0; i < 4; ++i) t[i] = {in.q.data(), KILN_BF16, 4, {1, 1, 2, 4}, {8, 8, 4, 1}, ""};
  t[4] = {out.lse.data(), KILN_F32, 3, {1, 1, 3}, {3, 3, 1}, "LSE"};
  kiln_scalar causal{};
  causal.dtype = KILN_I64;
  EXPECT_EQ(reference_(t, 5, &causal, 1), KILN_ERR_BAD_ARGUMENT);  // LSE is not [B, H, S]
  t[4].shape[2] = 2;
  t[1].dtype = KILN_F16;
  EXPECT_EQ(reference_(t, 5, &causal, 1), KILN_ERR_BAD_ARGUMENT);  // K is not bf16
  t[1].dtype = KILN_BF16;
  EXPECT_EQ(reference_(t, 4, &causal, 1), KILN_ERR_BAD_ARGUMENT);  // no LSE
}

// The shapes of the sim workloads and two longer rows (many keys, more rounding), causal and not.
const Shape kTolShapes[] = {{1, 2, 128, 64, false},  {1, 2, 128, 64, true},
                            {2, 1, 128, 128, true},  {1, 1, 1024, 128, false},
                            {1, 1, 1024, 128, true}, {1, 1, 2048, 64, false}};

TEST_F(AttentionReference, Fp32FlashArithmeticPassesWithOrWithoutBf16Probabilities) {
  const Tolerance tolerance = task_tolerance();
  for (const Shape& s : kTolShapes) {
    Inputs in = draw(s, 11);
    const Outputs ref = reference(s, in);
    for (Flaw flaw : {Flaw::kNone, Flaw::kRoundP}) {
      const Outputs out = flash_fp32(s, in, flaw);
      const double share = worst_share(out, ref, tolerance);
      std::printf("[ measured ] S=%lld D=%lld causal=%d %s: worst error %.3f of the tolerance\n",
                  static_cast<long long>(s.seq), static_cast<long long>(s.dim), s.causal ? 1 : 0,
                  flaw == Flaw::kNone ? "fp32 P" : "bf16 P", share);
      EXPECT_TRUE(passes(s, out, ref, tolerance)) << "S=" << s.seq << " D=" << s.dim;
      EXPECT_LT(share, 0.5) << "S=" << s.seq << " D=" << s.dim;
    }
  }
}

TEST_F(AttentionReference, AMissingMaskAWrongScaleOrADroppedKeyBlockFails) {
  const Tolerance tolerance = task_tolerance();
  for (const Shape& s : kTolShapes) {
    Inputs in = draw(s, 12);
    const Outputs ref = reference(s, in);
    std::vector<Flaw> flaws = {Flaw::kScaleOverD, Flaw::kDropLastKeyBlock};
    if (s.causal) flaws.push_back(Flaw::kNoCausalMask);
    for (Flaw flaw : flaws) {
      const Outputs out = flash_fp32(s, in, flaw);
      std::printf(
          "[ measured ] S=%lld D=%lld causal=%d flaw %d: worst error %.1f of the tolerance\n",
          static_cast<long long>(s.seq), static_cast<long long>(s.dim), s.causal ? 1 : 0,
          static_cast<int>(flaw), worst_share(out, ref, tolerance));
      EXPECT_FALSE(passes(s, out, ref, tolerance))
          << "flaw " << static_cast<int>(flaw) << " at S=" << s.seq << " D=" << s.dim;
    }
  }
}

}  // namespace
}  // namespace kiln::tasks
