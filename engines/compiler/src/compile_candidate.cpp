#include "kiln/compiler/compile_candidate.h"

#include <chrono>
#include <regex>

#include "kiln/base/cache_dir.h"
#include "kiln/base/file.h"
#include "kiln/compiler/compile_cache.h"
#include "kiln/compiler/compile_flags.h"
#include "kiln/compiler/dependencies.h"
#include "kiln/compiler/gpu_arch.h"
#include "kiln/compiler/kernel_reports.h"
#include "kiln/compiler/ptxas_report.h"
#include "kiln/compiler/subprocess.h"
#include "kiln/ptx/parser.h"

namespace kiln::compiler {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr uintmax_t kMaxHeaderBytes = 4u << 20;

// A path to show: relative, no quotes or line breaks (it goes into the PTX's .file too).
std::string display_name(const std::string& requested) {
  if (requested.empty() || requested.find_first_of("\"\n\r\\") != std::string::npos)
    return "kernel.cu";
  return requested;
}

// The name the source gets in the scratch folder, which nvcc repeats in its messages.
std::string scratch_name(const std::string& display) {
  static const std::regex kSafe(R"([A-Za-z0-9_.+\-]+\.cu)");
  const std::string base = fs::path(display).filename().string();
  return std::regex_match(base, kSafe) ? base : "kernel.cu";
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

std::string read_ptx(const fs::path& keep_dir) {
  std::error_code error;
  for (fs::directory_iterator it(keep_dir, error), end; !error && it != end; it.increment(error)) {
    if (it->path().extension() == ".ptx") {
      if (auto text = read_file(it->path())) return *text;
    }
  }
  return "";
}

// The kiln-owned nvcc arguments that are not paths: they go into the cache key.
std::vector<std::string> build_flags(const GpuArch& arch, const std::vector<std::string>& user) {
  std::vector<std::string> flags = {"-std=c++17", "-O3",        "-lineinfo", "-Xptxas",
                                    "-v",         "-Xcompiler", "-fPIC"};
  for (const auto& gencode : gencode_flags(arch, /*embed_ptx=*/false)) flags.push_back(gencode);
  flags.insert(flags.end(), user.begin(), user.end());
  return flags;
}

// The cached result for `key`, when there is one whose headers are unchanged.
std::optional<CompileResult> load_cached(const CompileCache& cache, const std::string& key) {
  auto entry = cache.find(key);
  if (!entry) return std::nullopt;
  auto text = read_file(*entry / "result.json");
  if (!text) return std::nullopt;
  const json j = json::parse(*text, nullptr, false);
  if (j.is_discarded() || j.value("key", "") != key) return std::nullopt;
  if (!dependencies_unchanged(dependencies_from_json(j.value("dependencies", json::array()))))
    return std::nullopt;
  CompileResult result = CompileResult::from_json(j);
  result.cache_dir = *entry;
  if (auto ptx = read_file(*entry / "kernel.ptx")) {
    result.ptx = std::move(*ptx);
    result.ptx_path = *entry / "kernel.ptx";
  }
  result.cache_hit = true;
  return result;
}

struct Build {
  const CompileRequest& request;
  const Toolchain& toolchain;
  std::string display;
  std::string scratch_file;
  fs::path scratch;
  std::vector<std::string> flags;

  SourceReader reader() const {
    return [this](const std::string& file) -> std::optional<std::string> {
      if (file == scratch_file || file == display || file == (scratch / scratch_file).string())
        return request.source;
      const fs::path path = fs::path(file).is_absolute() ? fs::path(file) : scratch / file;
      std::error_code error;
      if (!fs::is_regular_file(path, error) || fs::file_size(path, error) > kMaxHeaderBytes)
        return std::nullopt;
      auto text = read_file(path);
      return text ? std::optional<std::string>(*text) : std::nullopt;
    };
  }

  // Scratch paths out of what the user sees; the candidate under its display name.
  void tidy(Diagnostic& d) const {
    const std::string prefix = scratch.string() + "/";
    if (d.file == scratch_file || d.file == prefix + scratch_file) d.file = display;
    if (fs::path(d.file).extension() == ".ptx") d.file = "kernel.ptx";
    replace_all(d.file, prefix, "");
    replace_all(d.message, prefix, "");
  }
};

// `stale`: the cache holds an entry for `key` whose headers changed since; it is replaced.
Result<CompileResult> run_nvcc(const Build& build, const std::string& key,
                               const CompileCache& cache, bool stale) {
  const CompileRequest& request = build.request;
  const fs::path abi_header = request.abi_include / "kiln" / "abi.h";
  if (auto written = write_file(build.scratch / build.scratch_file, request.source); !written)
    return written.error();
  std::error_code error;
  fs::create_directories(build.scratch / "keep", error);

  std::vector<std::string> argv = {build.toolchain.nvcc_path().string()};
  argv.insert(argv.end(), build.flags.begin(), build.flags.end());
  argv.push_back("-I" + request.abi_include.string());
  for (const auto& dir : request.include_dirs) argv.push_back("-I" + dir.string());
  argv.insert(argv.end(), {"-MD", "-MF", "keep/deps.d", "--keep", "--keep-dir", "keep", "-c",
                           build.scratch_file, "-o", "keep/kernel.o"});
  ProcessOptions options;
  options.working_dir = build.scratch.string();
  options.timeout_seconds = request.timeout_seconds;
  const ProcessResult run = run_process(argv, options);
  if (!run.started)
    return make_error("nvcc could not start (" + run.error + "); check KILN_CUDA_ROOT / KILN_NVCC");

  CompileResult result;
  result.key = key;
  result.arch = request.arch;
  result.file_name = build.display;
  result.nvcc_seconds = run.seconds;
  result.command = argv;
  result.log = run.output;
  replace_all(result.log, build.scratch.string() + "/", "");
  result.diagnostics = parse_diagnostics(run.output, build.reader());
  result.ok = run.ok();
  if (run.timed_out) {
    result.diagnostics.push_back({"error", "nvcc", build.display, 0, 0, "",
                                  "nvcc did not finish in " + run.describe() +
                                      "; simplify the source (fewer template instantiations, "
                                      "smaller unrolled loops)",
                                  "", 0});
  } else if (!result.ok && result.errors() == 0) {
    result.diagnostics.push_back(
        {"error", "nvcc", "", 0, 0, "",
         "nvcc failed (" + run.describe() + ") with no message kiln recognizes; read `log`", "",
         0});
  }

  std::string ptx = read_ptx(build.scratch / "keep");
  replace_all(ptx, "\"" + (build.scratch / build.scratch_file).string() + "\"",
              "\"" + build.display + "\"");
  std::optional<ptx::Module> module;
  if (!ptx.empty()) {
    ptx::ParseOptions parse_options;
    parse_options.source_name = "kernel.ptx";
    auto parsed = ptx::parse_ptx(ptx, parse_options);
    if (parsed) {
      module = std::move(parsed->module);
    } else if (result.ok) {
      result.notes.push_back("no instruction mix or launch bounds: kiln's PTX parser stopped at " +
                             parsed.error().message);
    }
  }
  locate_ptx_diagnostics(result.diagnostics, module ? &*module : nullptr, ptx, build.reader());
  for (Diagnostic& d : result.diagnostics) build.tidy(d);
  result.kernels = kernel_reports(PtxasReport::parse(run.output), module ? &*module : nullptr);
  result.ptx = ptx;

  std::vector<std::string> headers;
  if (auto deps = read_file(build.scratch / "keep" / "deps.d")) {
    headers = parse_dependency_file(*deps, build.scratch,
                                    {build.toolchain.cuda_root, "/usr/include", "/usr/lib"},
                                    {build.scratch / build.scratch_file, abi_header});
  }
  if (run.timed_out) return result;  // may be the machine's fault: never cached

  json record = result.to_json();
  record["dependencies"] = dependencies_to_json(hash_dependencies(headers));
  std::map<std::string, std::string> files = {{"result.json", record.dump(1)},
                                              {"nvcc.log", result.log}};
  if (!ptx.empty()) files["kernel.ptx"] = ptx;
  if (stale) fs::remove_all(cache.entry_dir(key), error);
  auto stored = cache.store(key, files);
  if (!stored) return stored.error();
  result.cache_dir = *stored;
  if (!ptx.empty()) result.ptx_path = *stored / "kernel.ptx";
  return result;
}

}  // namespace

void estimate_occupancy(std::vector<KernelReport>& kernels, int block_size,
                        int64_t dynamic_smem_bytes, const SmLimits& limits) {
  for (KernelReport& k : kernels) {
    k.dynamic_smem_bytes = dynamic_smem_bytes;
    if (k.required_threads) {
      k.block_size = k.max_threads;
      k.block_size_source = "reqntid";
    } else if (block_size > 0) {
      k.block_size = block_size;
      k.block_size_source = "argument";
    } else if (k.max_threads > 0) {
      k.block_size = k.max_threads;
      k.block_size_source = "launch_bounds";
    } else {
      k.block_size = 256;
      k.block_size_source = "default";
    }
    KernelUsage usage;
    usage.block_size = k.block_size;
    usage.registers = k.registers;
    usage.static_smem_bytes = k.static_smem_bytes;
    usage.dynamic_smem_bytes = dynamic_smem_bytes;
    usage.barriers = k.barriers;
    k.occupancy = compute_occupancy(usage, limits);
    if (k.max_threads > 0 && k.block_size > k.max_threads && k.occupancy.problem.empty())
      k.occupancy.problem = "a block of " + std::to_string(k.block_size) +
                            " threads is over the kernel's __launch_bounds__ of " +
                            std::to_string(k.max_threads) + "; the launch would fail";
  }
}

Result<CompileResult> compile_candidate(const CompileRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  auto arch = parse_gpu_arch(request.arch);
  if (!arch) return arch.error();
  auto user_flags = checked_flags(request.defines, request.flags);
  if (!user_flags) return user_flags.error();
  if (request.block_size < 0 || request.block_size > 1024 || request.dynamic_smem_bytes < 0)
    return make_error(
        "block_size must be 1..1024 (0: from __launch_bounds__) and "
        "dynamic_smem_bytes must not be negative");
  if (request.abi_include.empty())
    return make_error(
        "no include folder for kiln/abi.h was given; pass the task bundles' "
        "include folder (tasks/include)");
  const fs::path abi_header = request.abi_include / "kiln" / "abi.h";
  auto abi = read_file(abi_header);
  if (!abi)
    return make_error("kiln/abi.h is not in " + request.abi_include.string() +
                      "; pass the folder that holds kiln/abi.h (tasks/include)");

  Toolchain toolchain;
  if (request.toolchain) {
    toolchain = *request.toolchain;
  } else {
    auto probed = probe_toolchain();
    if (!probed) return probed.error();
    toolchain = std::move(*probed);
  }

  Build build{request, toolchain, display_name(request.file_name), "", {}, {}};
  build.scratch_file = scratch_name(build.display);
  build.flags = build_flags(*arch, *user_flags);
  const std::string key = compile_key(
      {request.source, build.display, arch->name(), build.flags, toolchain.nvcc_version, *abi});
  const CompileCache cache(request.cache_root.empty() ? default_cache_dir() : request.cache_root);

  std::optional<CompileResult> result = load_cached(cache, key);
  if (!result) {
    const bool stale = cache.find(key).has_value();
    auto scratch = cache.make_scratch_dir();
    if (!scratch) return scratch.error();
    build.scratch = *scratch;
    auto built = run_nvcc(build, key, cache, stale);
    std::error_code ignored;
    fs::remove_all(build.scratch, ignored);
    if (!built) return built.error();
    result = std::move(*built);
  }

  if (request.sm_limits) {
    estimate_occupancy(result->kernels, request.block_size, request.dynamic_smem_bytes,
                       *request.sm_limits);
  } else if (auto limits = sm_limits_for_arch(request.arch)) {
    estimate_occupancy(result->kernels, request.block_size, request.dynamic_smem_bytes, *limits);
  } else {
    result->notes.push_back("no occupancy estimate: " + limits.error().message);
  }
  result->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::move(*result);
}

}  // namespace kiln::compiler
