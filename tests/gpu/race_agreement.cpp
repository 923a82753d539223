// kiln_race_agreement: the racecheck corpus (tests/corpus/race/manifest.json) under
// compute-sanitizer's racecheck on a real GPU, beside what kiln's simulator engine is required
// to find there, for the agreement the racecheck issue asks for (precision and recall).
//
//   kiln_race_agreement --manifest M --cubins DIR [--sanitizer PATH] [--out FILE.json]
//       runs every case in a child process under `compute-sanitizer --tool racecheck` and
//       writes one JSON report: per case the sanitizer's hazards (errors, warnings) and the
//       manifest's expected findings (which kiln_racecheck_tests holds the simulator to, in
//       CI), then the counts.
//   kiln_race_agreement --launch INDEX --manifest M --cubins DIR
//       the child: launches case INDEX once (zero-filled buffers, then the ints), as the
//       simulator test does, and synchronizes.
//
// DIR holds STEM.cubin for every STEM.cu of the corpus (sm_90a; CMake builds them into
// BUILD/tests/gpu/race_cubins). Only the driver API is used, so the binary needs libcuda.so.1.
#include <cuda.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "kiln/base/process.h"

namespace {

using nlohmann::json;

struct Options {
  std::string manifest, cubins, sanitizer = "compute-sanitizer", out;
  std::optional<size_t> launch;
};

int usage() {
  std::cerr << "usage: kiln_race_agreement --manifest tests/corpus/race/manifest.json "
               "--cubins DIR [--sanitizer PATH] [--out FILE.json]\n"
               "       kiln_race_agreement --launch INDEX --manifest M --cubins DIR\n";
  return 2;
}

std::optional<json> read_manifest(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "kiln_race_agreement: cannot read " << path << "\n";
    return std::nullopt;
  }
  json manifest = json::parse(in, nullptr, false);
  if (manifest.is_discarded() || !manifest.contains("cases") || !manifest["cases"].is_array()) {
    std::cerr << "kiln_race_agreement: " << path << " is not a corpus manifest (no \"cases\")\n";
    return std::nullopt;
  }
  return manifest;
}

std::string stem(const std::string& file) { return file.substr(0, file.rfind('.')); }

bool cuda_ok(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return true;
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  std::cerr << "kiln_race_agreement: " << what << " failed: " << (name ? name : "?") << "\n";
  return false;
}

// The child: one launch of one case.
int launch_case(const json& c, const std::string& cubins) {
  CUdevice device;
  CUcontext context;
  CUmodule module;
  CUfunction function;
  const std::string path = cubins + "/" + stem(c.at("file").get<std::string>()) + ".cubin";
  if (!cuda_ok(cuInit(0), "cuInit") || !cuda_ok(cuDeviceGet(&device, 0), "cuDeviceGet") ||
      !cuda_ok(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain") ||
      !cuda_ok(cuCtxSetCurrent(context), "cuCtxSetCurrent") ||
      !cuda_ok(cuModuleLoad(&module, path.c_str()), ("cuModuleLoad " + path).c_str()) ||
      !cuda_ok(cuModuleGetFunction(&function, module, c.at("kernel").get<std::string>().c_str()),
               "cuModuleGetFunction"))
    return 1;
  std::vector<CUdeviceptr> buffers;
  for (const json& bytes : c.at("buffers")) {
    CUdeviceptr p = 0;
    if (!cuda_ok(cuMemAlloc(&p, bytes.get<size_t>()), "cuMemAlloc") ||
        !cuda_ok(cuMemsetD8(p, 0, bytes.get<size_t>()), "cuMemsetD8"))
      return 1;
    buffers.push_back(p);
  }
  std::vector<int32_t> ints = c.value("ints", std::vector<int32_t>{});
  std::vector<void*> params;
  for (CUdeviceptr& p : buffers) params.push_back(&p);
  for (int32_t& i : ints) params.push_back(&i);
  const json& g = c.at("grid");
  const json& b = c.at("block");
  if (!cuda_ok(cuLaunchKernel(function, g[0], g[1], g[2], b[0], b[1], b[2], 0, nullptr,
                              params.data(), nullptr),
               "cuLaunchKernel") ||
      !cuda_ok(cuCtxSynchronize(), "cuCtxSynchronize"))
    return 1;
  std::cout << "launched " << c.at("kernel").get<std::string>() << "\n";
  return 0;
}

struct SanitizerRun {
  bool summary = false;  // the racecheck summary line was printed
  int hazards = 0, errors = 0, warnings = 0;
  bool launched = false;
  std::string exit, tail;
};

std::string describe(const kiln::ProcessExit& exit) {
  switch (exit.how) {
    case kiln::ProcessExit::How::kExited:
      return "exit " + std::to_string(exit.exit_code);
    case kiln::ProcessExit::How::kSignaled:
      return "killed by " + kiln::signal_name(exit.signal);
    case kiln::ProcessExit::How::kTimedOut:
      return "timed out after 120 s";
    case kiln::ProcessExit::How::kSpawnFailed:
      return exit.spawn_error;
    default:
      return "stopped";
  }
}

SanitizerRun sanitize(const Options& options, size_t index) {
  kiln::ProcessSpec spec;
  spec.argv = {
      options.sanitizer, "--tool",      "racecheck",           "--print-limit", "20",
      "/proc/self/exe",  "--launch",    std::to_string(index), "--manifest",    options.manifest,
      "--cubins",        options.cubins};
  // compute-sanitizer resolves /proc/self/exe as its own path; name this binary instead.
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) spec.argv[5] = std::string(self, static_cast<size_t>(n));
  spec.search_path = true;
  spec.merge_stderr = true;
  std::string output;
  kiln::ProcessOutput out;
  out.on_stdout = [&](std::string_view chunk) {
    output += chunk;
    return true;
  };
  kiln::ProcessLimits limits;
  limits.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  const kiln::ProcessExit exit = kiln::run_supervised(spec, limits, out);
  SanitizerRun run;
  run.exit = describe(exit);
  static const std::regex summary(
      R"(RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\))");
  std::smatch m;
  if (std::regex_search(output, m, summary)) {
    run.summary = true;
    run.hazards = std::stoi(m[1]);
    run.errors = std::stoi(m[2]);
    run.warnings = std::stoi(m[3]);
  }
  run.launched = output.find("launched ") != std::string::npos;
  run.tail = output.size() > 4000 ? output.substr(output.size() - 4000) : output;
  return run;
}

