// Measures the knowledge base inside one process:
//   - index build time (cold, into a fresh cache folder), a few times
//   - first use by a fresh KbService when a fresh index exists (open + staleness check)
//   - search_zoo and read_ptx_spec latency through the tool layer (arguments validated,
//     JSON and text built) over a few hundred queries: p50, p90, p99, max
// Usage: kiln_bench_kb_search [queries=300] [builds=3] [kb_dir]
// Prints one JSON object; the numbers go into the issue notes, never into tests.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "kiln/kb/kb_service.h"
#include "kiln/mcp/tool_registry.h"
#include "kiln/tools/tool_factories.h"

using json = nlohmann::json;
using kiln::bench::Clock;
using kiln::bench::ms_since;
using kiln::bench::percentiles;
namespace fs = std::filesystem;

namespace {

// Queries an agent would send: topics, techniques, opcodes, hostile syntax, filters.
std::vector<json> zoo_queries(size_t count) {
  const std::vector<std::string> texts = {"warp specialized persistent gemm",
                                          "bank conflict transpose",
                                          "tma multistage pipeline",
                                          "wgmma descriptor",
                                          "online softmax",
                                          "rmsnorm bf16 vectorized",
                                          "layernorm welford",
                                          "reduction warp shuffle",
                                          "split k atomics",
                                          "stream k tile scheduler",
                                          "cp.async ldmatrix mma.sync",
                                          "flash attention causal",
                                          "top k selection",
                                          "prefix scan",
                                          "swizzle shared memory",
                                          "register blocking",
                                          "fp8 e4m3 scaling",
                                          "mbarrier parity",
                                          "epilogue fusion",
                                          "grouped gemm",
                                          "silu mul elementwise",
                                          "grid stride loop",
                                          "double buffering",
                                          "setmaxnreg producer consumer",
                                          "how do I avoid bank conflicts",
                                          "\"tma* NEAR( -x :y",
                                          "coalesced global loads float4",
                                          "cluster multicast",
                                          "L2 rasterization swizzle",
                                          "persistent kernel",
                                          "naive gemm"};
  const std::vector<json> filters = {json::object(),
                                     {{"op", "gemm_tn"}},
                                     {{"technique", "tma"}},
                                     {{"arch", "sm_80"}},
                                     {{"dtype", "f16"}}};
  std::vector<json> out;
  std::mt19937 random(42);
  for (size_t i = 0; i < count; ++i) {
    json q = filters[random() % filters.size()];
    q["query"] = texts[random() % texts.size()];
    if (random() % 4 == 0) q["limit"] = 10;
    out.push_back(q);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t queries = argc > 1 ? std::stoul(argv[1]) : 300;
  const int builds = argc > 2 ? std::stoi(argv[2]) : 3;
  const fs::path cache = fs::temp_directory_path() / ("kiln_bench_kb_" + std::to_string(getpid()));
  kiln::kb::KbPaths paths =
      kiln::kb::resolve_paths(argc > 3 ? fs::path(argv[3]) : fs::path(), cache);
  json out{{"kb_dir", paths.kb_dir.string()}, {"cccl_dir", paths.cccl_dir.string()}};

  // Cold builds.
  std::vector<double> build_ms;
  json counts;
  for (int i = 0; i < builds; ++i) {
    fs::remove_all(cache);
    auto start = Clock::now();
    auto report = kiln::kb::build_index(paths, paths.index_path());
    build_ms.push_back(ms_since(start));
    if (!report) {
      std::cerr << report.error().message << "\n";
      return 1;
    }
    counts = report->to_json();
  }
  out["build"] = {{"runs_ms", build_ms},
                  {"zoo_entries", counts["zoo_entries"]},
                  {"ptx_forms", counts["ptx_forms"]},
                  {"ptx_notes", counts["ptx_notes"]},
                  {"note_sections", counts["note_sections"]},
                  {"index_bytes", fs::file_size(paths.index_path())}};

  // First use with a fresh index on disk: fingerprint, content hash, open.
  std::vector<double> first_use_ms;
  for (int i = 0; i < 5; ++i) {
    kiln::kb::KbService service(paths);
    auto start = Clock::now();
    if (!service.index()) return 1;
    first_use_ms.push_back(ms_since(start));
  }
  out["first_use_fresh_index"] = percentiles(first_use_ms);

  auto kb = std::make_shared<kiln::kb::KbService>(paths);
  kiln::mcp::ToolRegistry tools;
  if (!tools.add(kiln::tools::make_search_zoo_tool(kb)) ||
      !tools.add(kiln::tools::make_read_ptx_spec_tool(kb)))
    return 1;
  auto context = kiln::mcp::CallContext::detached();
  tools.run("search_zoo", {{"query", "warm up"}}, context);

  std::vector<double> zoo_ms;
  size_t errors = 0, bytes = 0;
  for (const auto& q : zoo_queries(queries)) {
    auto start = Clock::now();
    auto result = tools.run("search_zoo", q, context);
    zoo_ms.push_back(ms_since(start));
    errors += result.is_error;
    bytes = std::max(bytes, result.text.size());
  }
  out["search_zoo"] = percentiles(zoo_ms);
  out["search_zoo"]["errors"] = errors;
  out["search_zoo"]["max_text_bytes"] = bytes;

  const std::vector<json> ptx = {
      {{"query", "mbarrier parity wait"}},    {{"instruction", "cp.async.bulk.tensor"}},
      {{"instruction", "mbarrier.try_wait"}}, {{"query", "tma tensor map swizzle"}},
      {{"query", "fence proxy async"}},       {{"instruction", "ld"}}};
  std::vector<double> ptx_ms;
  errors = 0;
  bytes = 0;
  for (size_t i = 0; i < queries; ++i) {
    auto start = Clock::now();
    auto result = tools.run("read_ptx_spec", ptx[i % ptx.size()], context);
    ptx_ms.push_back(ms_since(start));
    errors += result.is_error;
    bytes = std::max(bytes, result.text.size());
  }
  out["read_ptx_spec"] = percentiles(ptx_ms);
  out["read_ptx_spec"]["errors"] = errors;
  out["read_ptx_spec"]["max_text_bytes"] = bytes;

  fs::remove_all(cache);
  std::cout << out.dump(2) << "\n";
  return 0;
}
