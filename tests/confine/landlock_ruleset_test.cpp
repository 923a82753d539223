// The Landlock ruleset (base/confine/src/landlock_ruleset.cpp): what a confined child may read
// and write. Skipped, with the reason, on a kernel without Landlock.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "confined_child.h"

namespace kiln::testing {
namespace {

#define SKIP_WITHOUT_LANDLOCK()                                                              \
  if (landlock_abi_version() == 0)                                                           \
  GTEST_SKIP() << "Landlock is unavailable on this kernel (landlock_create_ruleset answers " \
                  "ENOSYS or EOPNOTSUPP): the filesystem is not confined here"

int open_errno(const std::filesystem::path& file, int flags) {
  int fd = open(file.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  close(fd);
  return 0;
}

int read_errno(const std::filesystem::path& file) { return open_errno(file, O_RDONLY); }

// A job-like layout: a folder the candidate may read, one it may write, and a hidden seed.
class LandlockRuleset : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_LANDLOCK();
    readable_file_ = write_in(dir_, "readable/data.txt", "visible");
    seed_ = write_in(dir_, "hidden/seed", "12345");
    std::filesystem::create_directories(dir_.path() / "writable");
    policy_ = cuda_policy();
    policy_.readable.push_back(dir_.path() / "readable");
    policy_.writable.push_back(dir_.path() / "writable");
  }

  TempDir dir_;
  std::filesystem::path readable_file_;
  std::filesystem::path seed_;
  ConfinePolicy policy_;
};

TEST_F(LandlockRuleset, ReadsAFileUnderAReadableFolder) {
  auto outcome = run_confined(policy_, [this](const ConfineReport& report) {
    if (report.landlock_abi == 0) return 100;
    return read_first_line(readable_file_) == "visible" ? 0 : 1;
  });
  EXPECT_EQ(outcome.exit_code, 0);
}

TEST_F(LandlockRuleset, RefusesReadingAFileOutsideTheListWithEacces) {
  ASSERT_EQ(read_errno(seed_), 0);  // the parent, unconfined, can
  auto outcome = run_confined(policy_, [this](const ConfineReport&) { return read_errno(seed_); });
  EXPECT_EQ(outcome.exit_code, EACCES);
}

TEST_F(LandlockRuleset, RefusesListingAFolderOutsideTheList) {
  auto outcome = run_confined(policy_, [this](const ConfineReport&) {
    return open_errno(dir_.path() / "hidden", O_RDONLY | O_DIRECTORY);
  });
  EXPECT_EQ(outcome.exit_code, EACCES);
}

TEST_F(LandlockRuleset, ReadsAFileListedByItselfButNotItsNeighbours) {
  auto neighbour = write_in(dir_, "single/other.txt", "other");
  auto single = write_in(dir_, "single/only.txt", "only");
  policy_.readable.push_back(single);
  auto outcome = run_confined(policy_, [&](const ConfineReport&) {
    if (read_first_line(single) != "only") return 1;
    return read_errno(neighbour);
  });
  EXPECT_EQ(outcome.exit_code, EACCES);
}

TEST_F(LandlockRuleset, WritesAndCreatesUnderAWritableFolder) {
  auto created = dir_.path() / "writable" / "sub" / "out.txt";
  auto outcome = run_confined(policy_, [&](const ConfineReport&) {
    std::filesystem::create_directories(created.parent_path());
    int fd = open(created.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    bool written = write(fd, "written\n", 8) == 8;
    close(fd);
    return written ? 0 : 1;
  });
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(read_first_line(created), "written");
}

TEST_F(LandlockRuleset, RefusesWritingOutsideTheWritableFolders) {
  auto outcome = run_confined(policy_, [this](const ConfineReport&) {
    // A new file in a folder not listed, a new file and an overwrite in a readable one.
    if (open_errno(dir_.path() / "hidden" / "new", O_WRONLY | O_CREAT) != EACCES) return 1;
    if (open_errno(dir_.path() / "readable" / "new", O_WRONLY | O_CREAT) != EACCES) return 2;
    if (open_errno(readable_file_, O_WRONLY) != EACCES) return 3;
    if (unlink(readable_file_.c_str()) == 0 || errno != EACCES) return 4;
    if (open_errno("/tmp/kiln-confine-escape", O_WRONLY | O_CREAT) != EACCES) return 5;
    return 0;
  });
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "hidden" / "new"));
  EXPECT_EQ(read_first_line(readable_file_), "visible");
}

