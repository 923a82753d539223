// Device printf: nvcc lowers printf to call.uni (retval), vprintf, (format, arguments). A call
// to vprintf without a body in the module runs here instead of as a .func call: each active
// lane, in lane order, formats its call (printf_format.h) into the launch's printf text and
// gets vprintf's return value in its result .param variable.
#include <bit>
#include <cstring>

#include "decoder.h"
#include "exec.h"
#include "printf_format.h"

namespace kiln::sim {

void vprintf_handler(Exec& x, const Inst& in, uint32_t mask) {
  const CallSite& site = x.program->call_sites[in.target];
  for (uint32_t m = mask; m != 0; m &= m - 1) {
    uint32_t lane = static_cast<uint32_t>(std::countr_zero(m));
    uint8_t* local = x.local_of(lane);
    uint64_t format = 0, arguments = 0;
    std::memcpy(&format, local + site.argument_offsets[0], 8);
    std::memcpy(&arguments, local + site.argument_offsets[1], 8);
    PrintfReader read = [&](uint64_t address, void* out, uint32_t bytes) {
      const uint8_t* p = x.resolve(Space::Generic, address, bytes, 1, lane, in);
      if (p != nullptr) std::memcpy(out, p, bytes);
      return p != nullptr;
    };
    PrintfResult r = format_printf(format, arguments, read, x.printf_limit);
    if (!r.ok) return;  // a fault names the unreadable address
    if (x.printf_text.size() + r.text.size() <= x.printf_limit) {
      x.printf_text += r.text;
    } else {
      x.printf_dropped += r.text.size();
    }
    if (!site.result_offsets.empty()) std::memcpy(local + site.result_offsets[0], &r.value, 4);
  }
}

}  // namespace kiln::sim
