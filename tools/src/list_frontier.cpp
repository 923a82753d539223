// list_frontier: the run's frontier (members with their numbers, the best marked) and its
// recent benchmark results with each one's frontier decision, paged.
#include "frontier_view.h"
#include "kiln/tools/tool_factories.h"

namespace kiln::tools {

using json = nlohmann::json;

mcp::Tool make_list_frontier_tool(std::shared_ptr<FrontierSource> frontier) {
  mcp::Tool tool;
  tool.name = "list_frontier";
  tool.title = "The run's frontier and recent results";
  tool.description =
      "Show the frontier kiln keeps for this run: each member's name, approach, geomean (and "
      "revalidated geomean), per-workload speedups, result ids, when it was recorded and why, "
      "with the best marked; then the run's recent benchmark results (status, geomean, failing "
      "gate) with the frontier's decision on each, including why a candidate was refused. Paged "
      "with `limit`/`offset` over the recent results. Use it before choosing what to try next.";
  tool.input_schema = {{"type", "object"},
                       {"properties",
                        {{"limit",
                          {{"type", "integer"},
                           {"minimum", 1},
                           {"maximum", 50},
                           {"description", "recent results to show (default 10)"}}},
                         {"offset",
                          {{"type", "integer"},
                           {"minimum", 0},
                           {"description", "recent results to skip (default 0)"}}}}},
                       {"additionalProperties", false}};
  tool.output_schema = {{"type", "object"},
                        {"properties",
                         {{"task", {{"type", "object"}}},
                          {"budget", {{"type", "object"}}},
                          {"best", {{"type", "string"}}},
                          {"members", {{"type", "array"}}},
                          {"recent", {{"type", "array"}}},
                          {"offset", {{"type", "integer"}}},
                          {"next_offset", {{"type", "integer"}}}}},
                        {"required", {"members", "recent"}}};
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = true, .open_world = false};
  tool.handler = [frontier](const json& arguments, mcp::CallContext&) {
    auto listing = frontier_listing(*frontier, arguments.value("limit", size_t{10}),
                                    arguments.value("offset", size_t{0}), kFrontierListingBytes);
    if (!listing)
      return mcp::ToolResult::error(mcp::ErrorCode::kUnavailable, listing.error().message);
    mcp::ToolResult result;
    result.text = listing_text(*listing);
    result.structured = std::move(*listing);
    return result;
  };
  return tool;
}

}  // namespace kiln::tools
