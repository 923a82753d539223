#include "kiln/ptx/special_register.h"

#include <array>

namespace kiln::ptx {
namespace {

struct SpecialInfo {
  std::string_view name;
  SpecialRegister reg;
  ThreadVariance variance;
};

constexpr std::array<SpecialInfo, 37> kSpecials = {{
    {"%tid", SpecialRegister::Tid, ThreadVariance::PerThread},
    {"%ntid", SpecialRegister::Ntid, ThreadVariance::Uniform},
    {"%laneid", SpecialRegister::Laneid, ThreadVariance::PerThread},
    {"%warpid", SpecialRegister::Warpid, ThreadVariance::PerWarp},
    {"%nwarpid", SpecialRegister::Nwarpid, ThreadVariance::Uniform},
    {"%ctaid", SpecialRegister::Ctaid, ThreadVariance::Uniform},
    {"%nctaid", SpecialRegister::Nctaid, ThreadVariance::Uniform},
    {"%smid", SpecialRegister::Smid, ThreadVariance::Uniform},
    {"%nsmid", SpecialRegister::Nsmid, ThreadVariance::Uniform},
    {"%gridid", SpecialRegister::Gridid, ThreadVariance::Uniform},
    {"%lanemask_eq", SpecialRegister::LanemaskEq, ThreadVariance::PerThread},
    {"%lanemask_le", SpecialRegister::LanemaskLe, ThreadVariance::PerThread},
    {"%lanemask_lt", SpecialRegister::LanemaskLt, ThreadVariance::PerThread},
    {"%lanemask_ge", SpecialRegister::LanemaskGe, ThreadVariance::PerThread},
    {"%lanemask_gt", SpecialRegister::LanemaskGt, ThreadVariance::PerThread},
    {"%clock", SpecialRegister::Clock, ThreadVariance::PerThread},
    {"%clock_hi", SpecialRegister::ClockHi, ThreadVariance::PerThread},
    {"%clock64", SpecialRegister::Clock64, ThreadVariance::PerThread},
    {"%globaltimer", SpecialRegister::Globaltimer, ThreadVariance::PerThread},
    {"%globaltimer_lo", SpecialRegister::GlobaltimerLo, ThreadVariance::PerThread},
    {"%globaltimer_hi", SpecialRegister::GlobaltimerHi, ThreadVariance::PerThread},
    {"%reserved_smem_offset_begin", SpecialRegister::ReservedSmemOffsetBegin,
     ThreadVariance::Uniform},
    {"%reserved_smem_offset_end", SpecialRegister::ReservedSmemOffsetEnd, ThreadVariance::Uniform},
    {"%reserved_smem_offset_cap", SpecialRegister::ReservedSmemOffsetCap, ThreadVariance::Uniform},
    {"%reserved_smem_offset_2", SpecialRegister::ReservedSmemOffset2, ThreadVariance::Uniform},
    {"%total_smem_size", SpecialRegister::TotalSmemSize, ThreadVariance::Uniform},
    {"%aggr_smem_size", SpecialRegister::AggrSmemSize, ThreadVariance::Uniform},
    {"%dynamic_smem_size", SpecialRegister::DynamicSmemSize, ThreadVariance::Uniform},
    {"%current_graph_exec", SpecialRegister::CurrentGraphExec, ThreadVariance::Uniform},
    {"%is_explicit_cluster", SpecialRegister::IsExplicitCluster, ThreadVariance::Uniform},
    {"%clusterid", SpecialRegister::Clusterid, ThreadVariance::Uniform},
    {"%nclusterid", SpecialRegister::Nclusterid, ThreadVariance::Uniform},
    {"%cluster_ctaid", SpecialRegister::ClusterCtaid, ThreadVariance::Uniform},
    {"%cluster_nctaid", SpecialRegister::ClusterNctaid, ThreadVariance::Uniform},
    {"%cluster_ctarank", SpecialRegister::ClusterCtarank, ThreadVariance::Uniform},
    {"%cluster_nctarank", SpecialRegister::ClusterNctarank, ThreadVariance::Uniform},
    {"%envreg", SpecialRegister::Envreg, ThreadVariance::Uniform},
}};

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

std::optional<SpecialRegister> special_register_from_name(std::string_view name) {
  for (const SpecialInfo& info : kSpecials) {
    if (info.name == name && info.reg != SpecialRegister::Envreg) return info.reg;
  }
  // Numbered families: %envreg0..31, %pm0..7, %pm0_64..%pm7_64.
  if (name.starts_with("%envreg") && all_digits(name.substr(7))) return SpecialRegister::Envreg;
  if (name.starts_with("%pm")) {
    std::string_view rest = name.substr(3);
    if (all_digits(rest)) return SpecialRegister::Pm;
    if (rest.size() > 3 && rest.ends_with("_64") && all_digits(rest.substr(0, rest.size() - 3))) {
      return SpecialRegister::Pm64;
    }
  }
  return std::nullopt;
}

ThreadVariance special_register_variance(SpecialRegister reg) {
  if (reg == SpecialRegister::Pm || reg == SpecialRegister::Pm64) return ThreadVariance::PerThread;
  for (const SpecialInfo& info : kSpecials) {
    if (info.reg == reg) return info.variance;
  }
  return ThreadVariance::PerThread;
}

}  // namespace kiln::ptx
