#include "candidate_build.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "kiln/compiler/subprocess.h"

namespace kiln::sim::run {

std::vector<std::string> CandidateBuild::command(const std::filesystem::path& source,
                                                 const std::filesystem::path& output) const {
  const std::string library_dir = runtime_library.parent_path().string();
  return {nvcc.string(),
          "-cudart",
          "none",
          "-shared",
          "-Xcompiler",
          "-fPIC",
          "-gencode",
          "arch=compute_90a,code=compute_90a",
          "--no-compress",
          "-lineinfo",
          "-std=c++17",
          "-I" + abi_include.string(),
          "-o",
          output.string(),
          source.string(),
          "-L" + library_dir,
          "-lkiln_cudart_sim",
          "-Xlinker",
          "-rpath=" + library_dir};
}

Result<std::filesystem::path> CandidateBuild::build(const std::filesystem::path& source,
                                                    const std::filesystem::path& output) const {
  std::error_code ec;
  std::filesystem::create_directories(output.parent_path(), ec);
  const compiler::ProcessResult result = compiler::run_process(command(source, output));
  if (!result.ok())
    return make_error("nvcc could not build " + source.string() + " for the simulator (" +
                      result.describe() + "):\n" + result.output + result.error);
  return output;
}

std::filesystem::path loaded_runtime_library() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cudaMalloc), &info) == 0 || info.dli_fname == nullptr)
    return {};
  return std::filesystem::weakly_canonical(info.dli_fname);
}

}  // namespace kiln::sim::run
