// Measures the PTX front end on a ~10,000-line module: parse, then for every function the
// CFG, dominators and post-dominators, loops, reaching definitions and uniformity.
// The module is built from corpus PTX (tests/corpus/ptx/*.ptx plus any files given), each
// source replicated with its functions, globals, parameters and debug strings renamed per
// copy and .file numbers kept apart, so the result is one valid module
// (--write FILE saves it; ptxas -arch=sm_90a accepts it).
// Usage: kiln_bench_ptx_parse [--lines 10000] [--runs 15] [--write FILE] [extra.ptx ...]
// Prints one JSON object; the target is total_ms (median) under 200.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/ptx/function_analysis.h"
#include "kiln/ptx/lexer.h"
#include "kiln/ptx/parser.h"
#include "kiln/ptx/printer.h"

using Clock = std::chrono::steady_clock;
namespace ptx = kiln::ptx;

namespace {

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Appends `suffix` to every identifier token of `text` that is in `names`.
std::string rename(const std::string& text, const std::set<std::string, std::less<>>& names,
                   const std::string& suffix) {
  std::string out;
  size_t copied = 0;
  for (const ptx::Token& t : ptx::tokenize(text).tokens) {
    if (t.kind != ptx::TokenKind::Identifier || !names.contains(t.text)) continue;
    const size_t end = t.offset + t.text.size();
    out.append(text, copied, end - copied);
    out += suffix;
    copied = end;
  }
  out.append(text, copied);
  return out;
}

// One copy of `m`'s items as text, ready to concatenate: names renamed with `suffix`, .file
// numbers shifted by `file_base`, debug-string labels renamed with the rest, DWARF sections
// dropped, extern declarations emitted once across copies.
std::string copy_items(ptx::Module m, const std::string& suffix, uint32_t file_base,
                       std::set<std::string>& externs_seen) {
  std::set<std::string, std::less<>> names;
  for (const ptx::Function& f : m.functions) {
    if (f.linkage == ptx::Linkage::Extern) continue;
    names.insert(f.name);
    for (const ptx::Variable& p : f.params) names.insert(p.name);
    for (const ptx::Variable& r : f.returns) names.insert(r.name);
  }
  for (const ptx::Variable& v : m.variables) {
    if (v.linkage != ptx::Linkage::Extern) names.insert(v.name);
  }
  for (const ptx::Section& s : m.sections) {
    for (const ptx::DebugString& d : s.strings) names.insert(d.label);
  }
  for (ptx::FileEntry& file : m.files) file.index += file_base;
  for (ptx::Function& f : m.functions) {
    for (ptx::DebugLoc& loc : f.locs) {
      loc.file += file_base;
      loc.inlined_file += file_base;
    }
  }
  std::string text;
  for (const ptx::ModuleItem& item : m.items) {
    switch (item.kind) {
      case ptx::ItemKind::Function: {
        const ptx::Function& f = m.functions[item.index];
        if (f.linkage == ptx::Linkage::Extern && !externs_seen.insert(f.name).second) break;
        text += ptx::print_function(f);
        break;
      }
      case ptx::ItemKind::Variable: {
        const ptx::Variable& v = m.variables[item.index];
        if (v.linkage == ptx::Linkage::Extern && !externs_seen.insert(v.name).second) break;
        text += ptx::print_variable(v) + ";\n";
        break;
      }
      case ptx::ItemKind::File: {
        const ptx::FileEntry& f = m.files[item.index];
        text += "\t.file\t" + std::to_string(f.index) + " \"" + f.path + "\"\n";
        break;
      }
      case ptx::ItemKind::Section: {
        // .debug_str holds the names .loc function_name refers to; the DWARF sections of -G
        // builds refer to labels inside functions and are left out.
        const ptx::Section& s = m.sections[item.index];
        if (s.name == ".debug_str") text += "\t.section\t" + s.name + "\n\t{" + s.text + "}\n";
        break;
      }
      default:
        break;  // pragmas and unknown directives are left out
    }
  }
  return rename(text, names, suffix);
}

size_t count_lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  size_t target_lines = 10000;
  int runs = 15;
  std::string write_to;
  std::vector<std::filesystem::path> sources;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--lines" && i + 1 < argc) {
      target_lines = std::stoul(argv[++i]);
    } else if (arg == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::stoi(argv[++i]));
    } else if (arg == "--write" && i + 1 < argc) {
      write_to = argv[++i];
    } else {
      sources.emplace_back(arg);
    }
  }
  const std::filesystem::path corpus =
      std::filesystem::path(__FILE__).parent_path().parent_path() / "tests" / "corpus" / "ptx";
  if (std::filesystem::is_directory(corpus)) {
    for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
      if (entry.path().extension() == ".ptx") sources.push_back(entry.path());
    }
  }
  std::sort(sources.begin(), sources.end());
  std::vector<ptx::Module> modules;
  for (const auto& path : sources) {
    kiln::Result<ptx::ParsedModule> parsed = ptx::parse_ptx(read(path), {path.string()});
    if (!parsed) {
      std::fprintf(stderr, "skipping %s: %s\n", path.c_str(), parsed.error().message.c_str());
      continue;
    }
    modules.push_back(std::move(parsed->module));
  }
  if (modules.empty()) {
    std::fprintf(stderr, "no PTX found (looked in %s)\n", corpus.c_str());
    return 1;
  }

  // Replicate the sources round-robin until the module reaches the target size.
  std::string text = ".version 9.0\n.target sm_90a\n.address_size 64\n\n";
  std::set<std::string> externs_seen;
  uint32_t copy = 0;
  while (count_lines(text) < target_lines) {
    const ptx::Module& m = modules[copy % modules.size()];
    text += copy_items(m, "_c" + std::to_string(copy), 100 * (copy + 1), externs_seen);
    ++copy;
  }
  if (!write_to.empty()) std::ofstream(write_to) << text;

  std::vector<double> parse_ms, analysis_ms, total_ms;
  size_t functions = 0, instructions = 0, blocks = 0, divergent_branches = 0;
  for (int run = 0; run < runs; ++run) {
    const auto t0 = Clock::now();
    kiln::Result<ptx::ParsedModule> parsed = ptx::parse_ptx(text, {"bench.ptx"});
    const auto t1 = Clock::now();
    if (!parsed) {
      std::fprintf(stderr, "the generated module does not parse: %s\n",
                   parsed.error().message.c_str());
      return 1;
    }
    functions = instructions = blocks = divergent_branches = 0;
    for (const ptx::Function& f : parsed->module.functions) {
      if (!f.has_body) continue;
      std::unique_ptr<ptx::FunctionAnalysis> a = ptx::analyze_function(f);
      ++functions;
      instructions += f.instructions.size();
      blocks += a->cfg.size();
      divergent_branches += a->uniformity.divergent_branches().size();
    }
    const auto t2 = Clock::now();
    parse_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    analysis_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    total_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
  }
  std::printf(
      "{\"lines\": %zu, \"bytes\": %zu, \"copies\": %u, \"functions\": %zu, \"instructions\": %zu, "
      "\"blocks\": %zu, \"divergent_branches\": %zu, \"runs\": %d, \"parse_ms\": %.2f, "
      "\"analysis_ms\": %.2f, \"total_ms\": %.2f, \"target_ms\": 200}\n",
      count_lines(text), text.size(), copy, functions, instructions, blocks, divergent_branches,
      runs, median(parse_ms), median(analysis_ms), median(total_ms));
  return 0;
}
