// Candidate code with ordinary host code, built by nvcc against libkiln_cudart_sim.so and run on
// the real simulator.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "kiln/sim/runtime_ext.h"

namespace {

// A candidate library loaded into this process, against a runtime reset to a fresh device.
class CandidateTest : public ::testing::Test {
 protected:
  void open(const char* path) {
    cudaDeviceReset();
    (void)cudaGetLastError();
    kiln_sim_clear_report();
    library_ = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library_, nullptr) << dlerror();
  }
  template <typename F>
  F function(const char* name) {
    return reinterpret_cast<F>(dlsym(library_, name));
  }
  void TearDown() override {
    if (library_ != nullptr) dlclose(library_);
  }
  static nlohmann::json report() { return nlohmann::json::parse(kiln_sim_report()); }

  void* library_ = nullptr;
};

using RunVectorAdd = int (*)(int, int, float*);

class EndToEnd : public CandidateTest {
 protected:
  void SetUp() override {
    open(KILN_SIMRT_VECTOR_ADD);
    run_ = function<RunVectorAdd>("run_vector_add");
    ASSERT_NE(run_, nullptr);
  }
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

// Device printf through the runtime: printing.cu's host code around a printing kernel.
using RunPrinting = int (*)(int, int, size_t);
using FifoBytes = size_t (*)();

// What `body` writes to stdout (fd 1, and the C library's stdout buffered on it).
std::string captured_stdout(const std::function<void()>& body) {
  std::fflush(stdout);
  char path[] = "/tmp/kiln_e2e_stdout_XXXXXX";
  const int file = mkstemp(path);
  const int saved = dup(STDOUT_FILENO);
  dup2(file, STDOUT_FILENO);
  body();
  std::fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  close(file);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  unlink(path);
  return text.str();
}

class EndToEndPrintf : public CandidateTest {
 protected:
  void SetUp() override {
    open(KILN_SIMRT_PRINTING);
    run_ = function<RunPrinting>("run_printing");
    fifo_ = function<FifoBytes>("printf_fifo_bytes");
    ASSERT_NE(run_, nullptr);
    ASSERT_NE(fifo_, nullptr);
  }
  void TearDown() override {
    cudaDeviceReset();  // restores the printf FIFO size
    CandidateTest::TearDown();
  }
  static std::string hello(int thread, int block) {
    return "hello from thread " + std::to_string(thread) + " of block " + std::to_string(block) +
           ", value 42\n";
  }

  RunPrinting run_ = nullptr;
  FifoBytes fifo_ = nullptr;
};

TEST_F(EndToEndPrintf, KernelOutputReachesStdoutAtTheSynchronizationAsOnAGpu) {
  int status = -1;
  const std::string out = captured_stdout([&] { status = run_(2, 3, 0); });
  EXPECT_EQ(status, cudaSuccess);
  std::string kernel;
  for (int block = 0; block < 2; ++block)
    for (int thread = 0; thread < 3; ++thread) kernel += hello(thread, block);
  // The launch returns before the output appears; cudaDeviceSynchronize prints it.
  EXPECT_EQ(out, "host: launched\n" + kernel + "host: synchronized\n");
  const auto r = report();
  EXPECT_EQ(r["printf_output"], kernel);
  EXPECT_EQ(r["printf_dropped_bytes"], 0);
  ASSERT_EQ(r["launches"].size(), 1u);
  EXPECT_EQ(r["launches"][0]["printf_bytes"], kernel.size());
}

TEST_F(EndToEndPrintf, BytesThatAreNotUtf8ReachStdoutAsTheyAreAndTheReportStaysJson) {
  auto run_bytes = function<int (*)()>("run_printing_bytes");
  ASSERT_NE(run_bytes, nullptr);
  int status = -1;
  const std::string out = captured_stdout([&] { status = run_bytes(); });
  EXPECT_EQ(status, cudaSuccess);
  EXPECT_EQ(out, "\xc3(\xff)\n");
  const auto r = nlohmann::json::parse(kiln_sim_report(), nullptr, false);
  ASSERT_FALSE(r.is_discarded());
  EXPECT_EQ(r["printf_output"], "\xef\xbf\xbd(\xef\xbf\xbd)\n");  // U+FFFD for each bad byte
}

TEST_F(EndToEndPrintf, ASmallerPrintfFifoDropsWhatDoesNotFit) {
  EXPECT_EQ(fifo_(), size_t{1} << 20);  // CUDA's default
  int status = -1;
  const std::string out = captured_stdout([&] { status = run_(1, 32, 100); });
  EXPECT_EQ(status, cudaSuccess);
  EXPECT_EQ(fifo_(), 100u);
  // Lines for threads 0-9 are 41 bytes: two fit in 100 bytes; later calls are dropped whole.
  const std::string kept = hello(0, 0) + hello(1, 0);
  EXPECT_EQ(out, "host: launched\n" + kept + "host: synchronized\n");
  size_t total = 0;
  for (int thread = 0; thread < 32; ++thread) total += hello(thread, 0).size();
  const auto r = report();
  EXPECT_EQ(r["printf_output"], kept);
  EXPECT_EQ(r["printf_dropped_bytes"], total - kept.size());
  cudaDeviceReset();
  EXPECT_EQ(fifo_(), size_t{1} << 20);  // a reset restores the limit
}

}  // namespace
