#include "kiln/compiler/ptxas_report.h"

#include <algorithm>
#include <regex>
#include <sstream>

#include "kiln/compiler/demangle.h"

namespace kiln::compiler {

int PtxasReport::max_registers() const {
  int most = 0;
  for (const auto& k : kernels) most = std::max(most, k.registers);
  return most;
}

int64_t PtxasReport::total_spill_bytes() const {
  int64_t total = 0;
  for (const auto& k : kernels) total += k.spill_stores + k.spill_loads;
  return total;
}

const KernelResources* PtxasReport::find(const std::string& mangled) const {
  for (const auto& k : kernels) {
    if (k.mangled == mangled) return &k;
  }
  return nullptr;
}

nlohmann::json PtxasReport::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& k : kernels) {
    list.push_back({{"name", k.name},
                    {"arch", k.arch},
                    {"registers", k.registers},
                    {"spill_stores", k.spill_stores},
                    {"spill_loads", k.spill_loads},
                    {"stack_bytes", k.stack_bytes},
                    {"smem_bytes", k.smem_bytes}});
  }
  return list;
}

PtxasReport PtxasReport::parse(const std::string& output) {
  static const std::regex kEntry(R"(Compiling entry function '([^']+)' for '(\w+)')");
  static const std::regex kProperties(R"(Function properties for (\S+))");
  static const std::regex kFrame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex kUsed(R"(Used (\d+) registers)");
  static const std::regex kSmem(R"((\d+) bytes smem)");
  static const std::regex kBarriers(R"(used (\d+) barriers)");

  PtxasReport report;
  std::istringstream lines(output);
  std::string line;
  std::string current;  // mangled name of the function the following lines describe
  auto kernel_for = [&](const std::string& mangled) -> KernelResources* {
    for (auto& k : report.kernels) {
      if (k.mangled == mangled) return &k;
    }
    return nullptr;
  };
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_search(line, m, kEntry)) {
      current = m[1];
      if (kernel_for(current) == nullptr) {
        KernelResources k;
        k.name = demangle(current);
        k.mangled = current;
        k.arch = m[2];
        report.kernels.push_back(k);
      }
    } else if (std::regex_search(line, m, kProperties)) {
      current = m[1];
    } else if (std::regex_search(line, m, kFrame)) {
      if (KernelResources* k = kernel_for(current)) {
        k->stack_bytes = std::stoll(m[1]);
        k->spill_stores = std::stoll(m[2]);
        k->spill_loads = std::stoll(m[3]);
      }
    } else if (std::regex_search(line, m, kUsed)) {
      if (KernelResources* k = kernel_for(current)) {
        k->registers = std::stoi(m[1]);
        std::smatch smem;
        if (std::regex_search(line, smem, kSmem)) k->smem_bytes = std::stoll(smem[1]);
        if (std::regex_search(line, smem, kBarriers)) k->barriers = std::stoi(smem[1]);
      }
    }
  }
  return report;
}

}  // namespace kiln::compiler
