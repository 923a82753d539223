// compile: nvcc for the task's arch on a candidate (a file in the run directory or the task
// bundles, or inline source): diagnostics with source lines, and per kernel its registers,
// spills, shared memory, occupancy (kb/hw) and static instruction mix. Cached by content.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>

#include "kiln/compiler/compile_candidate.h"
#include "kiln/tools/candidate_compiler.h"
#include "kiln/tools/task_source.h"
#include "kiln/tools/tool_factories.h"

namespace kiln::tools {

using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxDiagnostics = 20;
constexpr size_t kMaxKernels = 12;
constexpr size_t kMaxMixKeysInText = 14;

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, seconds < 0.1 ? "%.4f" : "%.2f", seconds);
  return text;
}

// A compile that did not run: the error, and `ok: false`.
mcp::ToolResult refusal(mcp::ErrorCode code, const std::string& message) {
  mcp::ToolResult result = mcp::ToolResult::error(code, message);
  result.structured["ok"] = false;
  return result;
}

// "kernel.cu does not compile for sm_90a: 2 error(s); first: kernel.cu:3:1: error: ..."
std::string failure_message(const compiler::CompileResult& result) {
  std::string message = result.file_name + " does not compile for " + result.arch + ": " +
                        std::to_string(result.errors()) + " error(s)";
  for (const auto& d : result.diagnostics)
    if (d.is_error()) return message + "; first: " + d.to_string();
  return message;
}

constexpr const char* kFixAndCompile =
    "fix the errors above (file:line:column), then compile again";

std::string block_size_text(const compiler::KernelReport& k) {
  if (k.block_size_source == "reqntid") return " from .reqntid";
  if (k.block_size_source == "launch_bounds") return " from __launch_bounds__";
  if (k.block_size_source == "argument") return " (block_size)";
  return " (default; pass block_size)";
}

std::string kernel_text(const compiler::KernelReport& k, const std::string& gpu) {
  std::ostringstream out;
  out << "kernel " << k.demangled << "\n  registers " << k.registers << " | spills "
      << k.spill_store_bytes << " B stored, " << k.spill_load_bytes << " B loaded | stack "
      << k.stack_bytes << " B | smem " << k.static_smem_bytes << " B static";
  if (k.dynamic_smem_bytes > 0) out << " + " << k.dynamic_smem_bytes << " B dynamic";
  out << " | barriers " << k.barriers;
  if (k.max_threads > 0)
    out << " | " << (k.required_threads ? "reqntid " : "max threads ") << k.max_threads;
  out << "\n";
  if (k.block_size > 0) {
    const compiler::Occupancy& o = k.occupancy;
    out << "  occupancy on " << gpu << ", block " << k.block_size << block_size_text(k) << ": "
        << o.blocks_per_sm << " blocks/SM, " << o.active_warps << "/" << o.max_warps << " warps ("
        << static_cast<int>(o.percent + 0.5) << "%), limited by " << o.limiter << "\n";
    if (!o.problem.empty()) out << "  cannot launch: " << o.problem << "\n";
  }
  if (k.has_instruction_mix) {
    std::vector<std::pair<int, std::string>> ranked;
    for (const auto& [key, count] : k.instruction_mix.counts) ranked.emplace_back(-count, key);
    std::sort(ranked.begin(), ranked.end());
    out << "  instruction mix (static, " << k.instruction_mix.total << " PTX instructions):";
    size_t shown = 0;
    for (const auto& [negative, key] : ranked) {
      if (++shown > kMaxMixKeysInText) {
        out << " ...";
        break;
      }
      out << " " << key << " " << -negative;
    }
    out << "\n";
  }
  return out.str();
}

mcp::ToolResult to_tool_result(const compiler::CompileResult& result, const std::string& gpu) {
  json diagnostics = json::array();
  for (size_t i = 0; i < result.diagnostics.size() && i < kMaxDiagnostics; ++i)
    diagnostics.push_back(result.diagnostics[i].to_json());
  json kernels = json::array();
  for (size_t i = 0; i < result.kernels.size() && i < kMaxKernels; ++i)
    kernels.push_back(result.kernels[i].to_json());
  mcp::ToolResult out;
  out.structured = {{"ok", result.ok},
                    {"cache_hit", result.cache_hit},
                    {"seconds", result.seconds},
                    {"nvcc_seconds", result.nvcc_seconds},
                    {"file", result.file_name},
                    {"arch", result.arch},
                    {"occupancy_gpu", gpu},
                    {"errors", result.errors()},
                    {"warnings", result.warnings()},
                    {"diagnostics", diagnostics},
                    {"kernels", kernels},
                    {"kernels_total", result.kernels.size()},
                    {"notes", result.notes},
                    {"ptx_path", result.ptx_path.string()},
                    {"key", result.key}};

  std::ostringstream text;
  text << "compile " << result.file_name << " for " << result.arch << ": "
       << (result.ok ? "ok" : "FAILED") << " (" << (result.cache_hit ? "cache hit, " : "")
       << seconds_text(result.seconds) << " s) - " << result.errors() << " error(s), "
       << result.warnings() << " warning(s)\n";
  for (size_t i = 0; i < result.diagnostics.size() && i < kMaxDiagnostics; ++i)
    text << result.diagnostics[i].to_string() << "\n";
  if (result.diagnostics.size() > kMaxDiagnostics)
    text << "... " << result.diagnostics.size() - kMaxDiagnostics << " more diagnostics\n";
  for (size_t i = 0; i < result.kernels.size() && i < kMaxKernels; ++i)
    text << kernel_text(result.kernels[i], gpu);
  if (result.kernels.size() > kMaxKernels)
    text << "... " << result.kernels.size() - kMaxKernels << " more kernels\n";
  for (const auto& note : result.notes) text << "note: " << note << "\n";
  if (!result.ptx_path.empty()) text << "PTX: " << result.ptx_path.string() << "\n";
  if (!result.ok) {
    text << failure_message(result) << "\nnext: " << kFixAndCompile << "\n";
    out.fail(mcp::ErrorCode::kCompileError, failure_message(result), kFixAndCompile);
  } else {
    text << "next: simulate checks results on the CPU; benchmark times it on the GPU\n";
  }
  out.text = text.str();
  return out;
}

