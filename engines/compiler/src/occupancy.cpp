#include "kiln/compiler/occupancy.h"

#include <algorithm>
#include <climits>

#include "kiln/compiler/gpu_arch.h"

namespace kiln::compiler {

namespace {

int64_t round_up(int64_t value, int64_t unit) { return (value + unit - 1) / unit * unit; }
int64_t divide_round_up(int64_t value, int64_t unit) { return (value + unit - 1) / unit; }

std::string kb_text(int64_t bytes) {
  return std::to_string(bytes) + " bytes (" + std::to_string(bytes / 1024) + " KB)";
}

}  // namespace

Result<SmLimits> sm_limits_for_arch(const std::string& arch) {
  auto parsed = parse_gpu_arch(arch);
  if (!parsed) return parsed.error();
  SmLimits limits;  // the defaults are sm_90's
  const int cc = parsed->major * 10 + parsed->minor;
  limits.source = "built-in table for sm_" + std::to_string(cc) + " (CUDA occupancy calculator)";
  switch (cc) {
    case 90:
    case 100:
      break;
    case 80:
      limits.smem_per_sm_bytes = 167936;
      limits.smem_per_block_optin_bytes = 166912;
      break;
    case 86:
    case 89:
    case 120:
      limits.max_threads_per_sm = 1536;
      limits.max_blocks_per_sm = cc == 86 ? 16 : 24;
      limits.smem_per_sm_bytes = 102400;
      limits.smem_per_block_optin_bytes = 101376;
      limits.barriers_per_block_slot = 1;
      break;
    default:
      return make_error("no occupancy table for " + arch +
                        "; kiln knows sm_80, sm_86, sm_89, sm_90(a), sm_100(a) and sm_120");
  }
  return limits;
}

nlohmann::json Occupancy::to_json() const {
  nlohmann::json j = {{"blocks_per_sm", blocks_per_sm},
                      {"active_warps", active_warps},
                      {"max_warps", max_warps},
                      {"percent", percent},
                      {"limiter", limiter},
                      {"blocks_allowed_by",
                       {{"registers", by_registers},
                        {"shared_memory", by_shared_memory},
                        {"warps", by_warps},
                        {"blocks", by_blocks},
                        {"barriers", by_barriers}}},
                      {"smem_per_block_bytes", smem_per_block_bytes},
                      {"registers_per_block", registers_per_block}};
  if (!problem.empty()) j["problem"] = problem;
  return j;
}

Occupancy compute_occupancy(const KernelUsage& usage, const SmLimits& limits) {
  Occupancy out;
  out.max_warps = limits.max_warps_per_sm();
  const int64_t warps_per_block = divide_round_up(std::max(usage.block_size, 1), limits.warp_size);

  // Warps and blocks.
  out.by_warps = usage.block_size > limits.max_threads_per_block
                     ? 0
                     : static_cast<int>(out.max_warps / warps_per_block);
  out.by_blocks = limits.max_blocks_per_sm;

  // Registers: per warp, rounded to the allocation unit, in each of the sub-partitions.
  const int64_t regs_per_warp =
      round_up(int64_t{usage.registers} * limits.warp_size, limits.register_allocation_unit);
  out.registers_per_block = static_cast<int>(regs_per_warp * warps_per_block);
  const int64_t regs_checked =
      regs_per_warp * round_up(warps_per_block, limits.register_sub_partitions);
  if (usage.registers > limits.max_registers_per_thread ||
      regs_checked > limits.registers_per_block) {
    out.by_registers = 0;
  } else if (regs_per_warp == 0) {
    out.by_registers = INT_MAX;
  } else {
    const int64_t warps_per_partition =
        limits.registers_per_sm / limits.register_sub_partitions / regs_per_warp;
    out.by_registers =
        static_cast<int>(warps_per_partition * limits.register_sub_partitions / warps_per_block);
  }

  // Shared memory, with the driver's reserve, rounded to the allocation unit.
  const int64_t used = usage.static_smem_bytes + usage.dynamic_smem_bytes;
  out.smem_per_block_bytes =
      round_up(used + limits.smem_reserved_per_block_bytes, limits.smem_allocation_unit);
  const int64_t block_limit =
      (used > limits.smem_per_block_default_bytes ? limits.smem_per_block_optin_bytes
                                                  : limits.smem_per_block_default_bytes) +
      limits.smem_reserved_per_block_bytes;
  out.by_shared_memory =
      out.smem_per_block_bytes > block_limit
          ? 0
          : static_cast<int>(limits.smem_per_sm_bytes / out.smem_per_block_bytes);

  // Named barriers: each block slot of the SM holds barriers_per_block_slot sets.
  const int available = limits.max_blocks_per_sm * limits.barriers_per_block_slot;
  out.by_barriers = usage.barriers > 0 ? available / usage.barriers : INT_MAX;

  struct Limit {
    const char* name;
    int blocks;
  };
  // In order of what a kernel author can change first when two limits tie.
  const Limit limits_in_order[] = {{"registers", out.by_registers},
                                   {"shared_memory", out.by_shared_memory},
                                   {"warps", out.by_warps},
                                   {"blocks", out.by_blocks},
                                   {"barriers", out.by_barriers}};
  const Limit* tightest = &limits_in_order[0];
  for (const Limit& limit : limits_in_order) {
    if (limit.blocks < tightest->blocks) tightest = &limit;
  }
  out.blocks_per_sm = tightest->blocks;
  out.limiter = tightest->name;
  out.active_warps = static_cast<int>(out.blocks_per_sm * warps_per_block);
  out.percent = out.max_warps > 0 ? 100.0 * out.active_warps / out.max_warps : 0;

  if (out.blocks_per_sm == 0) {
    if (out.by_warps == 0) {
      out.problem = "a block of " + std::to_string(usage.block_size) + " threads is over the " +
                    std::to_string(limits.max_threads_per_block) +
                    "-thread limit; launch smaller blocks";
    } else if (out.by_registers == 0) {
      out.problem = std::to_string(usage.registers) + " registers x " +
                    std::to_string(usage.block_size) +
                    " threads do not fit in one SM's register file; use smaller blocks or "
                    "__launch_bounds__ / -maxrregcount to cap registers";
    } else if (out.by_shared_memory == 0) {
      out.problem = "the block needs " + kb_text(out.smem_per_block_bytes) +
                    " of shared memory with the 1 KB reserve, over the per-block limit of " +
                    kb_text(block_limit) + "; use less shared memory (fewer stages, smaller tiles)";
    }
  }
  return out;
}

}  // namespace kiln::compiler
