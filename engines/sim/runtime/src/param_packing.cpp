#include "param_packing.h"

#include <cstring>

namespace kiln::sim::runtime {

Result<std::vector<std::byte>> pack_params(const KernelInfo& kernel, void* const* args) {
  std::vector<std::byte> buffer(kernel.param_bytes);
  if (kernel.params.empty()) return buffer;
  if (args == nullptr)
    return make_error("launch of " + kernel.name + " passes no arguments, but it takes " +
                      std::to_string(kernel.params.size()) +
                      "; pass an array of pointers to each argument (void** args)");
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const ParamSlot& slot = kernel.params[i];
    if (uint64_t{slot.offset} + slot.size > buffer.size())
      return make_error("parameter " + slot.name + " of " + kernel.name + " (offset " +
                        std::to_string(slot.offset) + ", " + std::to_string(slot.size) +
                        " bytes) lies outside the " + std::to_string(buffer.size()) +
                        "-byte parameter buffer; the simulator's PTX layout is inconsistent");
    if (args[i] == nullptr)
      return make_error("argument " + std::to_string(i) + " (" + slot.name + ") of " + kernel.name +
                        " is a null pointer; args[i] must point to the value");
    std::memcpy(buffer.data() + slot.offset, args[i], slot.size);
  }
  return buffer;
}

}  // namespace kiln::sim::runtime
