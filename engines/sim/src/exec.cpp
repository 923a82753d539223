#include "exec.h"

#include <sstream>

namespace kiln::sim {

namespace {

std::string hex(uint64_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}

const char* space_name(Space space) {
  switch (space) {
    case Space::Global:
      return "global";
    case Space::Shared:
      return "shared";
    case Space::Local:
      return "local";
    case Space::Const:
      return "const";
    case Space::Param:
      return "param";
    default:
      return "generic";
  }
}

}  // namespace

Dim3 Exec::thread_of(uint32_t lane) const {
  uint32_t linear = warp->index * 32 + lane;
  Dim3 t;
  t.x = linear % config.block.x;
  t.y = (linear / config.block.x) % config.block.y;
  t.z = linear / (config.block.x * config.block.y);
  return t;
}

void Exec::fault(const Inst& inst, uint32_t lane, const char* kind, uint64_t address,
                 std::string message) {
  event |= kEventFault;
  if (!faults.empty()) return;
  LaunchFault f;
  f.kind = kind;
  f.message = std::move(message);
  f.block = cta->id;
  f.thread = thread_of(lane);
  f.address = address;
  uint32_t pc = pc_of(inst);
  f.ptx_line = program->ptx_lines[pc];
  f.instruction = program->texts[pc];
  faults.push_back(std::move(f));
}

uint8_t* Exec::global_bytes(uint64_t address, uint32_t bytes, uint32_t lane, const Inst& inst) {
  if (address - cache_base <= cache_size && bytes <= cache_size - (address - cache_base)) {
    return cache_bytes + (address - cache_base);
  }
  const Allocation* a = global->find(address, bytes);
  if (a == nullptr) {
    fault(inst, lane, "out_of_bounds", address,
          "global access of " + global->describe_miss(address, bytes) +
              "; check the index arithmetic and the bounds guard of this access");
    return nullptr;
  }
  cache_base = a->base;
  cache_size = a->size;
  cache_bytes = a->bytes.get();
  return cache_bytes + (address - cache_base);
}

uint8_t* Exec::resolve(Space space, uint64_t address, uint32_t bytes, uint32_t align, uint32_t lane,
                       const Inst& inst) {
  if (align > 1 && (address & (align - 1)) != 0) {
    fault(inst, lane, "misaligned", address,
          std::string(space_name(space)) + " access of " + std::to_string(bytes) + " bytes at " +
              hex(address) + " is not " + std::to_string(align) +
              "-byte aligned; vector and wide accesses need addresses aligned to their size");
    return nullptr;
  }
  switch (space) {
    case Space::Global:
    case Space::Const:
      return global_bytes(address, bytes, lane, inst);
    case Space::Shared: {
      Cta* owner = shared_owner(address, lane, inst);
      if (owner == nullptr) return nullptr;
      if (address >= shared_bytes || bytes > shared_bytes - address) {
        fault(inst, lane, "out_of_bounds", address,
              "shared access of " + std::to_string(bytes) + " bytes at offset " +
                  std::to_string(address) + " is outside the CTA's " +
                  std::to_string(shared_bytes) +
                  " bytes of shared memory (static plus the launch's dynamic bytes); check the "
                  "index, or pass enough dynamic shared memory at launch");
        return nullptr;
      }
      return owner->shared.data() + address;
    }
    case Space::Local: {
      uint32_t size = program->local_bytes;
      if (address >= size || bytes > size - address) {
        fault(inst, lane, "out_of_bounds", address,
              "local access of " + std::to_string(bytes) + " bytes at offset " +
                  std::to_string(address) + " is outside the thread's " + std::to_string(size) +
                  " bytes of local memory; check the index into the local array");
        return nullptr;
      }
      return local_of(lane) + address;
    }
    case Space::Param:
      if (address >= param_bytes || bytes > param_bytes - address) {
        fault(inst, lane, "out_of_bounds", address,
              "param access of " + std::to_string(bytes) + " bytes at offset " +
                  std::to_string(address) + " is outside the " + std::to_string(param_bytes) +
                  "-byte parameter buffer");
        return nullptr;
      }
      return const_cast<uint8_t*>(params) + address;
    case Space::Generic:
    case Space::Count:
      break;
  }
  if (in_window(address, kSharedWindow)) {
    return resolve(Space::Shared, address - kSharedWindow, bytes, 1, lane, inst);
  }
  if (in_window(address, kLocalWindow)) {
    return resolve(Space::Local, address - kLocalWindow, bytes, 1, lane, inst);
  }
  if (in_window(address, kParamWindow)) {
    return resolve(Space::Param, address - kParamWindow, bytes, 1, lane, inst);
  }
  return global_bytes(address, bytes, lane, inst);
}

Cta* Exec::shared_owner(uint64_t& address, uint32_t lane, const Inst& inst) {
  uint64_t field = address >> kClusterRankShift;
  if (field == 0) return cta;
  if (field > cluster_ctas.size()) {
    fault(
        inst, lane, "out_of_bounds", address,
        "shared address " + hex(address) + " is outside the CTA's " + std::to_string(shared_bytes) +
            " bytes of shared memory (read as a "
            "shared::cluster address it names CTA rank " +
            std::to_string(field - 1) + ", but the cluster has " +
            std::to_string(cluster_ctas.size()) + "); check the index, or the rank passed to mapa");
    return nullptr;
  }
  address &= kSharedOffsetMask;
  return cluster_ctas[field - 1];
}

uint32_t Exec::shared_offset(Space space, uint64_t address, uint32_t bytes, uint32_t lane,
                             const Inst& inst, Cta** owner) {
  if (space == Space::Generic) {
    if (!in_window(address, kSharedWindow)) {
      fault(inst, lane, "out_of_bounds", address,
            "generic address " + hex(address) +
                " does not point into shared memory, but this instruction needs a shared "
                "address; convert with cvta.to.shared or use __cvta_generic_to_shared");
      return UINT32_MAX;
    }
    address -= kSharedWindow;
  }
  uint64_t original = address;
  Cta* target = shared_owner(address, lane, inst);
  if (target == nullptr) return UINT32_MAX;
  if (target != cta && owner == nullptr) {
    fault(inst, lane, "unsupported_instruction", original,
          "this instruction cannot reach another CTA's shared memory (address " + hex(original) +
              "); use ld/st.shared::cluster, or the CTA's own shared memory");
    return UINT32_MAX;
  }
  if (address >= shared_bytes || bytes > shared_bytes - address) {
    fault(inst, lane, "out_of_bounds", original,
          "shared access of " + std::to_string(bytes) + " bytes at offset " +
              std::to_string(address) + " is outside the CTA's " + std::to_string(shared_bytes) +
              " bytes of shared memory");
    return UINT32_MAX;
  }
  if (owner != nullptr) *owner = target;
  return static_cast<uint32_t>(address);
}

}  // namespace kiln::sim
