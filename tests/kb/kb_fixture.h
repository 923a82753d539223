// A small, fixed knowledge base in a temporary folder: zoo entries (including the ids
// the ranking tests name), PTX notes, two synthetic CCCL headers and a cache folder,
// so index tests do not depend on what the real kb/ holds today.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>

#include "kiln/kb/kb_paths.h"
#include "support/temp_dir.h"

namespace kiln::kb::testing {

using kiln::testing::read_text;
using kiln::testing::TempDir;
using kiln::testing::write_text;

inline std::filesystem::path real_kb_dir() { return KILN_KB_DIR; }

// Two wrapper blocks in the CCCL generated-header style, one with the requirement
// on the syntax line and one where it wraps onto the next line.
inline const char* kMbarrierHeader = R"(// This file was automatically generated. Do not edit.

#ifndef _CUDA_PTX_GENERATED_MBARRIER_TRY_WAIT_PARITY_H_
#define _CUDA_PTX_GENERATED_MBARRIER_TRY_WAIT_PARITY_H_

/*
// mbarrier.try_wait.parity.shared::cta.b64  waitComplete, [addr], phaseParity;                                // 7a.
PTX ISA 78, SM_90 template <typename = void>
__device__ static inline bool mbarrier_try_wait_parity(
  uint64_t* addr,
  const uint32_t& phaseParity);
*/
#if __cccl_ptx_isa >= 780
template <typename = void>
_CCCL_DEVICE static inline bool
mbarrier_try_wait_parity(_CUDA_VSTD::uint64_t* __addr, const _CUDA_VSTD::uint32_t& __phaseParity)
{ /* body */ }
#endif // __cccl_ptx_isa >= 780

/*
// mbarrier.try_wait.parity.sem.scope.shared::cta.b64  waitComplete, [addr], phaseParity;                  // 8a.  PTX
ISA 80, SM_90
// .sem       = { .acquire }
// .scope     = { .cta, .cluster }
template <cuda::ptx::dot_scope Scope>
__device__ static inline bool mbarrier_try_wait_parity(
  cuda::ptx::sem_acquire_t,
  cuda::ptx::scope_t<Scope> scope,
  uint64_t* addr,
  const uint32_t& phaseParity);
*/
#endif
)";

inline const char* kBulkTensorHeader = R"(
/*
// cp.async.bulk.tensor.1d.dst.src.tile.mbarrier::complete_tx::bytes [dstMem], [tensorMap, tensorCoords], [smem_bar]; // PTX ISA 80, SM_90
// .dst       = { .shared::cluster }
// .src       = { .global }
template <typename = void>
__device__ static inline void cp_async_bulk_tensor(
  cuda::ptx::space_cluster_t,
  cuda::ptx::space_global_t,
  void* dstMem,
  const void* tensorMap,
  const int32_t (&tensorCoords)[1],
  uint64_t* smem_bar);
*/
/*
// barrier.cluster.arrive; // PTX ISA 78, SM_90
// Marked volatile and as clobbering memory
template <typename = void>
__device__ static inline void barrier_cluster_arrive();
*/
/*
// tcgen05.mma.cta_group.kind [d_tmem], a_desc, b_desc, idesc,
enable_input_d; // PTX ISA 86, SM_100a, SM_101a
template <typename = void>
__device__ static inline void tcgen05_mma(
  uint32_t d_tmem,
  uint64_t a_desc);
*/
)";

inline nlohmann::json zoo_meta(const std::string& id, const std::string& title,
                               const std::string& op, const std::vector<std::string>& techniques,
                               const std::string& arch, const std::vector<std::string>& dtypes,
                               const std::string& description) {
  return nlohmann::json{{"id", id},
                        {"title", title},
                        {"op", op},
                        {"techniques", techniques},
                        {"arch", arch},
                        {"dtypes", dtypes},
                        {"description", description},
                        {"related", nlohmann::json::array()},
                        {"measured", nlohmann::json::array()}};
}

inline void write_entry(const std::filesystem::path& zoo, const nlohmann::json& meta,
                        const std::string& notes, const std::string& kernel) {
  const auto dir = zoo / meta["id"].get<std::string>();
  write_text(dir / "meta.json", meta.dump(2));
  write_text(dir / "NOTES.md", notes);
  write_text(dir / "kernel.cu", kernel);
}

