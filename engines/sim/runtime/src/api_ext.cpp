// kiln's own exports for the driver (kiln/sim/runtime_ext.h).
#include <mutex>
#include <string>

#include "kiln/sim/runtime_ext.h"
#include "runtime_state.h"

namespace rt = kiln::sim::runtime;

extern "C" {

const char* kiln_sim_last_faults(void) {
  thread_local std::string text;
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  text = state.last_faults.dump();
  return text.c_str();
}

const char* kiln_sim_report(void) {
  thread_local std::string text;
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  nlohmann::json report = {{"launches", state.launches},
                           {"last_faults", state.last_faults},
                           {"diagnostics", state.diagnostics},
                           {"printf_output", state.printf_output},
                           {"printf_dropped_bytes", state.printf_dropped_bytes}};
  // Kernels may printf any bytes; invalid UTF-8 becomes U+FFFD so the report stays JSON.
  text = report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return text.c_str();
}

void kiln_sim_clear_report(void) {
  auto& state = rt::RuntimeState::get();
  std::lock_guard lock(state.mutex);
  state.launches = nlohmann::json::array();
  state.last_faults = nlohmann::json::array();
  state.diagnostics.clear();
  state.printf_output.clear();
  state.printf_dropped_bytes = 0;
}

}  // extern "C"
