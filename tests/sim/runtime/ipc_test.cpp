// CUDA IPC on the real simulator, across two processes: this test process exports device
// buffers with cudaIpcGetMemHandle, kiln_sim_ipc_child (ipc_child.cpp) opens them and writes
// with a kernel or a copy, and this process then sees the bytes; plus the errors a CUDA runtime
// returns for handles and pointers it cannot use.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

using Add = int (*)(const int*, int*, int, int);

std::string to_hex(const cudaIpcMemHandle_t& handle) {
  std::string text;
  const auto* bytes = reinterpret_cast<const unsigned char*>(&handle);
  char pair[3];
  for (size_t i = 0; i < sizeof handle; ++i) {
    std::snprintf(pair, sizeof pair, "%02x", bytes[i]);
    text += pair;
  }
  return text;
}

// The shared-memory object a handle names, as a path ("/dev/shm/kiln-sim-...").
std::string object_path(const cudaIpcMemHandle_t& handle) {
  const auto* bytes = reinterpret_cast<const char*>(&handle);
  return "/dev/shm" + std::string(bytes + 16);
}

bool exists(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0;
}

// Runs the child with `arguments` and returns the first line it printed.
std::string run_child(const std::string& arguments) {
  const std::string command =
      std::string(KILN_SIMRT_IPC_CHILD) + " " + KILN_SIMRT_SHARING_KERNELS + " " + arguments;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  char line[256] = {};
  if (std::fgets(line, sizeof line, pipe) == nullptr) line[0] = 0;
  pclose(pipe);
  std::string text = line;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// The child run with pipes both ways, for a conversation: lines out, lines in.
class Conversation {
 public:
  explicit Conversation(const std::string& arguments) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[1]);
      close(from_child[0]);
      const std::string command =
          std::string(KILN_SIMRT_IPC_CHILD) + " " + KILN_SIMRT_SHARING_KERNELS + " " + arguments;
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = fdopen(to_child[1], "w");
    out_ = fdopen(from_child[0], "r");
  }
  ~Conversation() {
    if (in_ != nullptr) std::fclose(in_);
    if (out_ != nullptr) std::fclose(out_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }
  std::string read_line() {
    char line[256] = {};
    if (out_ == nullptr || std::fgets(line, sizeof line, out_) == nullptr) return "";
    std::string text = line;
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }
  void say() {
    std::fputs("go\n", in_);
    std::fflush(in_);
  }

 private:
  pid_t pid_ = -1;
  FILE* in_ = nullptr;
  FILE* out_ = nullptr;
};

cudaIpcMemHandle_t from_hex(const std::string& hex) {
  cudaIpcMemHandle_t handle{};
  auto* bytes = reinterpret_cast<unsigned char*>(&handle);
  for (size_t i = 0; i < sizeof handle && 2 * i + 1 < hex.size(); ++i)
    bytes[i] = static_cast<unsigned char>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return handle;
}

class Ipc : public ::testing::Test {
 protected:
  static constexpr int kCount = 1000;
  static constexpr size_t kBytes = kCount * sizeof(int);

  void SetUp() override {
    cudaDeviceReset();
    (void)cudaGetLastError();
    ASSERT_EQ(cudaMalloc(&buffer_, kBytes), cudaSuccess);
    ASSERT_EQ(cudaMemset(buffer_, 0, kBytes), cudaSuccess);
  }
  void TearDown() override {
    if (buffer_ != nullptr) cudaFree(buffer_);
  }

