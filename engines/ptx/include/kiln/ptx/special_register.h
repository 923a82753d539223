// PTX special registers (%tid, %laneid, %ctaid, ...) and how they vary between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::ptx {

enum class SpecialRegister : uint8_t {
  Tid,
  Ntid,
  Laneid,
  Warpid,
  Nwarpid,
  Ctaid,
  Nctaid,
  Smid,
  Nsmid,
  Gridid,
  LanemaskEq,
  LanemaskLe,
  LanemaskLt,
  LanemaskGe,
  LanemaskGt,
  Clock,
  ClockHi,
  Clock64,
  Pm,
  Pm64,
  Envreg,
  Globaltimer,
  GlobaltimerLo,
  GlobaltimerHi,
  ReservedSmemOffsetBegin,
  ReservedSmemOffsetEnd,
  ReservedSmemOffsetCap,
  ReservedSmemOffset2,
  TotalSmemSize,
  AggrSmemSize,
  DynamicSmemSize,
  CurrentGraphExec,
  IsExplicitCluster,
  Clusterid,
  Nclusterid,
  ClusterCtaid,
  ClusterNctaid,
  ClusterCtarank,
  ClusterNctarank,
};

// How a special register's value differs between the threads of one CTA.
enum class ThreadVariance : uint8_t {
  Uniform,    // the same in every thread of the CTA (%ctaid, %ntid, %nctaid, %cluster_*)
  PerWarp,    // the same within a warp, different across warps (%warpid)
  PerThread,  // may differ between threads of a warp (%tid, %laneid, %lanemask_*, %clock)
};

// "%tid" (no component) -> Tid. Numbered families (%pm3, %envreg12) map to their family.
std::optional<SpecialRegister> special_register_from_name(std::string_view name);
ThreadVariance special_register_variance(SpecialRegister reg);

}  // namespace kiln::ptx
