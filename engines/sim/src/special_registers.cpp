// The values of special registers that are constant for a thread (%tid, %ctaid, %laneid,
// %lanemask_*, the cluster registers, ...): written into the warp's constant slots when it
// starts. %clock and %globaltimer are read by their own handler instead.
#include "special_registers.h"

#include <algorithm>

namespace kiln::sim {

namespace {

uint32_t component_of(const Dim3& d, char c) { return c == 'y' ? d.y : c == 'z' ? d.z : d.x; }

}  // namespace

void fill_constants(Exec& x, const Cta& cta, Warp& w, uint32_t multiprocessors) {
  using ptx::SpecialRegister;
  const LaunchConfig& c = x.config;
  x.warp = &w;
  for (const ConstantSlot& k : x.program->constants) {
    uint64_t* r = w.regs + static_cast<size_t>(k.slot) * 32;
    if (k.kind == ConstantSlot::Kind::Value) {
      std::fill(r, r + 32, k.value);
      continue;
    }
    for (uint32_t lane = 0; lane < 32; ++lane) {
      Dim3 t = x.thread_of(lane);
      uint64_t v = 0;
      switch (k.special) {
        case SpecialRegister::Tid:
          v = component_of(t, k.component);
          break;
        case SpecialRegister::Ntid:
          v = component_of(c.block, k.component);
          break;
        case SpecialRegister::Laneid:
          v = lane;
          break;
        case SpecialRegister::Warpid:
          v = w.index;
          break;
        case SpecialRegister::Nwarpid:
          v = cta.warps.size();
          break;
        case SpecialRegister::Ctaid:
          v = component_of(cta.id, k.component);
          break;
        case SpecialRegister::Nctaid:
          v = component_of(c.grid, k.component);
          break;
        case SpecialRegister::Smid: {
          uint64_t linear = cta.id.x + static_cast<uint64_t>(c.grid.x) *
                                           (cta.id.y + static_cast<uint64_t>(c.grid.y) * cta.id.z);
          v = linear % multiprocessors;
          break;
        }
        case SpecialRegister::Nsmid:
          v = multiprocessors;
          break;
        case SpecialRegister::LanemaskEq:
          v = 1u << lane;
          break;
        case SpecialRegister::LanemaskLe:
          v = lane == 31 ? 0xffffffffu : (2u << lane) - 1;
          break;
        case SpecialRegister::LanemaskLt:
          v = (1u << lane) - 1;
          break;
        case SpecialRegister::LanemaskGe:
          v = ~((1u << lane) - 1);
          break;
        case SpecialRegister::LanemaskGt:
          v = lane == 31 ? 0 : ~((2u << lane) - 1);
          break;
        case SpecialRegister::DynamicSmemSize:
          v = c.dynamic_shared_bytes;
          break;
        case SpecialRegister::TotalSmemSize:
        case SpecialRegister::AggrSmemSize:
          v = x.shared_bytes;
          break;
        case SpecialRegister::Clusterid:
          v = component_of(cta.id, k.component) / component_of(c.cluster, k.component);
          break;
        case SpecialRegister::Nclusterid:
          v = component_of(c.grid, k.component) / component_of(c.cluster, k.component);
          break;
        case SpecialRegister::ClusterCtaid:
          v = component_of(cta.id, k.component) % component_of(c.cluster, k.component);
          break;
        case SpecialRegister::ClusterNctaid:
          v = component_of(c.cluster, k.component);
          break;
        case SpecialRegister::ClusterCtarank:
          v = cta.rank;
          break;
        case SpecialRegister::ClusterNctarank:
          v = static_cast<uint64_t>(c.cluster.x) * c.cluster.y * c.cluster.z;
          break;
        case SpecialRegister::IsExplicitCluster:
          v = static_cast<uint64_t>(c.cluster.x) * c.cluster.y * c.cluster.z > 1 ? 1 : 0;
          break;
        default:
          v = 0;
          break;  // %gridid 0, reserved shared-memory offsets 0, %envreg 0
      }
      r[lane] = v;
    }
  }
}

}  // namespace kiln::sim
