// Launch sequences of the zoo's decode-attention, MoE routing, look-back scan, histogram and
// memory-bound (fp8 quantization, KV-cache append) entries at small shapes, shared by the race
// detector's and the sync monitor's zoo tests (each launch runs under every default schedule; see
// zoo_under_checker.h). Each returns false when the zoo PTX was not built (no CUDA toolkit).
#pragma once

#include <cstring>
#include <vector>

#include "zoo_under_checker.h"

namespace kiln::check {

template <typename Observer>
uint64_t int_buffer(ZooLaunch<Observer>& z, const std::vector<int32_t>& values) {
  const uint64_t address = z.buffer(values.size() * 4, 0);
  EXPECT_TRUE(z.device.copy_to_device(address, values.data(), values.size() * 4).ok());
  return address;
}

inline uint64_t float_bits(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

// Split kernel (G = 2 query heads on one KV head, 2 splits of 64 keys) then the combine.
template <typename Observer>
bool run_attention_decode(ZooLaunch<Observer>& z) {
  const uint32_t hq = 2, hk = 1, s = 128, d = 128, splits = 2, chunk = 64;
  const uint64_t q = z.buffer(hq * d * 2, 0x3c), k = z.buffer(hk * s * d * 2, 0x3c),
                 v = z.buffer(hk * s * d * 2, 0x3c), o = z.buffer(hq * d * 2, 0),
                 part_o = z.buffer(hq * splits * d * 4, 0), part_lse = z.buffer(hq * splits * 4, 0);
  const std::string entry = "attention_decode_splitkv";
  if (!z.run(entry, {"decode_split_kernel", "ILi2E"}, {splits, hk, 1}, {128},
             {q, k, v, o, part_o, part_lse, hq, hk, s, chunk, splits, float_bits(0.1275f)})) {
    return false;
  }
  return z.run(entry, {"decode_combine_kernel"}, {hq}, {d}, {part_o, part_lse, o, splits});
}

// 16 tokens of 64 equal logits (every comparison a tie), top 2, renormalized.
template <typename Observer>
bool run_moe_gating(ZooLaunch<Observer>& z) {
  const uint32_t tokens = 16, experts = 64, k = 2;
  const uint64_t logits = z.buffer(tokens * experts * 4, 0x3c),
                 weights = z.buffer(tokens * k * 4, 0), indices = z.buffer(tokens * k * 4, 0);
  return z.run("moe_topk_gating_softmax", {"gating_kernel", "ILi2E"}, {2}, {256},
               {logits, weights, indices, tokens, experts, k, experts, k, k, 1});
}

// The ranking launch of 40 tokens routed to 3 of 8 experts each (120 slots, one tile): the
// warps' private histograms and the last block's scan of the tile counts (fence, ticket, a
// barrier reduction). The copy launch rewrites dest_rows in place (local rank to final row),
// so it cannot run once per schedule on the same buffers here; the whole op runs under both
// checkers as a zoo task instead (kiln_zoo_task_checks.moe_token_permute).
template <typename Observer>
bool run_moe_permute(ZooLaunch<Observer>& z) {
  const uint32_t tokens = 40, k = 3, experts = 8, slots = tokens * k, tiles = 1;
  std::vector<int32_t> choice(slots);
  for (uint32_t t = 0; t < tokens; ++t)
    for (uint32_t j = 0; j < k; ++j)
      choice[t * k + j] = static_cast<int32_t>((t + 3 * j) % experts);
  const uint64_t indices = int_buffer(z, choice), counts = z.buffer(tiles * experts * 4, 0),
                 bases = z.buffer(tiles * experts * 4, 0), offsets = z.buffer((experts + 1) * 4, 0),
                 dest = z.buffer(slots * 4, 0), ticket = z.buffer(4, 0);
  return z.run("moe_token_permute", {"rank_kernel"}, {tiles}, {256},
               {indices, dest, counts, bases, offsets, ticket, slots, experts}, 8 * experts * 4);
}

// 37 tokens (8 per block: the last block partly idle) of 3 rows each, H = 264 (the vector path
// with a partial last column round).
template <typename Observer>
bool run_moe_unpermute(ZooLaunch<Observer>& z) {
  const uint32_t tokens = 37, k = 3, h = 264;
  std::vector<int32_t> rows(tokens * k);
  for (uint32_t i = 0; i < tokens * k; ++i) rows[i] = static_cast<int32_t>((i * 7) % (tokens * k));
  const uint64_t dest = int_buffer(z, rows), y = z.buffer(tokens * k * h * 2, 0x3c),
                 weights = z.buffer(tokens * k * 4, 0x3c), out = z.buffer(tokens * h * 2, 0);
  return z.run("moe_token_unpermute", {"unpermute_kernel", "ILb1E"}, {5}, {256},
               {y, dest, weights, out, tokens, k, h});
}

// 5 tiles of 4096: tickets, status words and the look-back across blocks.
template <typename Observer>
bool run_scan_lookback(ZooLaunch<Observer>& z) {
  const uint32_t n = 5 * 4096 - 3, tiles = 5;
  const uint64_t x = z.buffer(n * 4, 1), y = z.buffer(n * 4, 0);
  return z.run("scan_decoupled_lookback", {"scan_kernel"}, {tiles}, {256}, {x, y, n, tiles, 1, 1});
}

// 3 blocks striding over 10003 keys (vector loop plus scalar tail) into 256 bins.
template <typename Observer>
bool run_histogram(ZooLaunch<Observer>& z) {
  const uint32_t n = 10003;
  const uint64_t keys = z.buffer(n * 4, 0x5a), counts = z.buffer(256 * 4, 0);
  return z.run("histogram_radix_pass", {"histogram_kernel"}, {3}, {256}, {keys, n, 8, 1, counts});
}

// One block of 8 warps over 153 groups of 128 channels (39 four-group chunks, the last a quarter
// full): three turns of the warp-strided loop with 2 chunks per warp in flight, 8-lane shuffles.
template <typename Observer>
bool run_quant_fp8(ZooLaunch<Observer>& z) {
  const uint32_t tokens = 9, h = 2176, vectors = tokens * h / 8;
  const uint64_t x = z.buffer(tokens * h * 2, 0x3c), q = z.buffer(tokens * h, 0),
                 scales = z.buffer(tokens * h / 128 * 4, 0);
  return z.run("quant_fp8_group128", {"quant_fp8_group128_kernel"}, {1}, {256},
               {x, q, scales, vectors});
}

// One block of 128 threads striding over 20 tokens x 2 heads x 4 units, scattered to distinct
// cache rows (7t mod 24).
template <typename Observer>
bool run_kv_cache_append(ZooLaunch<Observer>& z) {
  const uint32_t tokens = 20, heads = 2, d = 64, rows = 24;
  std::vector<int32_t> positions(tokens);
  for (uint32_t t = 0; t < tokens; ++t) positions[t] = static_cast<int32_t>((7 * t) % rows);
  const uint64_t k = z.buffer(tokens * heads * d * 2, 0x3c),
                 v = z.buffer(tokens * heads * d * 2, 0x3c), pos = int_buffer(z, positions),
                 cos = z.buffer(rows * d / 2 * 4, 0x3c), sin = z.buffer(rows * d / 2 * 4, 0x3c),
                 k_cache = z.buffer(rows * heads * d * 2, 0),
                 v_cache = z.buffer(rows * heads * d * 2, 0);
  return z.run("kv_cache_append_rope", {"kv_cache_append_rope_kernel"}, {1}, {128},
               {k, v, pos, cos, sin, k_cache, v_cache, tokens, heads, d, rows});
}

}  // namespace kiln::check