int agreement(const Options& options, const json& manifest) {
  json cases = json::array();
  int bug_shared = 0, bug_shared_seen = 0, sanitizer_errors_on_fixed = 0, sanitizer_seen = 0,
      sanitizer_seen_kiln_too = 0, not_run = 0;
  const json& all = manifest["cases"];
  for (size_t i = 0; i < all.size(); ++i) {
    const json& c = all[i];
    bool kiln_shared = false;
    for (const json& e : c.at("expect"))
      kiln_shared = kiln_shared || e.value("space", "") == "shared";
    const bool bug = !c.at("expect").empty();
    std::cerr << "[" << i + 1 << "/" << all.size() << "] " << c.at("kernel").get<std::string>()
              << "\n";
    const SanitizerRun run = sanitize(options, i);
    const bool ran = run.summary && run.launched;
    if (!ran) ++not_run;
    const bool sanitizer_race = ran && run.errors > 0;
    if (bug && kiln_shared) {
      ++bug_shared;
      if (sanitizer_race) ++bug_shared_seen;
    }
    if (!bug && sanitizer_race) ++sanitizer_errors_on_fixed;
    if (sanitizer_race) {
      ++sanitizer_seen;
      if (kiln_shared) ++sanitizer_seen_kiln_too;
    }
    json entry = {{"file", c.at("file")},
                  {"kernel", c.at("kernel")},
                  {"bug", bug},
                  {"kiln_expect", c.at("expect")},
                  {"sanitizer",
                   {{"ran", ran},
                    {"hazards", run.hazards},
                    {"errors", run.errors},
                    {"warnings", run.warnings},
                    {"exit", run.exit}}}};
    if (!ran) entry["sanitizer"]["output_tail"] = run.tail;
    cases.push_back(entry);
  }
  json report = {{"cases", cases},
                 {"summary",
                  {{"cases", all.size()},
                   {"not_run", not_run},
                   {"bug_kernels_with_a_shared_race", bug_shared},
                   {"of_those_sanitizer_reports", bug_shared_seen},
                   {"kernels_sanitizer_flags", sanitizer_seen},
                   {"of_those_kiln_flags_in_shared_memory", sanitizer_seen_kiln_too},
                   {"sanitizer_errors_on_fixed_kernels", sanitizer_errors_on_fixed}}}};
  const std::string text = report.dump(1);
  if (options.out.empty()) {
    std::cout << text << "\n";
  } else {
    std::ofstream(options.out) << text << "\n";
    std::cout << report["summary"].dump(1) << "\n";
  }
  return not_run == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--manifest" && has_value) {
      options.manifest = argv[++i];
    } else if (arg == "--cubins" && has_value) {
      options.cubins = argv[++i];
    } else if (arg == "--sanitizer" && has_value) {
      options.sanitizer = argv[++i];
    } else if (arg == "--out" && has_value) {
      options.out = argv[++i];
    } else if (arg == "--launch" && has_value) {
      char* end = nullptr;
      options.launch = std::strtoul(argv[++i], &end, 10);
      if (end == argv[i] || *end != '\0') return usage();
    } else {
      return usage();
    }
  }
  if (options.manifest.empty() || options.cubins.empty()) return usage();
  const auto manifest = read_manifest(options.manifest);
  if (!manifest) return 1;
  if (options.launch) {
    if (*options.launch >= (*manifest)["cases"].size()) {
      std::cerr << "kiln_race_agreement: no case " << *options.launch << "\n";
      return 2;
    }
    return launch_case((*manifest)["cases"][*options.launch], options.cubins);
  }
  return agreement(options, *manifest);
}
