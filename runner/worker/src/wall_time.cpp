#include "kiln/worker/wall_time.h"

#include <cmath>

namespace kiln::worker {

namespace {

double rounded(double seconds) { return std::round(seconds * 1000.0) / 1000.0; }

}  // namespace

nlohmann::json WallTime::to_json() const {
  const double accounted = inputs_s + cpu_reference_s + gpu_reference_s + candidate_calls_s +
                           baseline_calls_s + output_checks_s;
  nlohmann::json j = {{"total_s", rounded(total_s)},
                      {"build_s", rounded(build_s)},
                      {"load_s", rounded(load_s)},
                      {"verify_s", rounded(verify_s)},
                      {"timing_s", rounded(timing_s)},
                      {"inputs_s", rounded(inputs_s)},
                      {"cpu_reference_s", rounded(cpu_reference_s)},
                      {"gpu_reference_s", rounded(gpu_reference_s)},
                      {"host_copies_s", rounded(host_copies_s)},
                      {"candidate_calls_s", rounded(candidate_calls_s)},
                      {"baseline_calls_s", rounded(baseline_calls_s)},
                      {"output_checks_s", rounded(output_checks_s)},
                      {"other_passes_s", rounded(std::max(0.0, verify_s + timing_s - accounted))},
                      {"gpu_busy_s", rounded(gpu_busy_s)},
                      {"calls", calls}};
  // Wall time per second of measured GPU work, past the build (what the 3x target is about).
  const double measured = total_s - build_s;
  j["wall_per_gpu_second"] = gpu_busy_s > 0
                                 ? nlohmann::json(std::round(measured / gpu_busy_s * 10.0) / 10.0)
                                 : nlohmann::json(nullptr);
  return j;
}

}  // namespace kiln::worker
