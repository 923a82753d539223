// record_candidate: put a benchmarked candidate on the run's frontier, by result id. The
// numbers are the stored RESULT's, never the agent's; the rules are frontier_policy.h's.
#include <cstdio>

#include "frontier_view.h"
#include "kiln/tools/tool_factories.h"

namespace kiln::tools {

using json = nlohmann::json;

namespace {

std::string times(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3fx", value);
  return text;
}

}  // namespace

mcp::Tool make_record_candidate_tool(std::shared_ptr<FrontierSource> frontier) {
  mcp::Tool tool;
  tool.name = "record_candidate";
  tool.title = "Put a benchmarked candidate on the frontier";
  tool.description =
      "Keep a candidate: pass the result_id of a full benchmark (every workload passed, every "
      "gate checked) from this run. kiln reads the numbers from its stored result, never from "
      "you. Refused: unknown ids, other tasks' results, subsets, failed gates, the same source or "
      "PTX as a member, or not beating the member it would replace by the run's margin. A new "
      "best is benchmarked again first (minutes) and must reproduce its speedup. `approach` is "
      "the technique family from the zoo's vocabulary, then free text (\"cp_async+"
      "multistage_pipeline: 4 stages\"); the frontier keeps the best overall and the best of "
      "each approach. Accepted candidates are copied to candidates/TASK/frontier/NAME/ in the "
      "worktree and committed. list_frontier shows the frontier and why candidates were refused.";
  tool.input_schema = {
      {"type", "object"},
      {"properties",
       {{"result_id",
         {{"type", "string"},
          {"pattern", "^r-[0-9a-f]{16}$"},
          {"description", "the result_id a full benchmark returned"}}},
        {"name",
         {{"type", "string"},
          {"pattern", "^[a-z0-9][a-z0-9_-]{0,63}$"},
          {"description", "a new name for the member (its folder name)"}}},
        {"approach",
         {{"type", "string"},
          {"maxLength", 300},
          {"description",
           "techniques from the zoo's vocabulary joined by '+', then ': ' and free "
           "text"}}},
        {"hypothesis",
         {{"type", "string"}, {"maxLength", 2000}, {"description", "why this should be faster"}}},
        {"reason",
         {{"type", "string"}, {"maxLength", 2000}, {"description", "why it is worth keeping"}}}}},
      {"required", {"result_id", "name", "approach", "hypothesis", "reason"}},
      {"additionalProperties", false}};
  tool.output_schema = {
      {"type", "object"},
      {"properties",
       {{"accepted", {{"type", "boolean"}}},
        {"verdict",
         {{"type", "string"}, {"enum", {"refused", "accepted_best", "accepted_approach"}}}},
        {"reason", {{"type", "string"}}},
        {"name", {{"type", "string"}}},
        {"result_id", {{"type", "string"}}},
        {"revalidation_id", {{"type", "string"}}},
        {"decision_id", {{"type", "integer"}}},
        {"numbers", {{"type", "object"}}},
        {"member", {{"type", "object"}}},
        {"retired", {{"type", "array"}, {"items", {{"type", "string"}}}}},
        {"path", {{"type", "string"}}},
        {"commit", {{"type", "string"}}},
        {"commit_error", {{"type", "string"}}},
        {"notes", {{"type", "array"}, {"items", {{"type", "string"}}}}}}},
      {"required", {"accepted", "verdict", "reason"}}};
  tool.annotations = {
      .read_only = false, .destructive = false, .idempotent = false, .open_world = true};
  tool.handler = [frontier](const json& arguments, mcp::CallContext& context) {
    auto run = frontier->get();
    if (!run) return mcp::ToolResult::error(mcp::ErrorCode::kUnavailable, run.error().message);
    frontier::RecordRequest request{arguments.value("result_id", ""), arguments.value("name", ""),
                                    arguments.value("approach", ""),
                                    arguments.value("hypothesis", ""),
                                    arguments.value("reason", "")};
    auto revalidator = frontier->revalidator((*run)->task(), context);
    auto outcome = (*run)->record(request, *revalidator, frontier->ptx());
    // An error here is the store or the revalidation job failing, never a decision: a refusal
    // comes back as an outcome.
    if (!outcome)
      return mcp::ToolResult::error(mcp::ErrorCode::kUnavailable, outcome.error().message);
    // Every decision, accepted or refused, is part of kiln://frontier (frontier_resource.cpp):
    // tell the sessions that subscribed to it.
    context.resource_changed("kiln://frontier");
    const auto& d = outcome->decision;
    mcp::ToolResult result;
    json& out = result.structured;
    out = {{"accepted", outcome->accepted()},
           {"verdict", d.verdict},
           {"reason", d.reason},
           {"name", d.name},
           {"result_id", d.result_id},
           {"revalidation_id", d.revalidation_id},
           {"decision_id", d.id},
           {"numbers", d.numbers.is_object() ? d.numbers : json::object()},
           {"retired", outcome->retired},
           {"notes", outcome->notes}};
    std::string text;
    if (!outcome->accepted()) {
      text = "refused: " + d.reason + "\n";
    } else {
      const auto& m = *outcome->member;
      out["member"] = member_json(m);
      text = "accepted `" + m.name + "` as " +
             (m.best ? std::string("the best") : "the best of approach " + m.family) + ": " +
             times(m.score.geomean) + " geomean, " + std::to_string(m.score.passed) + "/" +
             std::to_string(m.score.total) + " passed, result " + m.result_id +
             (m.revalidation_id.empty() ? ""
                                        : ", revalidated " + m.revalidation_id + " at " +
                                              times(m.revalidated_geomean.value_or(0))) +
             "\n" + d.reason + "\n";
      for (const auto& name : outcome->retired) text += "retired from the frontier: " + name + "\n";
      if (!outcome->candidate_dir.empty()) {
        out["path"] = outcome->candidate_dir.string();
        text += "copied to " + outcome->candidate_dir.string() + "\n";
      }
      if (!outcome->commit_id.empty()) {
        out["commit"] = outcome->commit_id;
        text += "committed " + outcome->commit_id.substr(0, 12) + " in the worktree\n";
      }
      if (!outcome->commit_error.empty()) {
        out["commit_error"] = outcome->commit_error;
        text += "the entry is on the frontier, but not committed: " + outcome->commit_error + "\n";
      }
    }
    for (const auto& note : outcome->notes) text += "note: " + note + "\n";
    result.text = text;
    if (!outcome->accepted()) result.fail(mcp::ErrorCode::kRefused, d.reason);
    return result;
  };
  return tool;
}

}  // namespace kiln::tools
