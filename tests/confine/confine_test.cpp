// confine_this_process and ConfinePolicy::for_cuda_process (base/confine/src/confine.cpp).
#include "kiln/base/confine.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "confined_child.h"

namespace kiln::testing {
namespace {

bool contains(const std::vector<std::filesystem::path>& paths, const std::filesystem::path& p) {
  return std::find(paths.begin(), paths.end(), p) != paths.end();
}

TEST(ForCudaProcess, ContainsTheCudaRoot) {
  auto policy = ConfinePolicy::for_cuda_process("/opt/some/cuda-13.0");
  EXPECT_TRUE(contains(policy.readable, "/opt/some/cuda-13.0"));
  EXPECT_TRUE(contains(policy.readable, "/usr"));
  EXPECT_TRUE(contains(policy.readable, "/etc"));
  EXPECT_TRUE(contains(policy.readable, "/sys"));
  EXPECT_TRUE(contains(policy.readable, "/proc/self"));
  EXPECT_TRUE(contains(policy.writable, "/dev/null"));
}

TEST(ForCudaProcess, LeavesOutOtherProcessesAndKernelMemory) {
  auto policy = ConfinePolicy::for_cuda_process(KILN_CUDA_ROOT);
  for (const auto& path : policy.readable) {
    std::string text = path.string();
    EXPECT_NE(text, "/proc");
    EXPECT_NE(text, "/dev");
    EXPECT_NE(text, "/proc/kcore");
    EXPECT_NE(text, "/proc/kmsg");
    if (text.rfind("/proc/", 0) == 0) {
      std::string name = path.filename().string();
      EXPECT_FALSE(
          !name.empty() &&
          std::all_of(name.begin(), name.end(),
                      [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
          << "another process's folder: " << text;
    }
  }
  for (const auto& path : policy.writable) {
    EXPECT_TRUE(path == "/dev/null" || path == "/proc/self/task" ||
                path.string().rfind("/dev/nvidia", 0) == 0)
        << path;
  }
}

TEST(ForCudaProcess, MakesTheNvidiaDevicesWritable) {
  if (!std::filesystem::exists("/dev/nvidiactl")) {
    GTEST_SKIP() << "no NVIDIA driver on this machine (/dev/nvidiactl is missing)";
  }
  auto policy = ConfinePolicy::for_cuda_process(KILN_CUDA_ROOT);
  EXPECT_TRUE(contains(policy.writable, "/dev/nvidiactl"));
}

TEST(ConfineThisProcess, LeavesTheProcessNotDumpable) {
  auto outcome = run_confined(
      cuda_policy(), [](const ConfineReport&) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); });
  EXPECT_EQ(outcome.exit_code, 0);
}

TEST(ConfineThisProcess, ReportsTheLandlockAbiOfTheKernel) {
  int abi = landlock_abi_version();
  auto outcome =
      run_confined(cuda_policy(), [](const ConfineReport& report) { return report.landlock_abi; });
  EXPECT_EQ(outcome.exit_code, abi);
  std::cout << "[ INFO     ] Landlock ABI on this kernel: " << abi << "\n";
}

TEST(ConfineThisProcess, ExplainsInANoteWhenLandlockIsUnavailable) {
  if (landlock_abi_version() != 0) GTEST_SKIP() << "Landlock is available here";
  auto outcome = run_confined(cuda_policy(), [](const ConfineReport& report) {
    return !report.notes.empty() && !report.landlock_all_threads ? 0 : 1;
  });
  EXPECT_EQ(outcome.exit_code, 0);
}

// What a CUDA process (and the candidate it loads) does after confinement under the CUDA policy.
TEST(ConfineThisProcess, KeepsWhatACudaProcessNeedsUnderTheCudaPolicy) {
  auto outcome = run_confined(cuda_policy(), [](const ConfineReport&) {
    if (read_first_line("/proc/self/status").empty()) return 1;
    if (read_first_line("/proc/cpuinfo").empty()) return 2;
    if (read_first_line("/sys/devices/system/cpu/online").empty()) return 3;
    if (read_first_line("/etc/ld.so.cache").empty() && errno != 0) return 4;
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0 || write(null, "x", 1) != 1) return 5;
    close(null);
    void* library = dlopen("libz.so.1", RTLD_NOW);  // from /usr/lib, as a candidate's would be
    if (library == nullptr) return 6;
    void* buffer = malloc(64 << 20);
    if (buffer == nullptr) return 7;
    free(buffer);
    return 0;
  });
  EXPECT_EQ(outcome.exit_code, 0);
}

// A fake CUDA root with a banned library among the ones a candidate needs, as the toolkit lays
// them out (lib64 a link to targets/x86_64-linux/lib, versioned names behind links).
struct FakeToolkit {
  TempDir dir;
  std::filesystem::path root = dir.path() / "cuda";
  FakeToolkit() {
    write_in(dir, "cuda/targets/x86_64-linux/lib/libcudart.so.13.0.1", "cudart");
    write_in(dir, "cuda/targets/x86_64-linux/lib/libcublas.so.13.0.1", "cublas");
    write_in(dir, "cuda/targets/x86_64-linux/lib/libcublasLt.so.13.0.1", "cublasLt");
    write_in(dir, "cuda/include/cuda.h", "header");
    std::filesystem::create_symlink("libcublas.so.13.0.1",
                                    root / "targets/x86_64-linux/lib/libcublas.so");
    std::filesystem::create_directory_symlink("targets/x86_64-linux/lib", root / "lib64");
  }
};

TEST(HideLibraries, FindsEveryNameOfABannedLibraryAndNoOther) {
  FakeToolkit toolkit;
  const auto found = ConfinePolicy::find_libraries(toolkit.root, {"cublas", "cudnn"});
  std::set<std::string> names;
  for (const auto& f : found) {
    EXPECT_EQ(f.filename().string().rfind("libcublas", 0), 0u) << f;
    names.insert(f.filename().string());
  }
  EXPECT_TRUE(names.count("libcublas.so"));
  EXPECT_TRUE(names.count("libcublasLt.so.13.0.1"));
  EXPECT_FALSE(names.count("libcudart.so.13.0.1"));
}

TEST(HideLibraries, KeepsEverythingElseOfTheTreeReadableEntryByEntry) {
  FakeToolkit toolkit;
  ConfinePolicy policy;
  policy.readable = {toolkit.dir.path(), "/etc"};
  policy.hide(ConfinePolicy::find_libraries(toolkit.root, {"cublas"}));
  auto covered = [&](const std::filesystem::path& file) {
    const auto real = std::filesystem::canonical(file);
    for (const auto& r : policy.readable) {
      const auto root = std::filesystem::canonical(r);
      auto [end, _] = std::mismatch(root.begin(), root.end(), real.begin(), real.end());
      if (end == root.end()) return true;
    }
    return false;
  };
  EXPECT_TRUE(covered("/etc"));  // a root with nothing hidden stays whole
  EXPECT_TRUE(covered(toolkit.root / "include/cuda.h"));
  EXPECT_TRUE(covered(toolkit.root / "lib64/libcudart.so.13.0.1"));
  EXPECT_FALSE(covered(toolkit.root / "targets/x86_64-linux/lib/libcublas.so.13.0.1"));
  EXPECT_FALSE(covered(toolkit.root / "lib64/libcublasLt.so.13.0.1"));
  EXPECT_FALSE(covered(toolkit.root / "lib64/libcublas.so"));  // the link resolves to it
}

TEST(HideLibraries, AHiddenLibraryCannotBeOpenedUnderLandlock) {
  if (landlock_abi_version() == 0) GTEST_SKIP() << "Landlock is unavailable on this kernel";
  FakeToolkit toolkit;
  ConfinePolicy policy = cuda_policy();
  policy.readable.push_back(toolkit.dir.path());
  policy.hide(ConfinePolicy::find_libraries(toolkit.root, {"cublas"}));
  const auto allowed = toolkit.root / "lib64/libcudart.so.13.0.1";
  const auto hidden = toolkit.root / "lib64/libcublas.so.13.0.1";
  auto outcome = run_confined(policy, [&](const ConfineReport&) {
    if (read_first_line(allowed) != "cudart") return 1;
    const int fd = open(hidden.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) return 2;
    return errno == EACCES ? 0 : 3;
  });
  EXPECT_EQ(outcome.exit_code, 0) << "1: the allowed library unreadable, 2: the hidden one opened";
}

}  // namespace
}  // namespace kiln::testing
