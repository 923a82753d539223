// read_ptx_spec: PTX instruction forms (CCCL wrappers, PTX ISA and SM requirements)
// and kiln's PTX notes or ingested PTX ISA sections, by free text, opcode or section id.
#include <sstream>

#include "kiln/base/text.h"
#include "kiln/kb/closest_names.h"
#include "kiln/kb/kb_index.h"
#include "kiln/tools/tool_factories.h"
#include "line_window.h"

namespace kiln::tools {

using json = nlohmann::json;

namespace {

std::string one_line(std::string text, size_t max) {
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text.size() > max ? text.substr(0, max) + "…" : text;
}

json form_json(const kb::InstructionForm& form) {
  json out{{"opcode", form.opcode},       {"syntax", form.syntax}, {"ptx_isa", form.ptx_isa},
           {"sm", join(form.sms, ", ")},  {"min_sm", form.min_sm}, {"wrapper", form.wrapper},
           {"signature", form.signature}, {"header", form.header}};
  if (!form.modifiers.empty()) out["modifiers"] = form.modifiers;
  return out;
}

std::string form_text(const kb::InstructionForm& form) {
  std::string requirement = form.ptx_isa.empty() ? "" : "PTX ISA " + form.ptx_isa;
  if (!form.sms.empty()) requirement += (requirement.empty() ? "" : ", ") + join(form.sms, "/");
  std::string out = "- " + form.syntax + "  [" + requirement + "]\n";
  if (!form.modifiers.empty()) out += "    " + form.modifiers + "\n";
  if (!form.signature.empty()) out += "    cuda::ptx: " + one_line(form.signature, 220) + "\n";
  return out;
}

json section_json(const kb::PtxSectionHit& hit) {
  json out{
      {"id", hit.id}, {"kind", hit.kind}, {"title", hit.title}, {"instructions", hit.instructions}};
  if (!hit.requirements.empty()) out["requires"] = hit.requirements;
  if (!hit.subsections.empty()) out["sections"] = hit.subsections;
  if (!hit.snippet.empty()) out["snippet"] = hit.snippet;
  if (hit.score != 0) out["score"] = hit.score;
  out["why"] = hit.matched;
  return out;
}

std::string section_text(const kb::PtxSectionHit& hit) {
  std::string out = "- " + hit.id + " [" + hit.kind + "] " + hit.title;
  if (!hit.requirements.empty()) out += " (requires " + hit.requirements + ")";
  out += "\n";
  if (!hit.snippet.empty()) out += "    " + one_line(hit.snippet, 300) + "\n";
  if (!hit.subsections.empty())
    out += "    sections: " + one_line(join(hit.subsections, ", "), 400) + "\n";
  return out;
}

// A note or section's text, from line `offset` + 1, within the text budget.
mcp::ToolResult read_section(const kb::KbIndex& index, const std::string& id, int offset) {
  auto section = index.read_section(id);
  if (!section) {
    auto close = kb::closest_names(id, index.section_ids(), 6);
    return mcp::ToolResult::error(mcp::ErrorCode::kNotFound,
                                  "no PTX note or section `" + id + "`" +
                                      (close.empty() ? "" : "; close ids: " + join(close, ", ")) +
                                      "; find ids with read_ptx_spec {\"query\": \"...\"}");
  }
  LineWindow window = line_window(section->text, offset + 1, 0, kDefaultTextBudget);
  if (window.end_line < window.start_line && window.total_lines > 0)
    return mcp::ToolResult::error(mcp::ErrorCode::kInvalidArguments,
                                  "section `" + id + "` has " + std::to_string(window.total_lines) +
                                      " lines; offset must be below that");
  mcp::ToolResult result;
  json info{{"id", section->id},
            {"kind", section->kind},
            {"title", section->title},
            {"instructions", section->instructions}};
  if (!section->requirements.empty()) info["requires"] = section->requirements;
  if (!section->subsections.empty()) info["sections"] = section->subsections;
  result.structured = json{{"mode", "section"},
                           {"section", info},
                           {"uri", "kiln://ptx/" + section->id},
                           {"start_line", window.start_line},
                           {"end_line", window.end_line},
                           {"total_lines", window.total_lines},
                           {"truncated", window.truncated},
                           {"text", window.text}};
  std::ostringstream out;
  out << section->id << " [" << section->kind << "] " << section->title << " — lines "
      << window.start_line << "-" << window.end_line << " of " << window.total_lines << "\n";
  if (!section->instructions.empty())
    out << "instructions: " << join(section->instructions, ", ") << "\n";
  out << window.text;
  if (window.truncated) {
    result.structured["next_offset"] = window.end_line;
    out << "[more: read_ptx_spec {\"section\": \"" << id << "\", \"offset\": " << window.end_line
        << "}]\n";
  }
  result.text = out.str();
  return result;
}

}  // namespace

mcp::Tool make_read_ptx_spec_tool(std::shared_ptr<kb::KbService> kb) {
  mcp::Tool tool;
  tool.name = "read_ptx_spec";
  tool.title = "Read the PTX specification";
  tool.description =
      "PTX knowledge for writing inline asm or cuda::ptx calls: instruction forms from the CUDA "
      "toolkit's CCCL "
      "headers (exact syntax, required PTX ISA version and SM, the cuda::ptx wrapper signature), "
      "kiln's notes "
      "(semantics, pitfalls, examples) and, if ingested, the PTX ISA document. Give one of: "
      "`instruction` (opcode or "
      "prefix, e.g. \"mbarrier.try_wait\", \"cp.async.bulk.tensor\"), `query` (free text, e.g. "
      "\"mbarrier parity "
      "wait\"), or `section` (an id from a previous answer, e.g. \"mbarrier\" or "
      "\"mbarrier:pitfalls\") to read its "
      "text. `limit` (default 8, max 50) and `offset` page the forms and sections; for a section, "
      "`offset` is the "
      "line to continue from.";
  tool.input_schema = json{
      {"type", "object"},
      {"properties",
       {{"query", {{"type", "string"}, {"maxLength", 500}, {"description", "free text"}}},
        {"instruction",
         {{"type", "string"}, {"maxLength", 160}, {"description", "PTX opcode or opcode prefix"}}},
        {"section",
         {{"type", "string"}, {"maxLength", 200}, {"description", "note or section id to read"}}},
        {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 50}, {"default", 8}}},
        {"offset", {{"type", "integer"}, {"minimum", 0}, {"maximum", 1000000}, {"default", 0}}}}},
      {"additionalProperties", false}};
  json strings = {{"type", "array"}, {"items", {{"type", "string"}}}};
  tool.output_schema =
      json{{"type", "object"},
           {"properties",
            {{"mode", {{"type", "string"}, {"enum", {"query", "instruction", "section"}}}},
             {"query", {{"type", "string"}}},
             {"instruction", {{"type", "string"}}},
             {"matched_instruction", {{"type", "string"}}},
             {"terms", strings},
             {"forms", {{"type", "array"}, {"items", {{"type", "object"}}}}},
             {"total_forms", {{"type", "integer"}}},
             {"sections", {{"type", "array"}, {"items", {{"type", "object"}}}}},
             {"total_sections", {{"type", "integer"}}},
             {"offset", {{"type", "integer"}}},
             {"limit", {{"type", "integer"}}},
             {"next_offset", {{"type", "integer"}}},
             {"cccl_headers", {{"type", "string"}}},
             {"section", {{"type", "object"}}},
             {"uri", {{"type", "string"}}},
             {"start_line", {{"type", "integer"}}},
             {"end_line", {{"type", "integer"}}},
             {"total_lines", {{"type", "integer"}}},
             {"truncated", {{"type", "boolean"}}},
             {"text", {{"type", "string"}}}}},
           {"required", {"mode"}}};
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = true, .open_world = false};
  tool.handler = [kb](const json& arguments, mcp::CallContext&) {
    const std::string section = arguments.value("section", "");
    kb::PtxQuery query;
    query.text = arguments.value("query", "");
    query.instruction = arguments.value("instruction", "");
    query.limit = arguments.value("limit", 8);
    query.offset = arguments.value("offset", 0);
    const int given = !section.empty() + !query.text.empty() + !query.instruction.empty();
    if (given != 1) {
      return mcp::ToolResult::error(
          mcp::ErrorCode::kInvalidArguments,
          "give exactly one of `instruction` (e.g. \"mbarrier.try_wait\"), `query` (free text, "
          "e.g. \"tma tensor "
          "map swizzle\") or `section` (an id such as \"mbarrier\")");
    }
    auto index = kb->index();
    if (!index) return mcp::ToolResult::error(mcp::ErrorCode::kUnavailable, index.error().message);
    if (!section.empty()) return read_section(**index, section, query.offset);

    auto page = (*index)->search_ptx(query);
    const bool by_instruction = !query.instruction.empty();
    // By instruction the refusal is an opcode kiln does not know; by query, one without words.
    if (!page)
      return mcp::ToolResult::error(
          by_instruction ? mcp::ErrorCode::kNotFound : mcp::ErrorCode::kInvalidArguments,
          page.error().message);
    const bool cccl = (*index)->meta("cccl_found") == "1";
    const std::string cccl_dir = (*index)->meta("cccl_dir");
    mcp::ToolResult result;
    json forms = json::array();
    for (const auto& form : page->forms) forms.push_back(form_json(form));
    json sections = json::array();
    for (const auto& hit : page->sections) sections.push_back(section_json(hit));
    result.structured =
        json{{"mode", by_instruction ? "instruction" : "query"},
             {"forms", std::move(forms)},
             {"total_forms", page->total_forms},
             {"sections", std::move(sections)},
             {"total_sections", page->total_sections},
             {"offset", query.offset},
             {"limit", query.limit},
             {"cccl_headers", cccl ? "indexed from " + cccl_dir
                                   : "absent at " + cccl_dir + "; instruction forms not indexed"}};
    if (by_instruction) {
      result.structured["instruction"] = query.instruction;
      result.structured["matched_instruction"] = page->instruction;
    } else {
      result.structured["query"] = query.text;
      result.structured["terms"] = page->terms;
    }
    const int64_t next = query.offset + query.limit;
    if (next < std::max(page->total_forms, page->total_sections))
      result.structured["next_offset"] = next;

    std::ostringstream out;
    if (by_instruction) {
      out << "PTX `" << query.instruction << "`";
      if (page->instruction != query.instruction)
        out << " (nothing under that exact name; showing `" << page->instruction << "`)";
      out << "\n";
    } else {
      out << "PTX search \"" << query.text << "\"\n";
    }
    out << "instruction forms: " << page->total_forms;
    if (!page->forms.empty())
      out << " (showing " << query.offset + 1 << "-"
          << query.offset + static_cast<int>(page->forms.size()) << ")";
    out << (cccl ? "" : " — CCCL PTX headers absent at " + cccl_dir + ", so no forms are indexed")
        << "\n";
    for (const auto& form : page->forms) out << form_text(form);
    out << "notes and sections: " << page->total_sections << "\n";
    for (const auto& hit : page->sections) out << section_text(hit);
    if (result.structured.contains("next_offset")) out << "more: offset=" << next << "\n";
    if (!page->sections.empty())
      out << "read one: read_ptx_spec {\"section\": \"" << page->sections.front().id << "\"}\n";
    result.text = out.str();
    return result;
  };
  return tool;
}

}  // namespace kiln::tools