  std::vector<int> read_back() {
    std::vector<int> host(kCount);
    EXPECT_EQ(cudaMemcpy(host.data(), buffer_, kBytes, cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }

  cudaIpcMemHandle_t export_buffer() {
    cudaIpcMemHandle_t handle{};
    EXPECT_EQ(cudaIpcGetMemHandle(&handle, buffer_), cudaSuccess);
    return handle;
  }

  void* buffer_ = nullptr;
};

TEST_F(Ipc, KernelOfTheOtherProcessWritesTheExportedBuffer) {
  const cudaIpcMemHandle_t handle = export_buffer();
  ASSERT_EQ(run_child("fill " + to_hex(handle) + " " + std::to_string(kCount) + " 1000"), "ok");
  const std::vector<int> host = read_back();
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(host[static_cast<size_t>(i)], 1000 + i) << i;

  // This process's kernels see the same bytes.
  void* kernels = dlopen(KILN_SIMRT_SHARING_KERNELS, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(kernels, nullptr) << dlerror();
  auto add = reinterpret_cast<Add>(dlsym(kernels, "sharing_add"));
  int* out = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), kBytes), cudaSuccess);
  ASSERT_EQ(add(static_cast<int*>(buffer_), out, kCount, 1), cudaSuccess);
  std::vector<int> sums(kCount);
  ASSERT_EQ(cudaMemcpy(sums.data(), out, kBytes, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(sums[999], 1000 + 999 + 1);
  cudaFree(out);
  dlclose(kernels);
}

TEST_F(Ipc, CopyOfTheOtherProcessWritesTheExportedBuffer) {
  const cudaIpcMemHandle_t handle = export_buffer();
  ASSERT_EQ(run_child("copy " + to_hex(handle) + " 10 7"), "ok");
  const std::vector<int> host = read_back();
  EXPECT_EQ(host[0], 7);
  EXPECT_EQ(host[9], 16);
  EXPECT_EQ(host[10], 0);  // the child wrote ten ints, no more
}

TEST_F(Ipc, OtherProcessSeesWhatWasWrittenBeforeAndAfterTheExport) {
  std::vector<int> values(kCount);
  std::iota(values.begin(), values.end(), 1);
  ASSERT_EQ(cudaMemcpy(buffer_, values.data(), kBytes, cudaMemcpyHostToDevice), cudaSuccess);
  const cudaIpcMemHandle_t handle = export_buffer();
  EXPECT_EQ(run_child("sum " + to_hex(handle) + " " + std::to_string(kCount)), "500500");
  ASSERT_EQ(cudaMemset(buffer_, 0, kBytes), cudaSuccess);
  EXPECT_EQ(run_child("sum " + to_hex(handle) + " " + std::to_string(kCount)), "0");
}

TEST_F(Ipc, OpeningTwiceGivesOnePointerThatNeedsTwoCloses) {
  EXPECT_EQ(run_child("reopen " + to_hex(export_buffer())), "ok");
}

TEST_F(Ipc, ExportingAgainGivesTheSameHandleAndAFreshAllocationANewOne) {
  const cudaIpcMemHandle_t first = export_buffer();
  const cudaIpcMemHandle_t again = export_buffer();
  EXPECT_EQ(std::memcmp(&first, &again, sizeof first), 0);
  void* other = nullptr;
  ASSERT_EQ(cudaMalloc(&other, kBytes), cudaSuccess);
  cudaIpcMemHandle_t second{};
  ASSERT_EQ(cudaIpcGetMemHandle(&second, other), cudaSuccess);
  EXPECT_NE(std::memcmp(&first, &second, sizeof first), 0);
  cudaFree(other);
}

TEST_F(Ipc, ObjectIsPrivateToTheUserAndNamedForThisProcess) {
  const cudaIpcMemHandle_t handle = export_buffer();
  const std::string path = object_path(handle);
  EXPECT_EQ(path.rfind("/dev/shm/kiln-sim-" + std::to_string(getpid()) + "-", 0), 0u) << path;
  struct stat info {};
  ASSERT_EQ(stat(path.c_str(), &info), 0) << path;
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_EQ(static_cast<size_t>(info.st_size), kBytes);
}

TEST_F(Ipc, FreeingTheExportedBufferUnlinksItsObject) {
  const cudaIpcMemHandle_t handle = export_buffer();
  const std::string path = object_path(handle);
  ASSERT_TRUE(exists(path));
  ASSERT_EQ(cudaFree(buffer_), cudaSuccess);
  buffer_ = nullptr;
  EXPECT_FALSE(exists(path));
  EXPECT_EQ(run_child("open " + to_hex(handle)), "cudaErrorInvalidValue at open");
}

TEST_F(Ipc, DeviceResetUnlinksEveryExportedObject) {
  const std::string path = object_path(export_buffer());
  ASSERT_TRUE(exists(path));
  cudaDeviceReset();
  buffer_ = nullptr;
  EXPECT_FALSE(exists(path));
}

TEST_F(Ipc, ProcessExitUnlinksWhatItStillExports) {
  const std::string hex = run_child("export 64");
  ASSERT_EQ(hex.size(), 2 * sizeof(cudaIpcMemHandle_t)) << hex;
  const cudaIpcMemHandle_t handle = from_hex(hex);
  EXPECT_FALSE(exists(object_path(handle)));
  void* opened = nullptr;
  EXPECT_EQ(cudaIpcOpenMemHandle(&opened, handle, cudaIpcMemLazyEnablePeerAccess),
            cudaErrorInvalidValue);
}

// This process opens what the child exported; the child frees it; the mapping still works
// here until closed, as the memory of a GPU stays until its last user lets go.
TEST_F(Ipc, OpenedMappingOutlivesTheExportersFree) {
  Conversation child("serve 100 50");
  const cudaIpcMemHandle_t handle = from_hex(child.read_line());
  int* opened = nullptr;
  ASSERT_EQ(cudaIpcOpenMemHandle(reinterpret_cast<void**>(&opened), handle,
                                 cudaIpcMemLazyEnablePeerAccess),
            cudaSuccess);
  int first = 0;
  ASSERT_EQ(cudaMemcpy(&first, opened + 99, sizeof first, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(first, 149);
  child.say();
  ASSERT_EQ(child.read_line(), "freed");
  EXPECT_FALSE(exists(object_path(handle)));
  void* kernels = dlopen(KILN_SIMRT_SHARING_KERNELS, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(kernels, nullptr) << dlerror();
  auto fill = reinterpret_cast<int (*)(int*, int, int)>(dlsym(kernels, "sharing_fill"));
  ASSERT_EQ(fill(opened, 100, 7), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&first, opened + 99, sizeof first, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(first, 106);
  EXPECT_EQ(cudaIpcCloseMemHandle(opened), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(&first, opened, sizeof first, cudaMemcpyDeviceToHost),
            cudaErrorInvalidValue);  // closed: no longer device memory here
  child.say();
  dlclose(kernels);
}

// The candidate host of kiln-worker opens handles after confining itself: it needs /dev/shm in
// its Landlock policy, and without it the open fails as a mapping failure, not a crash.
TEST_F(Ipc, ConfinedOpenerNeedsDevShm) {
  const std::string hex = to_hex(export_buffer());
  const std::string refused = run_child("confined " + hex + " 10 5 noshm");
  if (refused == "skip") GTEST_SKIP() << "no Landlock on this kernel";
  EXPECT_EQ(refused, "cudaErrorMapBufferObjectFailed at open");
  ASSERT_EQ(run_child("confined " + hex + " 10 5 shm"), "ok");
  EXPECT_EQ(read_back()[9], 14);
}

TEST_F(Ipc, OpeningAHandleInTheProcessThatMadeItIsRefused) {
  const cudaIpcMemHandle_t handle = export_buffer();
  void* opened = nullptr;
  EXPECT_EQ(cudaIpcOpenMemHandle(&opened, handle, cudaIpcMemLazyEnablePeerAccess),
            cudaErrorDeviceUninitialized);
  EXPECT_EQ(opened, nullptr);
}

TEST_F(Ipc, MalformedHandlesAreRefused) {
  void* opened = nullptr;
  cudaIpcMemHandle_t zero{};
  EXPECT_EQ(cudaIpcOpenMemHandle(&opened, zero, cudaIpcMemLazyEnablePeerAccess),
            cudaErrorInvalidValue);
  cudaIpcMemHandle_t damaged = export_buffer();
  damaged.reserved[20] = '/';  // "/kil/-sim-...": not a kiln object name
  EXPECT_EQ(cudaIpcOpenMemHandle(&opened, damaged, cudaIpcMemLazyEnablePeerAccess),
            cudaErrorInvalidValue);
  EXPECT_EQ(run_child("open " + to_hex(zero)), "cudaErrorInvalidValue at open");
}

TEST_F(Ipc, UnknownOpenFlagsAreRefused) {
  const cudaIpcMemHandle_t handle = export_buffer();
  void* opened = nullptr;
  EXPECT_EQ(cudaIpcOpenMemHandle(&opened, handle, 0x10), cudaErrorInvalidValue);
}

TEST_F(Ipc, PointerInsideAnAllocationExportsTheWholeAllocation) {
  cudaIpcMemHandle_t inside{};
  ASSERT_EQ(cudaIpcGetMemHandle(&inside, static_cast<char*>(buffer_) + 256), cudaSuccess);
  const cudaIpcMemHandle_t base = export_buffer();
  EXPECT_EQ(std::memcmp(&inside, &base, sizeof base), 0);
}

TEST_F(Ipc, ExportNeedsLiveCudaMallocMemory) {
  cudaIpcMemHandle_t handle{};
  int host = 0;
  EXPECT_EQ(cudaIpcGetMemHandle(&handle, &host), cudaErrorInvalidValue);
  EXPECT_EQ(cudaIpcGetMemHandle(&handle, static_cast<char*>(buffer_) + kBytes + 4096),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaIpcGetMemHandle(nullptr, buffer_), cudaErrorInvalidValue);
  void* pool = nullptr;
  ASSERT_EQ(cudaMallocAsync(&pool, 4096, nullptr), cudaSuccess);
  EXPECT_EQ(cudaIpcGetMemHandle(&handle, pool), cudaErrorInvalidValue);
  cudaFreeAsync(pool, nullptr);
}

TEST_F(Ipc, ClosingWhatWasNotOpenedIsRefused) {
  EXPECT_EQ(cudaIpcCloseMemHandle(buffer_), cudaErrorInvalidValue);
  int host = 0;
  EXPECT_EQ(cudaIpcCloseMemHandle(&host), cudaErrorInvalidValue);
}

TEST_F(Ipc, ExportedBufferStillWorksLocally) {
  export_buffer();
  std::vector<int> values(kCount, 3);
  ASSERT_EQ(cudaMemcpy(buffer_, values.data(), kBytes, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(read_back()[kCount - 1], 3);
  size_t free = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  EXPECT_LE(free, total - kBytes);  // still counted as this device's memory
}

}  // namespace
