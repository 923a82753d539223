// Scores search_zoo on a query set: every query through the tool as an MCP client calls it,
// then each miss and the top-1/top-3 accuracy (and a JSON line with the same).
// Usage: kiln_bench_zoo_search_quality [queries.json] [kb_dir]
//   (defaults: the kb folder's zoo/search_queries.json; the kb folder kiln finds itself)
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "kiln/kb/kb_service.h"
#include "kiln/kb/search_quality.h"
#include "kiln/mcp/tool_registry.h"
#include "kiln/tools/tool_factories.h"

using json = nlohmann::json;
namespace fs = std::filesystem;

int main(int argc, char** argv) {
  const fs::path cache =
      fs::temp_directory_path() / ("kiln_bench_zoo_quality_" + std::to_string(getpid()));
  kiln::kb::KbPaths paths =
      kiln::kb::resolve_paths(argc > 2 ? fs::path(argv[2]) : fs::path(), cache, cache / "no_cccl");
  const fs::path set = argc > 1 ? fs::path(argv[1]) : paths.zoo_dir() / "search_queries.json";
  auto cases = kiln::kb::load_search_cases(set);
  if (!cases) {
    std::cerr << cases.error().message << "\n";
    return 1;
  }
  auto kb = std::make_shared<kiln::kb::KbService>(paths);
  kiln::mcp::ToolRegistry tools;
  if (!tools.add(kiln::tools::make_search_zoo_tool(kb))) return 1;
  auto context = kiln::mcp::CallContext::detached();
  size_t errors = 0;
  const auto quality = kiln::kb::score_search(*cases, [&](const std::string& query) {
    auto result = tools.run("search_zoo", {{"query", query}, {"limit", 3}}, context);
    errors += result.is_error;
    std::vector<std::string> ids;
    for (const auto& hit : result.structured.value("hits", json::array()))
      ids.push_back(hit["id"].get<std::string>());
    return ids;
  });
  fs::remove_all(cache);
  std::cout << quality.report();
  json out = quality.to_json();
  out.erase("misses");
  out["query_set"] = set.string();
  out["errors"] = errors;
  std::cout << out.dump() << "\n";
  return errors == 0 ? 0 : 1;
}
