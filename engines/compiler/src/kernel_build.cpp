#include "kiln/compiler/kernel_build.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>

#include "kiln/base/file.h"
#include "kiln/base/sha256.h"
#include "kiln/base/text.h"
#include "kiln/compiler/elf_symbols.h"
#include "kiln/compiler/gpu_arch.h"
#include "kiln/compiler/subprocess.h"

namespace kiln::compiler {

namespace {

const char* kind_name(BuildKind kind) {
  switch (kind) {
    case BuildKind::kCandidate:
      return "candidate";
    case BuildKind::kBaseline:
      return "baseline";
    case BuildKind::kReference:
      return "reference";
    case BuildKind::kGpuReference:
      return "GPU reference";
  }
  return "?";
}

// An exclusive lock on build_dir/.lock for the life of the object, so two workers
// building the same entry take turns and the second finds the first one's result.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::filesystem::path& dir) {
    fd_ = ::open((dir / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~DirectoryLock() {
    if (fd_ >= 0) {
      ::flock(fd_, LOCK_UN);
      ::close(fd_);
    }
  }
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

Result<std::vector<std::string>> KernelBuild::gencode_flags(const std::string& arch) {
  auto parsed = parse_gpu_arch(arch);
  if (!parsed) return make_error(parsed.error().message + " (fix the task's \"arch\")");
  return compiler::gencode_flags(*parsed, /*embed_ptx=*/true);  // gpu_arch.h
}

// For the simulated runtime (engines/sim/runtime/README.md, "Building a candidate"): the
// simulator runs PTX, so the fat binary carries the task arch's PTX only, uncompressed, and every
// CUDA symbol comes from libkiln_cudart_sim. Vendor libraries have no simulated form.
void KernelBuild::append_simulated_runtime_flags(const BuildRequest& request,
                                                 std::vector<std::string>* argv) const {
  auto parsed = parse_gpu_arch(request.arch);
  const std::string ptx = parsed ? parsed->virtual_name() : std::string("compute_90a");
  const std::string library_dir = toolchain_.simulated_runtime.parent_path().string();
  argv->insert(argv->end(), {"-gencode", "arch=" + ptx + ",code=" + ptx, "--no-compress", "-cudart",
                             "none", "-L" + library_dir, "-lkiln_cudart_sim", "-Xlinker", "-rpath",
                             "-Xlinker", library_dir});
}

std::vector<std::string> KernelBuild::command(const BuildRequest& request) const {
  const std::string include = "-I" + toolchain_.abi_include.string();
  if (request.kind == BuildKind::kReference) {
    return {toolchain_.cxx,
            "-std=c++20",
            "-O3",
            "-ffp-contract=off",
            "-fPIC",
            "-shared",
            "-pthread",
            include,
            "-o",
            (request.build_dir / "reference.so").string(),
            request.source.string()};
  }
  std::vector<std::string> argv = {toolchain_.nvcc_path().string(),
                                   "-std=c++17",
                                   "-O3",
                                   "-lineinfo",
                                   "-Xcompiler",
                                   "-fPIC",
                                   "-shared",
                                   "-Xptxas",
                                   "-v"};
  if (!toolchain_.simulated_runtime.empty()) {
    append_simulated_runtime_flags(request, &argv);
  } else {
    auto gencode = gencode_flags(request.arch);
    if (gencode) argv.insert(argv.end(), gencode->begin(), gencode->end());
    // The shared CUDA runtime, so the kernel and the worker share one runtime: one error
    // state, one set of streams, and CUPTI sees the kernel's calls.
    argv.insert(argv.end(), {"-cudart", "shared", "-Xlinker", "-rpath", "-Xlinker",
                             (toolchain_.cuda_root / "lib64").string()});
  }
  argv.push_back(include);
  argv.push_back("-I" + request.source.parent_path().string());
  if (request.kind == BuildKind::kBaseline) {
    argv.push_back("-L" + (toolchain_.cuda_root / "lib64").string());
    for (const auto& library : request.libraries) argv.push_back("-l" + library);
  }
  argv.insert(argv.end(),
              {"-o", (request.build_dir / "kernel.so").string(), request.source.string()});
  return argv;
}

std::string KernelBuild::fingerprint(const BuildRequest& request) const {
  Sha256 hash;
  hash.update(kind_name(request.kind));
  hash.update("\n");
  // Where things live does not matter (the ABI header's content is hashed below), so a
  // cache built on one machine is valid on another with the same compilers.
  BuildRequest neutral = request;
  neutral.build_dir = "/BUILD";
  neutral.source = "/SRC/" + request.source.filename().string();
  Toolchain placed = toolchain_;
  placed.abi_include = "/ABI";
  for (const auto& arg : KernelBuild(placed).command(neutral)) {
    hash.update(arg);
    hash.update("\n");
  }
  for (const auto& prefix : request.banned_prefixes) {
    hash.update("banned:" + prefix + "\n");
  }
  auto source = read_file(request.source);
  hash.update(source ? *source : std::string("<unreadable>"));
  // Every header a kernel may include from the ABI folder (abi.h, group_layout.h, ...), in name
  // order, so a change to any of them rebuilds what was built against it.
  std::vector<std::filesystem::path> headers;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(toolchain_.abi_include / "kiln", error)) {
    if (entry.path().extension() == ".h") headers.push_back(entry.path());
  }
  std::sort(headers.begin(), headers.end());
  for (const auto& header : headers) {
    auto text = read_file(header);
    hash.update(header.filename().string() + "\n" + (text ? *text : std::string()));
  }
  return hash.hex_digest();
}

std::string KernelBuild::trim_log(const std::string& output, size_t max_bytes) {
  static const std::regex kInfo(R"(^(ptxas info\s*:|\s+\d+ bytes stack frame,|\s+\d+ bytes gmem))");
  std::istringstream lines(output);
  std::string line;
  std::string out;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, kInfo)) continue;
    out += line + "\n";
  }
  if (out.size() > max_bytes)
    out = out.substr(0, max_bytes) + "\n[... trimmed; the full log is build.log]\n";
  return out;
}

