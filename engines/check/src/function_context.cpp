#include "function_context.h"

#include <algorithm>

#include "kiln/ptx/printer.h"

namespace kiln::check {

const ptx::SourcePosition* user_position(const ptx::SourcePosition& position) {
  if (!is_system_header(position.file)) return &position;
  for (const ptx::SourcePosition& site : position.inlined_at) {
    if (!is_system_header(site.file)) return &site;
  }
  return &position;
}

FunctionContext::FunctionContext(const ptx::Module& module, const ptx::Function& function,
                                 const ptx::SourceMap& source_map,
                                 const ptx::FunctionAnalysis& analysis, CheckReport& report,
                                 const ptx::UniformityOptions& uniformity_options)
    : module_(module),
      function_(function),
      source_map_(source_map),
      analysis_(analysis),
      report_(report),
      uniformity_options_(uniformity_options) {}

FunctionContext::~FunctionContext() = default;

const ptx::UniformityAnalysis& FunctionContext::uniform_load_uniformity() const {
  if (!uniform_load_uniformity_) {
    ptx::UniformityOptions options = uniformity_options_;
    options.loads_from_uniform_addresses_uniform = true;
    uniform_load_uniformity_ =
        std::make_unique<ptx::UniformityAnalysis>(ptx::UniformityAnalysis::compute(
            function_, analysis_.cfg, analysis_.post_dominators, options));
  }
  return *uniform_load_uniformity_;
}

namespace {

using BlockSet = std::vector<uint64_t>;  // one bit per block

bool has(const BlockSet& set, ptx::BlockId b) { return (set[b / 64] >> (b % 64)) & 1; }

// Per block, the blocks that post-dominate it, where paths into a block that only traps do not
// count: a trap ends the whole launch with an error, so it is no divergence (the grid
// barrier's check for a cooperative launch traps), and the code after such a check is not
// decided by the branches that decide whether the check runs. A block whose every path traps
// (or never ends) keeps the full set.
std::vector<BlockSet> post_dominators_ignoring_traps(const ptx::Function& function,
                                                     const ptx::ControlFlowGraph& cfg) {
  const uint32_t n = cfg.size();
  const size_t words = (n + 63) / 64;
  std::vector<BlockSet> pd(n, BlockSet(words, ~uint64_t{0}));
  pd[cfg.exit()].assign(words, 0);
  pd[cfg.exit()][cfg.exit() / 64] |= uint64_t{1} << (cfg.exit() % 64);
  const std::vector<ptx::BlockId>& rpo = cfg.reverse_post_order();
  bool changed = true;
  while (changed) {
    changed = false;
    for (auto it = rpo.rbegin(); it != rpo.rend(); ++it) {
      const ptx::BlockId b = *it;
      if (b == cfg.exit()) continue;
      const ptx::InstructionId term = cfg.terminator(b);
      if (term != ptx::kNone && function.instructions[term].opcode == ptx::Opcode::Trap &&
          !function.instructions[term].guard) {
        continue;  // only traps: stays the full set
      }
      BlockSet next(words, ~uint64_t{0});
      for (ptx::BlockId s : cfg.block(b).successors) {
        for (size_t w = 0; w < words; ++w) next[w] &= pd[s][w];
      }
      next[b / 64] |= uint64_t{1} << (b % 64);
      if (next != pd[b]) {
        pd[b] = std::move(next);
        changed = true;
      }
    }
  }
  return pd;
}

}  // namespace

const std::vector<std::vector<ptx::BlockId>>& FunctionContext::control_dependences() const {
  if (!control_dependences_.empty() || analysis_.cfg.size() == 0) return control_dependences_;
  const ptx::ControlFlowGraph& cfg = analysis_.cfg;
  const std::vector<BlockSet> pd = post_dominators_ignoring_traps(function_, cfg);
  control_dependences_.assign(cfg.size(), {});
  const BlockSet full(pd.empty() ? 0 : pd[0].size(), ~uint64_t{0});
  for (ptx::BlockId branch = 0; branch < cfg.size(); ++branch) {
    const auto& successors = cfg.block(branch).successors;
    if (!cfg.reachable(branch) || successors.size() < 2) continue;
    // x depends on the branch when x post-dominates one side but not the branch itself.
    for (ptx::BlockId s : successors) {
      if (pd[s] == full) continue;  // the side that traps
      for (ptx::BlockId x = 0; x < cfg.size(); ++x) {
        if (!has(pd[s], x) || (x != branch && has(pd[branch], x))) continue;
        auto& deps = control_dependences_[x];
        if (std::find(deps.begin(), deps.end(), branch) == deps.end()) deps.push_back(branch);
      }
    }
  }
  return control_dependences_;
}

std::vector<ptx::BlockId> FunctionContext::controlling_branches(ptx::BlockId block) const {
  const auto& dependences = control_dependences();
  std::vector<ptx::BlockId> result;
  std::vector<ptx::BlockId> work = {block};
  std::set<ptx::BlockId> seen;  // `block` too may control itself (a loop's latch)
  while (!work.empty()) {
    const ptx::BlockId b = work.back();
    work.pop_back();
    for (ptx::BlockId branch : dependences[b]) {
      if (!seen.insert(branch).second) continue;
      result.push_back(branch);
      work.push_back(branch);
    }
  }
  std::sort(result.begin(), result.end());
  return result;
}

std::string FunctionContext::text(ptx::InstructionId id) const {
  return ptx::print_instruction(function_, function_.instructions[id]);
}

std::string FunctionContext::where(ptx::InstructionId id) const {
  const uint32_t line = function_.instructions[id].location.line;
  if (auto position = source_map_.at_ptx_line(line)) {
    const ptx::SourcePosition* chosen = user_position(*position);
    if (chosen->line != 0) {
      const std::string& file = chosen->file;
      const size_t slash = file.find_last_of('/');
      return (slash == std::string::npos ? file : file.substr(slash + 1)) + ":" +
             std::to_string(chosen->line);
    }
  }
  return "PTX line " + std::to_string(line);
}

bool is_system_header(std::string_view path) {
  static constexpr std::string_view kPrefixes[] = {"/usr/local/cuda", "/usr/include", "/usr/lib",
                                                   "/opt/nvidia"};
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [&](std::string_view prefix) { return path.starts_with(prefix); }) ||
         path.find("/cuda/include/") != std::string_view::npos ||
         path.find("/targets/x86_64-linux/include/") != std::string_view::npos;
}

void FunctionContext::report(FindingKind kind, Severity severity, ptx::InstructionId at,
                             std::string message, std::string fix_hint, std::string cause) {
  if (!reported_.insert({kind, at}).second) return;
  const ptx::Instruction& inst = function_.instructions[at];
  Finding f;
  f.severity = severity;
  f.kind = kind;
  f.function = function_.name;
  f.ptx_line = inst.location.line;
  f.instruction = text(at);
  f.message = std::move(message);
  f.fix_hint = std::move(fix_hint);
  f.cause = std::move(cause);
  if (auto position = source_map_.at_ptx_line(inst.location.line)) {
    // The innermost position outside toolkit headers: the user's line that called the
    // intrinsic, not the intrinsic's definition.
    const ptx::SourcePosition* chosen = user_position(*position);
    if (chosen->line != 0) {
      f.source_file = chosen->file;
      f.source_line = chosen->line;
      f.source_column = chosen->column;
    }
  }
  report_.findings.push_back(std::move(f));
}

void FunctionContext::note(std::string text) {
  const std::string line = function_.name + ": " + text;
  if (std::find(report_.notes.begin(), report_.notes.end(), line) == report_.notes.end()) {
    report_.notes.push_back(line);
  }
}

}  // namespace kiln::check
