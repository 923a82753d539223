// Candidate code with ordinary host code, built by nvcc against libkiln_cudart_sim.so and run on
// the real simulator.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "kiln/sim/runtime_ext.h"

namespace {

using RunVectorAdd = int (*)(int, int, float*);

class EndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    cudaDeviceReset();
    (void)cudaGetLastError();
    kiln_sim_clear_report();
    library_ = dlopen(KILN_SIMRT_VECTOR_ADD, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library_, nullptr) << dlerror();
    run_ = reinterpret_cast<RunVectorAdd>(dlsym(library_, "run_vector_add"));
    ASSERT_NE(run_, nullptr);
  }
  void TearDown() override {
    if (library_ != nullptr) dlclose(library_);
  }
  static nlohmann::json report() { return nlohmann::json::parse(kiln_sim_report()); }

  void* library_ = nullptr;
  RunVectorAdd run_ = nullptr;
};

TEST_F(EndToEnd, VectorAddWithOrdinaryHostCodeComputesTheRightAnswer) {
  float max_error = -1;
  ASSERT_EQ(run_(1000, 0, &max_error), cudaSuccess) << report().dump(2);
  EXPECT_EQ(max_error, 0.0f);
  const auto launches = report()["launches"];
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_NE(launches[0]["kernel"].get<std::string>().find("vector_add"), std::string::npos);
  EXPECT_EQ(launches[0]["grid"][0], 8);
  EXPECT_GT(launches[0]["stats"]["warp_instructions"].get<uint64_t>(), 0u);
}

TEST_F(EndToEnd, OutOfBoundsStoreIsReportedAsIllegalAddressWithItsSourceLine) {
  float max_error = -1;
  EXPECT_EQ(run_(1000, 1, &max_error), cudaErrorIllegalAddress) << report().dump(2);
  const auto faults = nlohmann::json::parse(kiln_sim_last_faults());
  ASSERT_FALSE(faults.empty());
  EXPECT_EQ(faults[0]["kind"], "out_of_bounds");
  EXPECT_NE(faults[0].value("source", std::string()).find("vector_add.cu"), std::string::npos)
      << faults.dump(2);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);  // sticky, as on a GPU
}

}  // namespace