nlohmann::json BuildOutcome::to_json() const {
  nlohmann::json banned_list = nlohmann::json::array();
  for (const auto& hit : banned) {
    banned_list.push_back({{"symbol", hit.symbol},
                           {"demangled", hit.demangled},
                           {"rule", hit.rule},
                           {"where", hit.where},
                           {"reason", hit.reason}});
  }
  return {{"ok", ok},       {"seconds", seconds},         {"library", library.string()},
          {"log", log},     {"kernels", ptxas.to_json()}, {"banned", banned_list},
          {"error", error}, {"command", command}};
}

BuildOutcome BuildOutcome::from_json(const nlohmann::json& j) {
  BuildOutcome out;
  out.ok = j.value("ok", false);
  out.seconds = j.value("seconds", 0.0);
  out.library = j.value("library", std::string());
  out.log = j.value("log", std::string());
  out.error = j.value("error", std::string());
  out.command = j.value("command", std::vector<std::string>());
  if (j.contains("kernels") && j["kernels"].is_array()) {
    for (const auto& k : j["kernels"]) {
      KernelResources r;
      r.name = k.value("name", std::string());
      r.arch = k.value("arch", std::string());
      r.registers = k.value("registers", 0);
      r.spill_stores = k.value("spill_stores", int64_t{0});
      r.spill_loads = k.value("spill_loads", int64_t{0});
      r.stack_bytes = k.value("stack_bytes", int64_t{0});
      r.smem_bytes = k.value("smem_bytes", int64_t{0});
      out.ptxas.kernels.push_back(r);
    }
  }
  if (j.contains("banned") && j["banned"].is_array()) {
    for (const auto& b : j["banned"]) {
      out.banned.push_back({b.value("symbol", std::string()), b.value("demangled", std::string()),
                            b.value("rule", std::string()), b.value("where", std::string()),
                            b.value("reason", std::string())});
    }
  }
  return out;
}

