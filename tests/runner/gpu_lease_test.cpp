// GpuLease: one holder per GPU across runners (and processes) that share a lock folder.
#include "kiln/runner/gpu_lease.h"

#include <gmock/gmock.h>

#include <map>

#include "runner_fixture.h"

namespace kiln::runner {
namespace {

using namespace kiln::runner::testing;

TEST(GpuLease, OneHolderPerGpu) {
  TempDir locks;
  GpuLease first(locks.path(), 0);
  GpuLease second(locks.path(), 0);
  GpuLease other_gpu(locks.path(), 1);
  EXPECT_TRUE(first.try_acquire());
  EXPECT_FALSE(second.try_acquire());
  EXPECT_TRUE(other_gpu.try_acquire());
  first.release();
  EXPECT_TRUE(second.try_acquire());
  EXPECT_TRUE(second.held());
  EXPECT_TRUE(std::filesystem::exists(locks / "kiln-gpu-0.lock"));
}

TEST(GpuLease, WithoutALockFolderItIsAlwaysGranted) {
  GpuLease a("", 0);
  GpuLease b("", 0);
  EXPECT_TRUE(a.try_acquire());
  EXPECT_TRUE(b.try_acquire());
  EXPECT_TRUE(a.problem().empty());
}

TEST(GpuLease, AnUnusableLockFolderIsGrantedWithAWarning) {
  GpuLease lease("/proc/kiln-no-such-folder", 0);
  EXPECT_TRUE(lease.try_acquire());
  EXPECT_THAT(lease.problem(), ::testing::HasSubstr("may share the GPU"));
}

TEST(GpuLease, TwoRunnersSharingLocksNeverOverlapOnAGpu) {
  TempDir locks;
  TempDir dir;
  setenv("KILN_FAKE_WORKER_LOG", (dir / "log").c_str(), 1);
  auto shared_locks = [&](RunnerOptions& o) { o.lock_dir = locks.path(); };
  FakeRunner a({0}, shared_locks);
  FakeRunner b({0}, shared_locks);
  std::string first = a.submit(job_body("sleep", "400", {"16x4096x4096"}));
  std::string second = b.submit(job_body("sleep", "400", {"16x4096x4096"}));
  bool saw_waiting = eventually([&] {
    for (const auto* runner : {&a, &b}) {
      json health = runner->get("/v1/health");  // a named value: the loop below reads into it
      for (const auto& gpu : health["gpus"])
        if (gpu.value("leased_elsewhere", false)) return true;
    }
    return false;
  });
  EXPECT_EQ(a.wait(first)["state"], "finished");
  EXPECT_EQ(b.wait(second)["state"], "finished");
  unsetenv("KILN_FAKE_WORKER_LOG");
  EXPECT_TRUE(saw_waiting) << "health never showed the GPU leased by the other runner";
  std::map<std::string, std::pair<long long, long long>> spans;
  std::istringstream lines(read_text(dir / "log"));
  for (std::string what, job; lines >> what >> job;) {
    int gpu;
    long long when;
    lines >> gpu >> when;
    (what == "start" ? spans[job].first : spans[job].second) = when;
  }
  ASSERT_EQ(spans.size(), 2u);
  auto x = spans[first], y = spans[second];
  EXPECT_TRUE(x.second <= y.first || y.second <= x.first)
      << "the two runners timed on GPU 0 at once";
}

}  // namespace
}  // namespace kiln::runner
