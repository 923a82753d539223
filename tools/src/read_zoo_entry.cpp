// read_zoo_entry: one zoo entry's file (kernel.cu, NOTES.md or meta.json), by line range.
#include <sstream>

#include "kiln/kb/zoo_entry.h"
#include "kiln/tools/tool_factories.h"
#include "line_window.h"

namespace kiln::tools {

using json = nlohmann::json;

mcp::Tool make_read_zoo_entry_tool(std::shared_ptr<kb::KbService> kb) {
  mcp::Tool tool;
  tool.name = "read_zoo_entry";
  tool.title = "Read a zoo entry";
  tool.description =
      "One file of a kernel zoo entry: kernel.cu (default; the complete kernel on the kiln ABI), "
      "NOTES.md (what it "
      "teaches, key decisions, pitfalls) or meta.json (techniques, test shapes, measured numbers). "
      "Use it after "
      "search_zoo to study or adapt a kernel. Returns numbered lines; without a range it returns "
      "as many lines from "
      "start_line as fit in about 7.5 KB and says which start_line reads on. An unknown id "
      "suggests close ones. The "
      "same files are resources kiln://zoo/{id}/{file}.";
  tool.input_schema = json{
      {"type", "object"},
      {"properties",
       {{"id",
         {{"type", "string"},
          {"pattern", "^[A-Za-z0-9_.-]+$"},
          {"maxLength", 100},
          {"description", "entry id, e.g. gemm_wgmma_tma"}}},
        {"file", {{"type", "string"}, {"enum", kb::zoo_entry_files()}, {"default", "kernel.cu"}}},
        {"start_line", {{"type", "integer"}, {"minimum", 1}, {"default", 1}}},
        {"end_line",
         {{"type", "integer"},
          {"minimum", 1},
          {"description", "inclusive; default: as many lines as fit in ~7.5 KB"}}}}},
      {"required", {"id"}},
      {"additionalProperties", false}};
  tool.output_schema = json{
      {"type", "object"},
      {"properties",
       {{"id", {{"type", "string"}}},
        {"file", {{"type", "string"}}},
        {"uri", {{"type", "string"}}},
        {"start_line", {{"type", "integer"}}},
        {"end_line", {{"type", "integer"}}},
        {"total_lines", {{"type", "integer"}}},
        {"truncated", {{"type", "boolean"}}},
        {"next_start_line", {{"type", "integer"}}},
        {"text", {{"type", "string"}}},
        {"files", {{"type", "array"}, {"items", {{"type", "string"}}}}}}},
      {"required", {"id", "file", "start_line", "end_line", "total_lines", "truncated", "text"}}};
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = true, .open_world = false};
  tool.handler = [kb](const json& arguments, mcp::CallContext&) {
    const std::string id = arguments.value("id", "");
    const std::string file = arguments.value("file", "kernel.cu");
    const int start_line = arguments.value("start_line", 1);
    const int end_line = arguments.value("end_line", 0);
    if (end_line > 0 && end_line < start_line)
      return mcp::ToolResult::error(mcp::ErrorCode::kInvalidArguments,
                                    "end_line (" + std::to_string(end_line) +
                                        ") is before start_line (" + std::to_string(start_line) +
                                        "); give end_line >= start_line or leave it out");
    const auto zoo_dir = kb->paths().zoo_dir();
    auto text = kb::read_zoo_file(zoo_dir, id, file);
    if (!text) return mcp::ToolResult::error(mcp::ErrorCode::kNotFound, text.error().message);
    LineWindow window = line_window(*text, start_line, end_line,
                                    end_line > 0 ? kMaxTextBudget : kDefaultTextBudget);
    if (window.end_line < window.start_line && window.total_lines > 0) {
      return mcp::ToolResult::error(mcp::ErrorCode::kInvalidArguments,
                                    id + "/" + file + " has " + std::to_string(window.total_lines) +
                                        " lines; start_line must be at most that");
    }
    json files = json::array();
    for (const auto& name : kb::zoo_entry_files())
      if (std::filesystem::exists(zoo_dir / id / name)) files.push_back(name);

    mcp::ToolResult result;
    const std::string uri = "kiln://zoo/" + id + "/" + file;
    result.structured = json{{"id", id},
                             {"file", file},
                             {"uri", uri},
                             {"start_line", window.start_line},
                             {"end_line", window.end_line},
                             {"total_lines", window.total_lines},
                             {"truncated", window.truncated},
                             {"text", window.text},
                             {"files", files}};
    std::ostringstream out;
    out << "kb/zoo/" << id << "/" << file << " lines " << window.start_line << "-"
        << window.end_line << " of " << window.total_lines << "\n";
    out << numbered(window);
    if (window.truncated) {
      result.structured["next_start_line"] = window.end_line + 1;
      out << "[more: read_zoo_entry {\"id\": \"" << id << "\", \"file\": \"" << file
          << "\", \"start_line\": " << window.end_line + 1 << "}]\n";
    }
    result.text = out.str();
    return result;
  };
  return tool;
}

}  // namespace kiln::tools