BuildOutcome KernelBuild::build(const BuildRequest& request) const {
  BuildOutcome outcome;
  std::error_code ec;
  std::filesystem::create_directories(request.build_dir, ec);
  if (ec) {
    outcome.error =
        "cannot create the build folder " + request.build_dir.string() + ": " + ec.message();
    return outcome;
  }
  if (toolchain_.abi_include.empty()) {
    outcome.error =
        "kiln/abi.h was not found; set KILN_ABI_INCLUDE to the folder that holds kiln/abi.h";
    return outcome;
  }
  if (request.kind != BuildKind::kReference) {
    auto gencode = gencode_flags(request.arch);
    if (!gencode) {
      outcome.error = gencode.error().message;
      return outcome;
    }
  }
  if (!toolchain_.simulated_runtime.empty() && !request.libraries.empty()) {
    outcome.error = std::string("the simulated CUDA runtime cannot run a ") +
                    kind_name(request.kind) + " that links " + join(request.libraries, ", ") +
                    " (vendor libraries have no simulated form); give the task a kernel "
                    "baseline, or run the job on a GPU worker";
    return outcome;
  }
  const std::string key = fingerprint(request);
  const std::filesystem::path manifest = request.build_dir / "build.json";
  DirectoryLock lock(request.build_dir);

  if (auto cached = read_file(manifest)) {
    const nlohmann::json j = nlohmann::json::parse(*cached, nullptr, false);
    if (!j.is_discarded() && j.value("fingerprint", std::string()) == key) {
      BuildOutcome previous = BuildOutcome::from_json(j);
      previous.library =
          request.build_dir / previous.library.filename();  // the cache may have moved
      if (!previous.ok || std::filesystem::exists(previous.library, ec)) {
        previous.cached = true;
        return previous;
      }
    }
  }

  outcome.command = command(request);
  ProcessOptions options;
  options.timeout_seconds = timeout_seconds_;
  const ProcessResult run = run_process(outcome.command, options);
  outcome.seconds = run.seconds;
  outcome.log = trim_log(run.output);
  (void)write_file(request.build_dir / "build.log", run.output);
  const bool is_reference = request.kind == BuildKind::kReference;
  outcome.library = request.build_dir / (is_reference ? "reference.so" : "kernel.so");
  if (!run.ok()) {
    const std::string what =
        is_reference ? "g++ could not compile the CPU reference "
                     : std::string("nvcc could not compile the ") + kind_name(request.kind) + " ";
    outcome.error = what + request.source.filename().string() + " (" + run.describe() +
                    "); fix the errors in the build log and submit again";
    if (run.timed_out)
      outcome.error = what + "in time: " + run.describe() +
                      "; simplify the source (fewer template instantiations)";
  } else {
    outcome.ptxas = PtxasReport::parse(run.output);
    if (request.kind == BuildKind::kCandidate) {
      auto symbols = ElfReader::read(outcome.library);
      if (!symbols) {
        outcome.error = symbols.error().message;
      } else {
        outcome.banned = BannedSymbols(request.banned_prefixes).scan(*symbols);
        if (!outcome.banned.empty()) {
          outcome.error = "banned symbols: " + BannedSymbols::describe(outcome.banned);
          std::filesystem::remove(outcome.library, ec);  // a refused object is never loaded
        }
      }
    }
    outcome.ok = outcome.error.empty();
  }
  if (!run.timed_out && run.started) {  // a timeout may be the machine's fault: never cached
    nlohmann::json j = outcome.to_json();
    j["fingerprint"] = key;
    j["kind"] = kind_name(request.kind);
    (void)write_file(manifest, j.dump(2));
  }
  return outcome;
}

}  // namespace kiln::compiler
