#include "kiln/compiler/compile_result.h"

namespace kiln::compiler {

using json = nlohmann::json;

json KernelReport::to_json() const {
  json j = {{"name", name},
            {"demangled", demangled},
            {"registers", registers},
            {"spill_store_bytes", spill_store_bytes},
            {"spill_load_bytes", spill_load_bytes},
            {"stack_bytes", stack_bytes},
            {"local_bytes", local_bytes},
            {"static_smem_bytes", static_smem_bytes},
            {"dynamic_smem_bytes", dynamic_smem_bytes},
            {"barriers", barriers},
            {"max_threads", max_threads},
            {"required_threads", required_threads},
            {"min_blocks_per_sm", min_blocks_per_sm}};
  if (block_size > 0) {
    j["block_size"] = block_size;
    j["block_size_source"] = block_size_source;
    j["occupancy"] = occupancy.to_json();
  }
  if (has_instruction_mix) j["instruction_mix"] = instruction_mix.to_json();
  return j;
}

KernelReport KernelReport::from_json(const json& j) {
  KernelReport k;
  k.name = j.value("name", "");
  k.demangled = j.value("demangled", "");
  k.registers = j.value("registers", 0);
  k.spill_store_bytes = j.value("spill_store_bytes", int64_t{0});
  k.spill_load_bytes = j.value("spill_load_bytes", int64_t{0});
  k.stack_bytes = j.value("stack_bytes", int64_t{0});
  k.local_bytes = j.value("local_bytes", int64_t{0});
  k.static_smem_bytes = j.value("static_smem_bytes", int64_t{0});
  k.dynamic_smem_bytes = j.value("dynamic_smem_bytes", int64_t{0});
  k.barriers = j.value("barriers", 0);
  k.max_threads = j.value("max_threads", 0);
  k.required_threads = j.value("required_threads", false);
  k.min_blocks_per_sm = j.value("min_blocks_per_sm", 0);
  if (j.contains("instruction_mix")) {
    k.instruction_mix = InstructionMix::from_json(j["instruction_mix"]);
    k.has_instruction_mix = true;
  }
  return k;
}

int CompileResult::errors() const {
  int n = 0;
  for (const auto& d : diagnostics) n += d.is_error() ? 1 : 0;
  return n;
}

int CompileResult::warnings() const { return static_cast<int>(diagnostics.size()) - errors(); }

const KernelReport* CompileResult::find_kernel(const std::string& kernel) const {
  for (const auto& k : kernels) {
    if (k.name == kernel || k.demangled == kernel) return &k;
  }
  return nullptr;
}

json CompileResult::to_json() const {
  json diagnostic_list = json::array();
  for (const auto& d : diagnostics) diagnostic_list.push_back(d.to_json());
  json kernel_list = json::array();
  for (const auto& k : kernels) kernel_list.push_back(k.to_json());
  return {{"ok", ok},
          {"key", key},
          {"arch", arch},
          {"file_name", file_name},
          {"nvcc_seconds", nvcc_seconds},
          {"diagnostics", diagnostic_list},
          {"kernels", kernel_list},
          {"notes", notes},
          {"log", log},
          {"command", command}};
}

CompileResult CompileResult::from_json(const json& j) {
  CompileResult r;
  r.ok = j.value("ok", false);
  r.key = j.value("key", "");
  r.arch = j.value("arch", "");
  r.file_name = j.value("file_name", "");
  r.nvcc_seconds = j.value("nvcc_seconds", 0.0);
  for (const auto& d : j.value("diagnostics", json::array()))
    r.diagnostics.push_back(Diagnostic::from_json(d));
  for (const auto& k : j.value("kernels", json::array()))
    r.kernels.push_back(KernelReport::from_json(k));
  r.notes = j.value("notes", std::vector<std::string>());
  r.log = j.value("log", "");
  r.command = j.value("command", std::vector<std::string>());
  return r;
}

}  // namespace kiln::compiler
