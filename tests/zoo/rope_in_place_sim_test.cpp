// rope_halfsplit_bf16 in place, on kiln's CPU simulator: the zoo test runs every entry out of
// place (its inputs must stay unchanged), but the entry promises q_out = q and k_out = k work
// (kb/zoo/rope_halfsplit_bf16/NOTES.md). This runs its unmodified kernel.cu, built into
// BUILD/zoo/zoo_sim_rope_halfsplit_bf16.so, through libkiln_cudart_sim with the output
// descriptors pointing at the inputs' device buffers, on each small test shape of its meta.json
// (the vector path and the scalar path), and compares with the CPU reference.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>

#include "output_compare.h"
#include "reference_run.h"
#include "zoo_case.h"
#include "zoo_meta.h"

namespace kiln::zoo {
namespace {

constexpr const char* kEntry = "rope_halfsplit_bf16";

kiln_launch_fn load_launch() {
  const std::string library = std::string(KILN_ZOO_BUILD_DIR) + "/zoo_sim_" + kEntry + ".so";
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return nullptr;
  void* symbol = dlsym(handle, "kiln_launch");
  kiln_launch_fn fn = nullptr;
  static_assert(sizeof fn == sizeof symbol);
  std::memcpy(&fn, &symbol, sizeof fn);
  return fn;
}

TEST(RopeInPlaceSim, RotatesQAndKWhereTheyLie) {
  const std::filesystem::path zoo = KILN_ZOO_SOURCE_DIR;
  std::vector<std::string> problems;
  const auto techniques = load_techniques(zoo, problems);
  const MetaCheck check = check_zoo_entry(zoo / kEntry, techniques, {kEntry});
  ASSERT_TRUE(check.problems.empty() && check.meta) << check.problems.front();
  const ZooMeta& meta = *check.meta;
  const kiln_launch_fn launch = load_launch();
  ASSERT_NE(launch, nullptr) << "build zoo_sim_kernels first: " << dlerror();

  for (size_t shape = 0; shape + 1 < meta.shapes.size(); ++shape) {  // the last one is large
    SCOPED_TRACE("shape " + format_shape(meta.shape_json[shape]));
    CaseResult made = make_zoo_case(meta, shape, case_seed(kEntry, shape, 0));
    ASSERT_TRUE(made.error.empty()) << made.error;
    ZooCase& c = made.test_case;
    const ReferenceRun reference = run_reference(meta.op, c, 0);
    ASSERT_EQ(reference.status, KILN_OK) << reference.error;

    std::vector<void*> device(c.inputs.size(), nullptr);
    std::vector<kiln_tensor> descriptors;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      ASSERT_EQ(cudaMalloc(&device[i], c.inputs[i].bytes.size()), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(device[i], c.inputs[i].bytes.data(), c.inputs[i].bytes.size(),
                           cudaMemcpyHostToDevice),
                cudaSuccess);
      descriptors.push_back(c.inputs[i].descriptor(device[i]));
    }
    // q_out is q's buffer and k_out is k's (inputs 0 and 1).
    descriptors.push_back(c.outputs[0].descriptor(device[0]));
    descriptors.push_back(c.outputs[1].descriptor(device[1]));
    ASSERT_EQ(launch(descriptors.data(), static_cast<int>(descriptors.size()), nullptr, 0, nullptr),
              KILN_OK);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (size_t o = 0; o < 2; ++o) {
      HostTensor actual =
          make_host_tensor(c.outputs[o].name, c.outputs[o].dtype, c.outputs[o].shape);
      ASSERT_EQ(
          cudaMemcpy(actual.bytes.data(), device[o], actual.bytes.size(), cudaMemcpyDeviceToHost),
          cudaSuccess);
      const Comparison cmp = compare_outputs(reference.expected[o], actual, meta.atol, meta.rtol);
      EXPECT_TRUE(cmp.passed()) << cmp.describe(meta.atol, meta.rtol);
      EXPECT_GT(cmp.checked, 0);
    }
    for (void* p : device) cudaFree(p);
  }
}

}  // namespace
}  // namespace kiln::zoo