TEST_F(LandlockRuleset, RefusesMovingTheSeedIntoAWritableFolder) {
  auto outcome = run_confined(policy_, [this](const ConfineReport&) {
    auto target = dir_.path() / "writable" / "seed";
    if (rename(seed_.c_str(), target.c_str()) == 0) return 1;
    if (link(seed_.c_str(), target.c_str()) == 0) return 2;
    return 0;
  });
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_TRUE(std::filesystem::exists(seed_));
}

TEST_F(LandlockRuleset, SkipsAPathThatDoesNotExistWithANote) {
  auto missing = dir_.path() / "no-such-folder";
  policy_.readable.push_back(missing);
  auto outcome = run_confined(policy_, [&missing](const ConfineReport& report) {
    for (const std::string& note : report.notes) {
      if (note.find(missing.string()) != std::string::npos) return 0;
    }
    return 1;
  });
  EXPECT_EQ(outcome.exit_code, 0);
}

// The parent's memory, through /proc: refused by Landlock's ptrace rule (a domain's process may
// not trace, nor open the memory of, a process outside its domain), even with all of /proc
// readable; the control shows an unconfined child may open it here.
TEST_F(LandlockRuleset, RefusesOpeningTheParentsProcMemEvenWithAllOfProcReadable) {
  auto parent_mem = "/proc/" + std::to_string(getpid()) + "/mem";
  auto control = run_unconfined([&] { return read_errno(parent_mem); });
  ASSERT_EQ(control.exit_code, 0) << "an unconfined child cannot open " << parent_mem
                                  << " here either, so this test shows nothing";
  ConfinePolicy all_of_proc;
  all_of_proc.readable = {"/proc"};
  auto outcome =
      run_confined(all_of_proc, [&](const ConfineReport&) { return read_errno(parent_mem); });
  EXPECT_EQ(outcome.exit_code, EACCES);
  // With the CUDA policy the parent's folder is not even readable.
  outcome = run_confined(policy_, [&](const ConfineReport&) { return read_errno(parent_mem); });
  EXPECT_EQ(outcome.exit_code, EACCES);
}

TEST_F(LandlockRuleset, ReadsItsOwnProcFiles) {
  auto outcome = run_confined(policy_, [](const ConfineReport&) {
    if (read_first_line("/proc/self/status").empty()) return 1;
    if (read_errno("/proc/self/maps") != 0) return 2;
    if (read_errno("/proc/thread-self/stat") != 0) return 3;
    return 0;
  });
  EXPECT_EQ(outcome.exit_code, 0);
}

// What CUDA does to the threads it starts: name them from another thread, which glibc does by
// writing /proc/self/task/TID/comm.
TEST_F(LandlockRuleset, NamesAnotherThreadAsCudaDoes) {
  auto outcome = run_confined(policy_, [](const ConfineReport&) {
    std::atomic<bool> stop{false};
    std::thread worker([&stop] {
      while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    int named = pthread_setname_np(worker.native_handle(), "kiln-named");
    char name[16] = {};
    pthread_getname_np(worker.native_handle(), name, sizeof(name));
    stop = true;
    worker.join();
    if (named != 0) return named;
    return std::string(name) == "kiln-named" ? 0 : 1;
  });
  EXPECT_EQ(outcome.exit_code, 0);
}

}  // namespace
}  // namespace kiln::testing