json input_schema() {
  json schema{
      {"type", "object"},
      {"properties",
       {{"task",
         {{"type", "string"},
          {"pattern", kTaskNamePattern},
          {"description", "task name; default: this run's task"}}},
        {"arch",
         {{"type", "string"},
          {"pattern", "^sm_[0-9]+[af]?$"},
          {"description", "nvcc architecture, e.g. sm_90a; default: the task's"}}},
        {"block_size",
         {{"type", "integer"},
          {"minimum", 1},
          {"maximum", 1024},
          {"description",
           "threads per block for the occupancy estimate; default: __launch_bounds__, else 256"}}},
        {"dynamic_smem_bytes",
         {{"type", "integer"},
          {"minimum", 0},
          {"description", "dynamic shared memory per block for the occupancy estimate"}}},
        {"defines",
         {{"type", "array"},
          {"items", {{"type", "string"}}},
          {"description", "macros: NAME or NAME=VALUE"}}},
        {"flags",
         {{"type", "array"},
          {"items", {{"type", "string"}}},
          {"description",
           "extra nvcc flags, only: -DNAME[=VALUE], -maxrregcount=N, --use_fast_math, "
           "-Xptxas -O0..3"}}}}},
      {"additionalProperties", false}};
  add_candidate_properties(schema, LegacyPath::kAccepted);
  return schema;
}

// The compile of a resolved candidate: every refusal after the candidate is known.
mcp::ToolResult compile_resolved(CandidateCompiler& compiler, const json& arguments,
                                 const Candidate& candidate) {
  // The request's and the compiler's refusals are about what the call asked for: the task,
  // arch, flags and block size (or, rarely, a toolchain that is not there: the message says).
  auto request = compiler.request(arguments, candidate);
  if (!request) return refusal(mcp::ErrorCode::kInvalidArguments, request.error().message);
  auto result = compiler::compile_candidate(*request);
  if (!result) return refusal(mcp::ErrorCode::kInvalidArguments, result.error().message);
  return to_tool_result(*result, request->sm_limits ? request->sm_limits->source : "none");
}

json output_schema() {
  return json{{"type", "object"},
              {"properties",
               {{"ok", {{"type", "boolean"}}},
                {"cache_hit", {{"type", "boolean"}}},
                {"seconds", {{"type", "number"}}},
                {"nvcc_seconds", {{"type", "number"}}},
                {"file", {{"type", "string"}}},
                {"arch", {{"type", "string"}}},
                {"occupancy_gpu", {{"type", "string"}}},
                {"errors", {{"type", "integer"}}},
                {"warnings", {{"type", "integer"}}},
                {"diagnostics", {{"type", "array"}, {"items", {{"type", "object"}}}}},
                {"kernels", {{"type", "array"}, {"items", {{"type", "object"}}}}},
                {"kernels_total", {{"type", "integer"}}},
                {"notes", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                {"ptx_path", {{"type", "string"}}},
                {"key", {{"type", "string"}}}}},
              {"required", {"ok"}}};
}

}  // namespace

mcp::Tool make_compile_tool(std::shared_ptr<CandidateCompiler> compiler) {
  mcp::Tool tool;
  tool.name = "compile";
  tool.title = "Compile a candidate with nvcc";
  tool.description =
      "Compile a candidate kernel.cu with nvcc (-O3 -lineinfo) for the task's arch, without a "
      "GPU. Returns compiler diagnostics as file:line:column with the source line, and per "
      "kernel: registers, spills, stack, static/dynamic shared memory, theoretical occupancy "
      "on the task's GPU (blocks/SM, warps, limiting resource) and a static PTX instruction mix "
      "(tensor-core ops, global/shared loads and stores by width, barriers, async copies). Use "
      "it after every edit, before simulate or benchmark: it takes about a second, and an "
      "unchanged source is answered from a cache at once. Pass `candidate` (a kernel.cu "
      "path) or `source` (the code).";
  tool.input_schema = input_schema();
  tool.output_schema = output_schema();
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = true, .open_world = false};
  tool.handler = [compiler](const json& arguments, mcp::CallContext&) {
    auto candidate = compiler->candidate(arguments);
    if (!candidate) return refusal(mcp::ErrorCode::kInvalidArguments, candidate.error().message);
    return with_candidate_note(compile_resolved(*compiler, arguments, *candidate), *candidate);
  };
  return tool;
}

}  // namespace kiln::tools