// Builds the fixture under `root`: root/kb (zoo, ptx/notes, hw), root/cccl, root/cache.
inline KbPaths make_fixture(const std::filesystem::path& root) {
  KbPaths paths{root / "kb", root / "cccl", root / "cache"};
  const auto zoo = paths.zoo_dir();
  write_text(zoo / "techniques.json", read_text(real_kb_dir() / "zoo" / "techniques.json"));
  write_text(zoo / "README.md", read_text(real_kb_dir() / "zoo" / "README.md"));

  auto persistent = zoo_meta(
      "gemm_warp_specialized_persistent", "Persistent warp-specialized GEMM with TMA and wgmma",
      "gemm_tn",
      {"wgmma", "tma", "mbarrier", "warp_specialization", "persistent_kernel", "setmaxnreg"},
      "sm_90a", {"f16", "bf16"},
      "One block per SM loops over output tiles; a producer warpgroup issues TMA loads, two "
      "consumer warpgroups run wgmma.");
  persistent["measured"] =
      nlohmann::json::array({{{"gpu", "NVIDIA H200"},
                              {"date", "2026-11-29"},
                              {"shape", {{"M", 4096}, {"N", 4096}, {"K", 4096}}},
                              {"time_us", 210.5},
                              {"tflops", 653.0},
                              {"baseline", "cuBLAS"},
                              {"baseline_time_us", 200.1},
                              {"command", "kiln benchmark ..."}}});
  write_entry(zoo, persistent,
              "# Persistent warp-specialized GEMM\n\nThe producer warp loads tiles with TMA while "
              "consumer warpgroups "
              "compute. Persistent blocks loop over tiles with a tile scheduler.\n",
              "// kernel\n__global__ void gemm_ws_persistent() {}\n");
  // Measured without a baseline: the GPU test writes "baseline": null then.
  auto wgmma = zoo_meta("gemm_wgmma_tma", "GEMM with TMA loads and wgmma", "gemm_tn",
                        {"wgmma", "tma", "mbarrier", "multistage_pipeline"}, "sm_90a", {"f16"},
                        "A multistage TMA pipeline feeding wgmma, one tile per block.");
  wgmma["measured"] = nlohmann::json::array({{{"gpu", "NVIDIA H200"},
                                              {"date", "2026-11-29"},
                                              {"shape", {{"M", 4096}, {"N", 4096}, {"K", 4096}}},
                                              {"time_us", 224.6},
                                              {"tflops", 611.9},
                                              {"gbps", nullptr},
                                              {"baseline", nullptr},
                                              {"baseline_time_us", nullptr},
                                              {"command", "ctest -L gpu"}}});
  write_entry(zoo, wgmma,
              "# TMA + wgmma\n\nEach stage has a full and an empty mbarrier; the consumer waits on "
              "parity.\n",
              "__global__ void gemm_wgmma() {}\n");
  write_entry(zoo,
              zoo_meta("gemm_naive", "Naive GEMM", "gemm_tn", {"naive"}, "sm_80", {"f16"},
                       "One thread per output element."),
              "# Naive GEMM\n\nThe correctness baseline; every later entry is faster.\n",
              "__global__ void gemm_naive() {}\n");
  write_entry(zoo,
              zoo_meta("gemm_smem_tiling", "GEMM with shared-memory tiles", "gemm_tn",
                       {"smem_tiling"}, "sm_80", {"f16"}, "Operand tiles staged in shared memory."),
              "# Tiled GEMM\n\nTiles of A and B are loaded once per block.\n",
              "__global__ void gemm_tiled() {}\n");
  write_entry(
      zoo,
      zoo_meta("transpose_smem", "Matrix transpose through padded shared memory", "transpose",
               {"transpose", "smem_tiling", "bank_conflict_free"}, "sm_80", {"f32"},
               "Coalesced reads and writes with a 32x33 padded tile."),
      "# Transpose\n\nWithout padding, the column reads of a 32x32 tile hit one bank 32 times: a "
      "32-way bank "
      "conflict. One padding column makes them conflict-free.\n",
      "__global__ void transpose(float* y, const float* x) { __shared__ float tile[32][33]; }\n");
  write_entry(zoo,
              zoo_meta("reduce_warp_shuffle", "Sum reduction with warp shuffles", "reduce_sum",
                       {"warp_shuffle", "block_reduction", "grid_reduction", "atomics"}, "sm_80",
                       {"f32"}, "Warp shuffles, then shared memory, then one atomic per block."),
              "# Reduction\n\nshfl.sync.down halves the active lanes each step.\n",
              "__global__ void reduce() {}\n");
  write_entry(
      zoo,
      zoo_meta("softmax_online", "Online softmax", "softmax", {"online_softmax", "warp_shuffle"},
               "sm_80", {"f32"}, "One pass with a running maximum and sum."),
      "# Online softmax\n\nMilakov and Gimelshein's one-pass softmax.\n",
      "__global__ void softmax() {}\n");
  write_text(zoo / "broken_entry" / "meta.json", "{ not json");

  const auto notes = paths.notes_dir();
  write_text(notes / "mbarrier.md",
             "# mbarrier: phases, arrivals and transaction counts\n"
             "instructions: mbarrier.init, mbarrier.arrive, mbarrier.try_wait, mbarrier.test_wait\n"
             "requires: PTX ISA 7.0, sm_80\n\n"
             "## What it is for\n\nA 64-bit barrier object in shared memory, split into arrive and "
             "wait.\n\n"
             "## Phase parity\n\nEach completed phase flips the parity bit. Waiters call "
             "mbarrier.try_wait.parity with "
             "the parity of the phase they wait for; waiting on the wrong parity returns at once "
             "or hangs.\n\n"
             "```\n## not a heading inside a fence\n```\n\n"
             "## Pitfalls\n\nForgetting expect_tx leaves the phase incomplete.\n");
  write_text(
      notes / "bar-barrier.md",
      "# bar.sync and named barriers\n"
      "instructions: bar.sync, bar.arrive, barrier.sync\n\n"
      "## What it is for\n\nA CTA-wide barrier: every thread waits until all have arrived.\n");
  write_text(
      notes / "cp-async.md",
      "# cp.async: Ampere asynchronous copies\n"
      "instructions: cp.async.ca, cp.async.cg, cp.async.commit_group, cp.async.wait_group\n\n"
      "## Groups\n\nCommit groups and wait for all but N of them.\n");
  write_text(notes / "broken.md", "no title line here\n");

  write_text(paths.cccl_dir / "mbarrier_try_wait_parity.h", kMbarrierHeader);
  write_text(paths.cccl_dir / "cp_async_bulk_tensor.h", kBulkTensorHeader);
  return paths;
}

}  // namespace kiln::kb::testing
