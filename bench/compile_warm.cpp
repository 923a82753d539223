// Measures the compile tool through the tool layer (arguments validated, cache looked up,
// occupancy estimated, JSON and text built), as `kiln mcp` runs it:
//   - cold: the first compile of each kernel into a fresh cache folder (nvcc runs)
//   - warm: the same calls again, answered from the cache (nvcc skipped): p50, p90, p99, max
// Usage: kiln_bench_compile_warm [calls=200] [tasks_dir] [kernel.cu...]
// (default kernels: every task's starter.cu). Prints one JSON object; the numbers go into
// bench/RESULTS.md, never into tests.
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "kiln/mcp/server.h"
#include "kiln/tools/toolbox.h"

using json = nlohmann::json;
using kiln::bench::Clock;
using kiln::bench::ms_since;
using kiln::bench::percentiles;
namespace fs = std::filesystem;

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 200;
  const fs::path tasks_dir = argc > 2 ? fs::path(argv[2]) : fs::path(KILN_BENCH_TASKS_DIR);
  std::vector<std::string> kernels;
  for (int i = 3; i < argc; ++i) kernels.push_back(fs::absolute(argv[i]).string());
  if (kernels.empty()) {
    for (const auto& entry : fs::directory_iterator(tasks_dir))
      if (fs::exists(entry.path() / "starter.cu"))
        kernels.push_back((entry.path() / "starter.cu").string());
    std::sort(kernels.begin(), kernels.end());
  }
  std::string cache_pattern = (fs::temp_directory_path() / "kiln-bench-compile-XXXXXX").string();
  if (mkdtemp(cache_pattern.data()) == nullptr) return 1;

  kiln::mcp::Server server{kiln::mcp::ServerInfo{}};
  kiln::tools::ToolboxConfig config;
  config.tasks_dir = tasks_dir;
  config.default_task = "fp16_gemm";  // as `kiln mcp` defaults; its arch is sm_90a
  config.run_dir = fs::current_path();
  config.compile_cache_dir = cache_pattern;
  config.probe_local_gpu = false;
  if (auto status = kiln::tools::register_toolbox(server, config); !status) {
    std::cerr << status.error().message << "\n";
    return 1;
  }
  auto call = [&](const std::string& path) {
    auto context = kiln::mcp::CallContext::detached();
    return server.tools().run("compile", json{{"path", path}}, context);
  };

  std::vector<double> cold, warm;
  for (const auto& kernel : kernels) {
    const auto start = Clock::now();
    auto result = call(kernel);
    cold.push_back(ms_since(start));
    if (result.is_error || result.structured.value("cache_hit", true)) {
      std::cerr << "cold compile of " << kernel << " failed or hit the cache:\n"
                << result.text << "\n";
      return 1;
    }
  }
  for (int i = 0; i < calls; ++i) {
    const std::string& kernel = kernels[static_cast<size_t>(i) % kernels.size()];
    const auto start = Clock::now();
    auto result = call(kernel);
    warm.push_back(ms_since(start));
    if (!result.structured.value("cache_hit", false)) {
      std::cerr << "warm call missed the cache for " << kernel << "\n";
      return 1;
    }
  }
  std::error_code ignored;
  fs::remove_all(cache_pattern, ignored);
  std::cout << json{{"kernels", kernels}, {"cold", percentiles(cold)}, {"warm", percentiles(warm)}}
                   .dump(2)
            << "\n";
  return 0;
}
