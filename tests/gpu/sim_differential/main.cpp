// kiln_sim_differential: runs each case on the GPU (CUDA driver API) and on the PTX
// simulator, compares the outputs (bit-exact, or within a ulp bound for .approx), prints one
// line per case and writes a JSON report to $KILN_DIFF_REPORT. --sim-only runs the simulator
// side alone (no GPU needed) and checks every case completes; with --pinned FILE it also checks
// each case against the H200's answers recorded there (pinned.h) by --record FILE on a GPU.
// --filter TEXT keeps the cases whose name contains TEXT. Exit 1 when a case disagrees or fails.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "harness.h"
#include "pinned.h"

using namespace kiln::simdiff;

namespace {

// CUDA errors after which the context is unusable (every later call returns them too).
bool context_killing(const std::string& error) {
  for (const char* e :
       {"CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_ILLEGAL_ADDRESS",
        "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_INVALID_ADDRESS_SPACE",
        "CUDA_ERROR_INVALID_PC", "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_HARDWARE_STACK_ERROR",
        "CUDA_ERROR_ASSERT", "CUDA_ERROR_LAUNCH_TIMEOUT", "CUDA_ERROR_TENSOR_MEMORY_LEAK"}) {
    if (error.find(e) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  bool sim_only = false;
  std::string filter, record_path, pinned_path;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--sim-only"))
      sim_only = true;
    else if (!std::strcmp(argv[i], "--filter") && i + 1 < argc)
      filter = argv[++i];
    else if (!std::strcmp(argv[i], "--record") && i + 1 < argc)
      record_path = argv[++i];
    else if (!std::strcmp(argv[i], "--pinned") && i + 1 < argc)
      pinned_path = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: %s [--sim-only [--pinned FILE]] [--record FILE] [--filter TEXT]\n",
                   argv[0]);
      return 2;
    }
  }
  if (!record_path.empty() && sim_only) {
    std::fprintf(stderr,
                 "--record needs the GPU: it keeps the GPU's answers, not the simulator's\n");
    return 2;
  }
  nlohmann::json pinned_cases;
  if (!pinned_path.empty()) {
    std::ifstream in(pinned_path);
    if (!in) {
      std::fprintf(stderr, "cannot read %s (record it on a GPU with --record)\n",
                   pinned_path.c_str());
      return 2;
    }
    pinned_cases = nlohmann::json::parse(in, nullptr, false).value("cases", nlohmann::json());
    if (!pinned_cases.is_object()) {
      std::fprintf(stderr, "%s holds no \"cases\" object\n", pinned_path.c_str());
      return 2;
    }
  }
  nlohmann::json recorded = nlohmann::json::object();
  std::vector<Case> cases;
  add_convert_cases(cases);
  add_math_cases(cases);
  add_warp_cases(cases);
  add_tensor_cases(cases);
  add_wgmma_cases(cases);

