// search_zoo: ranked zoo entries for a query plus filters (op, technique, arch, dtype).
#include <algorithm>
#include <sstream>

#include "kiln/base/text.h"
#include "kiln/kb/kb_index.h"
#include "kiln/tools/tool_factories.h"

namespace kiln::tools {

using json = nlohmann::json;

namespace {

constexpr size_t kMeasuredShown = 3;

std::string number(const json& value) {
  if (!value.is_number()) return value.is_string() ? value.get<std::string>() : value.dump();
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", value.get<double>());
  return buffer;
}

// A measurement's field that says something: present and not null (a measurement without a
// baseline writes "baseline": null).
bool has(const json& m, const char* key) { return m.contains(key) && !m[key].is_null(); }

// The facts of a measurement an agent compares: no command lines.
json compact_measurement(const json& m) {
  json out = json::object();
  if (!m.is_object()) return out;
  for (const char* key :
       {"gpu", "date", "shape", "time_us", "tflops", "gbps", "baseline", "baseline_time_us"})
    if (has(m, key)) out[key] = m[key];
  return out;
}

std::string measurement_text(const json& m) {
  std::string out = has(m, "gpu") && m["gpu"].is_string() ? m["gpu"].get<std::string>() : "?";
  if (m.contains("shape") && m["shape"].is_object()) {
    // Dims in the order the op table writes them (JSON objects come back sorted).
    static const std::vector<std::string> kOrder = {"G", "B", "H", "T", "R", "M",
                                                    "N", "S", "C", "K", "D"};
    std::vector<std::string> dims;
    for (const auto& dim : kOrder)
      if (m["shape"].contains(dim)) dims.push_back(dim);
    for (const auto& [dim, size] : m["shape"].items())
      if (std::find(kOrder.begin(), kOrder.end(), dim) == kOrder.end()) dims.push_back(dim);
    std::string shape;
    for (const auto& dim : dims)
      shape += (shape.empty() ? "" : " ") + dim + "=" + number(m["shape"][dim]);
    out += " " + shape;
  }
  if (has(m, "time_us")) out += ": " + number(m["time_us"]) + " us";
  if (has(m, "tflops")) out += ", " + number(m["tflops"]) + " TFLOP/s";
  if (has(m, "gbps")) out += ", " + number(m["gbps"]) + " GB/s";
  if (has(m, "baseline_time_us")) {
    const std::string baseline = has(m, "baseline") && m["baseline"].is_string()
                                     ? m["baseline"].get<std::string>()
                                     : std::string("baseline");
    out += " (" + baseline + " " + number(m["baseline_time_us"]) + " us)";
  }
  return out;
}

json hit_json(const kb::ZooHit& hit) {
  json measured = json::array();
  for (size_t i = 0; i < hit.measured.size() && i < kMeasuredShown; ++i)
    measured.push_back(compact_measurement(hit.measured[i]));
  json fields = json::object();
  for (const auto& [field, terms] : hit.matched_fields) fields[field] = terms;
  return json{{"id", hit.id},
              {"title", hit.title},
              {"op", hit.op},
              {"techniques", hit.techniques},
              {"arch", hit.arch},
              {"dtypes", hit.dtypes},
              {"description", hit.description},
              {"measured", measured},
              {"measured_count", hit.measured.size()},
              {"snippet", hit.snippet},
              {"score", hit.score},
              {"why", {{"fields", fields}, {"filters", hit.matched_filters}}}};
}

std::string hit_text(size_t rank, const kb::ZooHit& hit) {
  std::ostringstream out;
  char score[32];
  std::snprintf(score, sizeof score, "%.2f", hit.score);
  out << rank << ". " << hit.id << " — " << hit.title
      << (hit.score != 0 ? " [score " + std::string(score) + "]" : "") << "\n";
  out << "   op " << hit.op << " | arch " << hit.arch << " | dtypes " << join(hit.dtypes, ",")
      << " | techniques " << join(hit.techniques, ", ") << "\n";
  if (hit.measured.empty()) {
    out << "   measured: not yet\n";
  } else {
    for (size_t i = 0; i < hit.measured.size() && i < 2; ++i)
      out << "   measured: " << measurement_text(hit.measured[i]) << "\n";
  }
  std::vector<std::string> why;
  for (const auto& [field, terms] : hit.matched_fields)
    why.push_back(field + "(" + join(terms, ",") + ")");
  for (const auto& filter : hit.matched_filters) why.push_back(filter);
  if (!why.empty()) out << "   matched: " << join(why, "; ") << "\n";
  std::string snippet = hit.snippet;
  for (char& c : snippet)
    if (c == '\n') c = ' ';
  if (snippet.size() > 320) snippet = snippet.substr(0, 320) + "…";
  if (!snippet.empty()) out << "   " << snippet << "\n";
  return out.str();
}

}  // namespace

mcp::Tool make_search_zoo_tool(std::shared_ptr<kb::KbService> kb) {
  mcp::Tool tool;
  tool.name = "search_zoo";
  tool.title = "Search the kernel zoo";
  tool.description =
      "Ranked entries of kiln's kernel zoo: working CUDA kernels on the kiln ABI (GEMM from naive "
      "to "
      "warp-specialized TMA/wgmma, reductions, softmax, norms, transpose, scan, top-k, attention), "
      "each with notes "
      "on what it teaches and measured H200 numbers. Use it before writing a kernel, to find a "
      "technique to copy "
      "(e.g. \"mbarrier pipeline\", \"bank conflict transpose\"). Free-text `query` (BM25 over "
      "titles, techniques, "
      "notes and code) and/or filters op, technique, arch, dtype; an unknown op or technique lists "
      "the valid ones. "
      "Returns id, title, techniques, measured numbers, a snippet and why it matched; `limit` "
      "(default 5, max 50) "
      "and `offset` page. Read an entry with read_zoo_entry.";
  tool.input_schema = json{
      {"type", "object"},
      {"properties",
       {{"query",
         {{"type", "string"},
          {"maxLength", 500},
          {"description", "free text; may be empty when a filter is given"}}},
        {"op",
         {{"type", "string"},
          {"maxLength", 64},
          {"description", "op name, e.g. gemm_tn, softmax, transpose"}}},
        {"technique",
         {{"type", "string"},
          {"maxLength", 64},
          {"description", "technique from kb/zoo/techniques.json, e.g. wgmma, tma, smem_swizzle"}}},
        {"arch",
         {{"type", "string"},
          {"maxLength", 16},
          {"description", "the entry's minimum arch: sm_80 or sm_90a"}}},
        {"dtype",
         {{"type", "string"},
          {"maxLength", 16},
          {"description", "a dtype the entry handles, e.g. f16, bf16, f32, e4m3"}}},
        {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 50}, {"default", 5}}},
        {"offset", {{"type", "integer"}, {"minimum", 0}, {"maximum", 100000}, {"default", 0}}}}},
      {"additionalProperties", false}};
  json strings = {{"type", "array"}, {"items", {{"type", "string"}}}};
  tool.output_schema =
      json{{"type", "object"},
           {"properties",
            {{"query", {{"type", "string"}}},
             {"terms", strings},
             {"filters", {{"type", "object"}}},
             {"total", {{"type", "integer"}}},
             {"offset", {{"type", "integer"}}},
             {"limit", {{"type", "integer"}}},
             {"next_offset", {{"type", "integer"}}},
             {"hits",
              {{"type", "array"},
               {"items",
                {{"type", "object"},
                 {"properties",
                  {{"id", {{"type", "string"}}},
                   {"title", {{"type", "string"}}},
                   {"op", {{"type", "string"}}},
                   {"techniques", strings},
                   {"arch", {{"type", "string"}}},
                   {"dtypes", strings},
                   {"description", {{"type", "string"}}},
                   {"measured", {{"type", "array"}, {"items", {{"type", "object"}}}}},
                   {"measured_count", {{"type", "integer"}}},
                   {"snippet", {{"type", "string"}}},
                   {"score", {{"type", "number"}}},
                   {"why", {{"type", "object"}}}}},
                 {"required",
                  {"id", "title", "op", "techniques", "arch", "dtypes", "measured", "snippet",
                   "score", "why"}}}}}}}},
           {"required", {"total", "offset", "limit", "hits"}}};
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = true, .open_world = false};
  tool.handler = [kb](const json& arguments, mcp::CallContext&) {
    kb::ZooQuery query;
    query.text = arguments.value("query", "");
    query.op = arguments.value("op", "");
    query.technique = arguments.value("technique", "");
    query.arch = arguments.value("arch", "");
    query.dtype = arguments.value("dtype", "");
    query.limit = arguments.value("limit", 5);
    query.offset = arguments.value("offset", 0);
    auto index = kb->index();
    if (!index) return mcp::ToolResult::error(mcp::ErrorCode::kUnavailable, index.error().message);
    auto page = (*index)->search_zoo(query);
    if (!page)
      return mcp::ToolResult::error(mcp::ErrorCode::kInvalidArguments, page.error().message);

    json filters = json::object();
    for (const auto& [key, value] :
         {std::pair{"op", query.op}, std::pair{"technique", query.technique},
          std::pair{"arch", query.arch}, std::pair{"dtype", query.dtype}})
      if (!value.empty()) filters[key] = value;
    mcp::ToolResult result;
    json hits = json::array();
    for (const auto& hit : page->hits) hits.push_back(hit_json(hit));
    result.structured =
        json{{"query", query.text},    {"terms", page->terms},   {"filters", filters},
             {"total", page->total},   {"offset", query.offset}, {"limit", query.limit},
             {"hits", std::move(hits)}};
    const int64_t shown_end = query.offset + static_cast<int64_t>(page->hits.size());
    if (shown_end < page->total) result.structured["next_offset"] = shown_end;

    std::ostringstream text;
    std::string filter_text;
    for (const auto& [key, value] : filters.items())
      filter_text += " " + key + "=" + value.get<std::string>();
    text << "search_zoo" << (query.text.empty() ? "" : " \"" + query.text + "\"") << filter_text
         << ": ";
    if (page->hits.empty()) {
      text << (page->total == 0 ? "no entries match" : "no entries at this offset") << " ("
           << page->total << " in all)";
      if (!query.arch.empty() || !query.dtype.empty()) {
        auto archs = (*index)->archs();
        auto dtypes = (*index)->dtypes();
        text << "; archs in the zoo: " << join(archs, ", ") << "; dtypes: " << join(dtypes, ", ");
      }
      text << "\n";
    } else {
      text << "entries " << query.offset + 1 << "-" << shown_end << " of " << page->total << "\n";
      for (size_t i = 0; i < page->hits.size(); ++i)
        text << hit_text(query.offset + i + 1, page->hits[i]);
    }
    if (shown_end < page->total) text << "more: offset=" << shown_end << "\n";
    if (!page->hits.empty())
      text << "read one: read_zoo_entry {\"id\": \"" << page->hits.front().id
           << "\"} (file: kernel.cu | NOTES.md | meta.json)\n";
    result.text = text.str();
    return result;
  };
  return tool;
}

}  // namespace kiln::tools
