#include "kiln/tools/candidate_compiler.h"

#include "kiln/kb/gpu_spec.h"

namespace kiln::tools {
namespace {

// kb/hw's measured limits over the occupancy rules of the spec's architecture.
compiler::SmLimits limits_from_spec(const kb::GpuSpec& spec, compiler::SmLimits limits) {
  limits.source = spec.name + " (kb/hw/" + spec.id + ".json)";
  if (spec.max_threads_per_sm > 0) limits.max_threads_per_sm = spec.max_threads_per_sm;
  if (spec.max_blocks_per_sm > 0) limits.max_blocks_per_sm = spec.max_blocks_per_sm;
  if (spec.registers_per_sm > 0) limits.registers_per_sm = spec.registers_per_sm;
  if (spec.registers_per_thread_max > 0)
    limits.max_registers_per_thread = spec.registers_per_thread_max;
  if (spec.smem_per_sm_bytes > 0) limits.smem_per_sm_bytes = spec.smem_per_sm_bytes;
  if (spec.smem_per_block_max_bytes > 0)
    limits.smem_per_block_optin_bytes = spec.smem_per_block_max_bytes;
  return limits;
}

}  // namespace

CandidateCompiler::CandidateCompiler(std::shared_ptr<TaskSource> tasks, CompileToolConfig config)
    : tasks_(std::move(tasks)), config_(std::move(config)) {}

Result<Candidate> CandidateCompiler::candidate(const nlohmann::json& arguments) const {
  return resolve_candidate(arguments, config_.roots);
}

Result<compiler::Toolchain> CandidateCompiler::toolchain() {
  std::lock_guard lock(mutex_);
  if (!toolchain_) {
    auto probed = compiler::probe_toolchain();
    if (!probed) return probed.error();
    toolchain_ = std::move(*probed);
  }
  return *toolchain_;
}

// The configured GPU's kb/hw spec when its arch matches, else any spec of that arch, else the
// built-in table.
std::optional<compiler::SmLimits> CandidateCompiler::limits(const std::string& arch) {
  auto table = compiler::sm_limits_for_arch(arch);
  if (!table) return std::nullopt;
  std::lock_guard lock(mutex_);
  if (auto cached = limits_.find(arch); cached != limits_.end()) return cached->second;
  std::optional<kb::GpuSpec> chosen;
  if (auto preferred = kb::load_gpu_spec(config_.hw_dir, config_.gpu);
      preferred && preferred->arch == arch)
    chosen = *preferred;
  for (const std::string& id : kb::list_gpu_specs(config_.hw_dir)) {
    if (chosen) break;
    if (auto spec = kb::load_gpu_spec(config_.hw_dir, id); spec && spec->arch == arch)
      chosen = *spec;
  }
  compiler::SmLimits limits = chosen ? limits_from_spec(*chosen, *table) : *table;
  limits_[arch] = limits;
  return limits;
}

Result<compiler::CompileRequest> CandidateCompiler::request(const nlohmann::json& arguments,
                                                            const Candidate& candidate) {
  compiler::CompileRequest request;
  request.source = candidate.source;
  request.file_name = candidate.display_name();
  request.arch = arguments.value("arch", "");
  if (request.arch.empty()) {
    auto task = tasks_->get(arguments.value("task", ""));
    if (!task) {
      // TaskSource speaks for get_task, whose argument is `name`; these tools call it `task`.
      std::string message = task.error().message;
      if (auto at = message.find("with `name`"); at != std::string::npos)
        message.replace(at, 11, "with `task`");
      return make_error(message + " (or pass `arch`, e.g. sm_90a, to compile without a task)");
    }
    request.arch = (*task)->arch;
  }
  request.defines = arguments.value("defines", std::vector<std::string>());
  request.flags = arguments.value("flags", std::vector<std::string>());
  request.abi_include = config_.abi_include;
  if (!candidate.file.empty()) request.include_dirs.push_back(candidate.file.parent_path());
  request.block_size = arguments.value("block_size", 0);
  request.dynamic_smem_bytes = arguments.value("dynamic_smem_bytes", int64_t{0});
  request.sm_limits = limits(request.arch);
  request.cache_root = config_.cache_root;
  auto chain = toolchain();
  if (!chain) return chain.error();
  request.toolchain = *chain;
  return request;
}

Result<compiler::CompileResult> CandidateCompiler::compile(const nlohmann::json& arguments,
                                                           const Candidate& candidate) {
  auto built = request(arguments, candidate);
  if (!built) return built.error();
  return compiler::compile_candidate(*built);
}

}  // namespace kiln::tools