  std::unique_ptr<Backend> sim = make_sim_backend();
  std::unique_ptr<Backend> gpu;
  if (!sim_only) {
    std::string error;
    gpu = make_gpu_backend(&error);
    if (!gpu) {
      std::fprintf(stderr, "no GPU: %s (use --sim-only to run the simulator side alone)\n",
                   error.c_str());
      return 2;
    }
    std::printf("GPU: %s\n", gpu->name().c_str());
  }
  nlohmann::json report = {{"mode", sim_only ? "sim-only" : "differential"},
                           {"gpu", gpu ? gpu->name() : ""},
                           {"cases", nlohmann::json::array()}};
  int failed = 0, run = 0, unsupported = 0, skipped = 0;
  // A sticky CUDA error (an illegal instruction or address, a failed launch) kills the context:
  // every later call fails with it. That case reports the error; later cases are skipped.
  std::string gpu_dead;
  for (const Case& c : cases) {
    if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
    ++run;
    std::vector<uint64_t> sim_out, gpu_out;
    sim->reset();
    std::string sim_error = c.run(*sim, &sim_out);
    std::string gpu_error;
    if (gpu && !gpu_dead.empty()) {
      ++skipped;
      std::printf("case %s: SKIPPED on the GPU (the CUDA context died in case %s)\n",
                  c.name.c_str(), gpu_dead.c_str());
      report["cases"].push_back({{"name", c.name}, {"skipped", "context died in " + gpu_dead}});
      std::fflush(stdout);
      continue;
    }
    if (gpu) {
      gpu->reset();
      gpu_error = c.run(*gpu, &gpu_out);
      if (context_killing(gpu_error)) gpu_dead = c.name;
    }
    nlohmann::json j = {{"name", c.name}, {"exact", c.exact}};
    if (sim_error.rfind("unsupported_instruction", 0) == 0) {
      // A gap in the simulator, recorded (and listed) but not a disagreement.
      ++unsupported;
      j["unsupported"] = sim_error;
      j["passed"] = true;
      std::printf("case %s: UNSUPPORTED by the simulator%s%s\n", c.name.c_str(),
                  gpu_error.empty() ? "" : "; gpu: ", gpu_error.c_str());
    } else if (!sim_error.empty() || !gpu_error.empty()) {
      ++failed;
      if (!sim_error.empty()) j["sim_error"] = sim_error;
      if (!gpu_error.empty()) j["gpu_error"] = gpu_error;
      j["passed"] = false;
      std::printf("case %s: ERROR%s%s%s%s\n", c.name.c_str(),
                  sim_error.empty() ? "" : " sim: ", sim_error.c_str(),
                  gpu_error.empty() ? "" : " gpu: ", gpu_error.c_str());
    } else if (!gpu && !pinned_path.empty()) {
      j["values"] = sim_out.size();
      const std::string why = pinned_cases.contains(c.name)
                                  ? check_pinned(c, pinned_cases[c.name], sim_out)
                                  : "not pinned in " + pinned_path + " (record it on a GPU)";
      j["passed"] = why.empty();
      if (!why.empty()) {
        ++failed;
        j["pinned"] = why;
      }
      std::printf("case %s: %zu values, %s\n", c.name.c_str(), sim_out.size(),
                  why.empty() ? "agrees with the H200 (pinned)" : ("DISAGREES: " + why).c_str());
    } else if (!gpu) {
      j["values"] = sim_out.size();
      j["passed"] = true;
      std::printf("case %s: %zu values, simulator ran (no GPU comparison)\n", c.name.c_str(),
                  sim_out.size());
    } else {
      if (!record_path.empty()) recorded[c.name] = pin_case(c, gpu_out);
      CaseResult r = compare(c, gpu_out, sim_out);
      j["values"] = r.values;
      j["agree"] = r.agree;
      j["max_ulp"] = r.max_ulp;
      if (!c.exact) j["bound"] = {{"ulp", r.bound_ulp}, {"abs", r.bound_abs}};
      j["passed"] = r.passed;
      j["examples"] = r.examples;
      if (!r.passed) ++failed;
      std::printf("case %s: %zu values, bit-exact %zu/%zu, max ulp %g%s\n", c.name.c_str(),
                  r.values, r.agree, r.values, r.max_ulp,
                  r.passed  ? ""
                  : c.exact ? "  DISAGREES"
                            : "  OVER BOUND");
      for (const std::string& e : r.examples) std::printf("    %s\n", e.c_str());
    }
    report["cases"].push_back(j);
    std::fflush(stdout);
  }
  report["summary"] = {
      {"cases", run}, {"failed", failed}, {"unsupported", unsupported}, {"skipped", skipped}};
  std::printf("%d cases, %d failed, %d unsupported by the simulator", run, failed, unsupported);
  if (skipped) {
    std::printf(", %d skipped: the CUDA context died in case %s", skipped, gpu_dead.c_str());
  }
  std::printf("\n");
  if (!record_path.empty()) {
    std::ofstream(record_path) << nlohmann::json{{"gpu", gpu->name()},
                                                 {"about",
                                                  "the GPU's answers per case (pinned.h); "
                                                  "kiln_sim_differential --sim-only --pinned"},
                                                 {"cases", recorded}}
                                      .dump(1)
                               << "\n";
  }
  if (const char* path = std::getenv("KILN_DIFF_REPORT")) {
    std::ofstream(path) << report.dump(2) << "\n";
  }
  return failed || skipped ? 1 : 0;
}
