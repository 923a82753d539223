#include "kiln/compiler/banned_symbols.h"

#include <cctype>

#include "kiln/compiler/demangle.h"

namespace kiln::compiler {

namespace {

struct ExactRule {
  const char* name;
  const char* reason;
};

constexpr const char* kLoading =
    "refused for every candidate: it loads code at run time, out of reach of this check";
constexpr const char* kPrograms =
    "refused for every candidate: it starts other programs from inside the benchmark";

constexpr ExactRule kWorkerRules[] = {
    {"dlopen", kLoading},       {"dlmopen", kLoading},      {"dlsym", kLoading},
    {"dlvsym", kLoading},       {"system", kPrograms},      {"popen", kPrograms},
    {"fork", kPrograms},        {"vfork", kPrograms},       {"execv", kPrograms},
    {"execve", kPrograms},      {"execvp", kPrograms},      {"execvpe", kPrograms},
    {"execl", kPrograms},       {"execle", kPrograms},      {"execlp", kPrograms},
    {"posix_spawn", kPrograms}, {"posix_spawnp", kPrograms}};

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

}  // namespace

BannedSymbols::BannedSymbols(std::vector<std::string> task_prefixes, bool worker_rules)
    : prefixes_(std::move(task_prefixes)), worker_rules_(worker_rules) {}

bool BannedSymbols::matches_prefix(const std::string& raw, const std::string& demangled,
                                   const std::string& prefix) {
  if (prefix.empty()) return false;
  if (raw.rfind(prefix, 0) == 0) return true;
  for (size_t pos = demangled.find(prefix); pos != std::string::npos;
       pos = demangled.find(prefix, pos + 1)) {
    if (pos == 0 || !is_identifier_char(demangled[pos - 1])) return true;
  }
  return false;
}

std::vector<BannedHit> BannedSymbols::scan(const ElfSymbols& symbols) const {
  std::vector<BannedHit> hits;
  auto already = [&](const std::string& name) {
    for (const auto& hit : hits) {
      if (hit.symbol == name) return true;
    }
    return false;
  };
  for (const auto& symbol : symbols.symbols) {
    if (already(symbol.name)) continue;
    const std::string readable = compiler::demangle(symbol.name);
    const std::string where = symbol.defined ? "defines" : "references";
    bool hit = false;
    for (const auto& prefix : prefixes_) {
      if (matches_prefix(symbol.name, readable, prefix)) {
        hits.push_back({symbol.name, readable, prefix, where,
                        "banned by the task (symbols starting with \"" + prefix + "\")"});
        hit = true;
        break;
      }
    }
    if (hit || !worker_rules_ || symbol.defined) continue;
    for (const auto& rule : kWorkerRules) {
      if (symbol.name == rule.name) {
        hits.push_back({symbol.name, readable, rule.name, where, rule.reason});
        break;
      }
    }
  }
  for (const auto& library : symbols.needed) {
    std::string stem = library.rfind("lib", 0) == 0 ? library.substr(3) : library;
    for (const auto& prefix : prefixes_) {
      if (stem.rfind(prefix, 0) == 0) {
        hits.push_back({library, library, prefix, "needs library",
                        "banned by the task (libraries starting with \"" + prefix + "\")"});
        break;
      }
    }
  }
  return hits;
}

std::string BannedSymbols::describe(const std::vector<BannedHit>& hits, size_t limit) {
  std::string out;
  for (size_t i = 0; i < hits.size() && i < limit; ++i) {
    const BannedHit& hit = hits[i];
    if (!out.empty()) out += "; ";
    out += "the candidate " + hit.where + " `" + hit.demangled + "`";
    if (hit.demangled != hit.symbol) out += " (" + hit.symbol + ")";
    out += ": " + hit.reason;
  }
  if (hits.size() > limit) out += "; and " + std::to_string(hits.size() - limit) + " more";
  if (!out.empty())
    out += ". Remove these calls and write the code yourself; only the CUDA runtime is linked.";
  return out;
}

}  // namespace kiln::compiler
