// cp.async.bulk.tensor.2d tile loads through a tensor map (cuTensorMapEncodeTiled on the GPU,
// kiln::sim::encode_tensor_map in the simulator) with each swizzle mode; the shared-memory
// bytes as the copy left them (swizzled) come back, so the swizzle pattern is compared too.
#include "harness.h"

namespace kiln::simdiff {
namespace {

constexpr uint32_t kWidth = 256, kHeight = 64;  // u16 elements

// The kernel follows what nvcc emits for a __grid_constant__ CUtensorMap (see the zoo's
// gemm_wgmma_tma): the map is a 128-byte-aligned .param, its generic address from
// cvta.param; mbarrier ops on .shared::cta; fence.mbarrier_init + fence.proxy.async after the
// barrier's init, so the async proxy (the TMA unit) sees it; the destination 1024-B aligned.
std::string tensor_kernel(uint32_t box_bytes) {
  return ptx_header() +
         R"(.visible .entry k(.param .align 128 .b8 map[128], .param .u64 out, .param .u32 x, .param .u32 y)
{
  .shared .align 1024 .b8 smem[)" +
         std::to_string(box_bytes) + R"(];
  .shared .align 8 .b64 bar;
  .reg .b32 %r<16>;
  .reg .b64 %rd<12>;
  .reg .pred %p<4>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  mov.u32 %r3, smem;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra WAIT;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  fence.mbarrier_init.release.cluster;
  fence.proxy.async.shared::cta;
  mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [%r2], )" +
         std::to_string(box_bytes) + R"(;
  mov.u64 %rd2, map;
  cvta.param.u64 %rd3, %rd2;
  ld.param.u32 %r4, [x];
  ld.param.u32 %r5, [y];
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd3, {%r4, %r5}], [%r2];
WAIT:
  bar.sync 0;
SPIN:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
  @!%p2 bra SPIN;
  ld.param.u64 %rd4, [out];
  mov.u32 %r6, %r1;
COPY:
  shl.b32 %r7, %r6, 2;
  add.u32 %r8, %r3, %r7;
  ld.shared.u32 %r9, [%r8];
  mul.wide.u32 %rd5, %r6, 4;
  add.s64 %rd6, %rd4, %rd5;
  st.global.u32 [%rd6], %r9;
  add.u32 %r6, %r6, 32;
  setp.lt.u32 %p3, %r6, )" +
         std::to_string(box_bytes / 4) + R"(;
  @%p3 bra COPY;
  ret;
}
)";
}

#define KILN_TRY(expr)                  \
  do {                                  \
    std::string kiln_e = (expr);        \
    if (!kiln_e.empty()) return kiln_e; \
  } while (0)

Case tensor_case(uint32_t swizzle, uint32_t box_w, uint32_t box_h, uint32_t x, uint32_t y) {
  static const char* names[] = {"none", "32B", "64B", "128B"};
  Case c;
  c.name = "cp.async.bulk.tensor.2d swizzle " + std::string(names[swizzle]) + " box " +
           std::to_string(box_w) + "x" + std::to_string(box_h) + " at (" + std::to_string(x) + "," +
           std::to_string(y) + ")";
  uint32_t box_bytes = box_w * box_h * 2;
  std::string ptx = tensor_kernel(box_bytes);
  std::string name = c.name;
  c.run = [=](Backend& be, std::vector<uint64_t>* out) -> std::string {
    KILN_TRY(be.load(ptx, name));
    std::vector<uint16_t> g(kWidth * kHeight);
    for (uint32_t i = 0; i < g.size(); ++i) g[i] = static_cast<uint16_t>(i * 2654435761u >> 7);
    uint64_t dg = 0, dout = 0;
    KILN_TRY(be.allocate(g.size() * 2, &dg));
    KILN_TRY(be.upload(dg, g.data(), g.size() * 2));
    KILN_TRY(be.allocate(box_bytes, &dout));
    std::vector<uint32_t> zero(box_bytes / 4, 0xcdcdcdcd);
    KILN_TRY(be.upload(dout, zero.data(), box_bytes));
    TiledMap m;
    m.rank = 2;
    m.data_type = 1;  // CU_TENSOR_MAP_DATA_TYPE_UINT16
    m.element_bytes = 2;
    m.global_address = dg;
    m.global_dim[0] = kWidth;
    m.global_dim[1] = kHeight;
    m.global_stride_bytes[1] = kWidth * 2;
    m.box_dim[0] = box_w;
    m.box_dim[1] = box_h;
    m.swizzle = swizzle;
    MapBytes map;
    KILN_TRY(be.encode_map(m, &map));
    KILN_TRY(be.launch("k", {1}, {32}, 0, Params().add(map).add(dout).add(x).add(y)));
    std::vector<uint32_t> words(box_bytes / 4);
    KILN_TRY(be.download(words.data(), dout, box_bytes));
    out->assign(words.begin(), words.end());
    return "";
  };
  return c;
}

}  // namespace

void add_tensor_cases(std::vector<Case>& cases) {
  // Inner box bytes: at most the swizzle span (32/64/128 B); none takes 128 B rows too.
  const uint32_t inner[] = {64, 16, 32, 64};
  for (uint32_t sw = 0; sw < 4; ++sw) {
    cases.push_back(tensor_case(sw, inner[sw], 16, 0, 0));
    cases.push_back(tensor_case(sw, inner[sw], 16, 40, 5));
    cases.push_back(tensor_case(sw, inner[sw], 16, kWidth - inner[sw] / 2, kHeight - 6));
  }
  // A 16-byte box. Its x is a multiple of 8 elements (16 B): on an H200 an x of 3 (6 B into a
  // row) faults with CUDA_ERROR_ILLEGAL_INSTRUCTION, an x of 8 copies (checked by hand,
  // 2026-11-29); the simulator does not model that fault.
  cases.push_back(tensor_case(0, 8, 8, 8, 1));
}

}  // namespace kiln::simdiff
