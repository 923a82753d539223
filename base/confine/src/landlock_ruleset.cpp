#include "landlock_ruleset.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "restrict_all_threads.h"

namespace kiln::confine_detail {
namespace {

// The access rights, as the kernel defines them (include/uapi/linux/landlock.h); the headers
// kiln builds against know ABI 1 and 2 only.
constexpr std::uint64_t kExecute = 1ULL << 0;
constexpr std::uint64_t kWriteFile = 1ULL << 1;
constexpr std::uint64_t kReadFile = 1ULL << 2;
constexpr std::uint64_t kReadDir = 1ULL << 3;
constexpr std::uint64_t kRemoveDir = 1ULL << 4;
constexpr std::uint64_t kRemoveFile = 1ULL << 5;
constexpr std::uint64_t kMakeChar = 1ULL << 6;
constexpr std::uint64_t kMakeDir = 1ULL << 7;
constexpr std::uint64_t kMakeReg = 1ULL << 8;
constexpr std::uint64_t kMakeSock = 1ULL << 9;
constexpr std::uint64_t kMakeFifo = 1ULL << 10;
constexpr std::uint64_t kMakeBlock = 1ULL << 11;
constexpr std::uint64_t kMakeSym = 1ULL << 12;
constexpr std::uint64_t kRefer = 1ULL << 13;     // ABI 2
constexpr std::uint64_t kTruncate = 1ULL << 14;  // ABI 3
constexpr std::uint64_t kIoctlDev = 1ULL << 15;  // ABI 5
static_assert(kExecute == LANDLOCK_ACCESS_FS_EXECUTE && kMakeSym == LANDLOCK_ACCESS_FS_MAKE_SYM &&
              kRefer == LANDLOCK_ACCESS_FS_REFER);
constexpr std::uint64_t kNetBindTcp = 1ULL << 0;         // ABI 4
constexpr std::uint64_t kNetConnectTcp = 1ULL << 1;      // ABI 4
constexpr std::uint64_t kScopeAbstractUnix = 1ULL << 0;  // ABI 6
constexpr std::uint64_t kScopeSignal = 1ULL << 1;        // ABI 6
constexpr std::uint32_t kRestrictSelfTsync = 1U << 3;    // ABI 8
constexpr std::uint32_t kCreateRulesetErrata = 1U << 1;  // the errata the kernel has fixed
constexpr int kErratumSignalScope = 2;  // signals between threads of one process in two domains

// The rights that apply to a file that is not a folder (the kernel refuses the others).
constexpr std::uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;
constexpr std::uint64_t kReadableRights = kExecute | kReadFile | kReadDir | kIoctlDev;
// Never kMakeChar or kMakeBlock (a device node for the disk), nor execute.
constexpr std::uint64_t kWritableRights = kReadFile | kReadDir | kIoctlDev | kWriteFile |
                                          kRemoveDir | kRemoveFile | kMakeDir | kMakeReg |
                                          kMakeSock | kMakeFifo | kMakeSym | kRefer | kTruncate;
static_assert((kWritableRights & (kMakeChar | kMakeBlock | kExecute)) == 0);

// struct landlock_ruleset_attr as of ABI 6; older kernels take a prefix of it.
struct RulesetAttr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;
  std::uint64_t scoped;
};

std::uint64_t handled_fs(int abi) {
  std::uint64_t rights = (kMakeSym << 1) - 1;  // ABI 1: execute .. make_sym
  if (abi >= 2) rights |= kRefer;
  if (abi >= 3) rights |= kTruncate;
  if (abi >= 5) rights |= kIoctlDev;
  return rights;
}

std::size_t ruleset_attr_size(int abi) {
  if (abi >= 6) return sizeof(RulesetAttr);
  if (abi >= 4) return offsetof(RulesetAttr, scoped);
  return offsetof(RulesetAttr, handled_access_net);
}

bool erratum_fixed(int erratum) {
  long fixed = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetErrata);
  return fixed > 0 && (fixed & (1L << (erratum - 1))) != 0;
}

std::string errno_text() { return std::strerror(errno); }

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void keep_open() { fd_ = -1; }

 private:
  int fd_;
};

// One path-beneath rule; a path that cannot be opened is skipped with a note (the policy is an
// allow-list, so a skipped rule only ever takes access away). A rule names an inode, and procfs
// makes a new inode for a path whose dentry the kernel reclaimed (measured: after
// `echo 2 > /proc/sys/vm/drop_caches` a confined process lost /proc/self and /proc/cpuinfo), so
// the descriptor of a rule on procfs stays open for the process's life: it holds the dentry, and
// with it the inode the rule names. `pinned` counts them.
Status add_path_rule(int ruleset_fd, const std::filesystem::path& path, std::uint64_t rights,
                     const char* what, std::vector<std::string>& notes, int& pinned) {
  Fd fd(open(path.c_str(), O_PATH | O_CLOEXEC));
  if (fd.get() < 0) {
    notes.push_back(std::string("skipped ") + what + " " + path.string() + ": " + errno_text());
    return Ok{};
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) {
    notes.push_back(std::string("skipped ") + what + " " + path.string() + ": " + errno_text());
    return Ok{};
  }
  if (!S_ISDIR(st.st_mode)) rights &= kFileRights;
  landlock_path_beneath_attr attr{};
  attr.allowed_access = rights;
  attr.parent_fd = fd.get();
  if (syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) != 0) {
    return make_error("kiln_confine: landlock_add_rule for " + path.string() +
                      " failed: " + errno_text());
  }
  struct statfs filesystem {};
  if (fstatfs(fd.get(), &filesystem) == 0 && filesystem.f_type == PROC_SUPER_MAGIC) {
    fd.keep_open();
    ++pinned;
  }
  return Ok{};
}

}  // namespace

int query_landlock_abi() {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi > 0 ? static_cast<int>(abi) : 0;
}

Result<LandlockOutcome> apply_landlock(const ConfinePolicy& policy, int abi) {
  LandlockOutcome outcome;
  const bool kernel_tsync = abi >= 8;
  std::uint64_t handled = handled_fs(abi);
  RulesetAttr attr{};
  attr.handled_access_fs = handled;
  if (abi >= 4) attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
  if (abi >= 6) {
    attr.scoped = kScopeAbstractUnix;
    // Threads restricted one by one get a domain each; before erratum 2 was fixed the signal
    // scope then also cut the signals between them (glibc and CUDA signal their own threads).
    if (kernel_tsync || erratum_fixed(kErratumSignalScope)) {
      attr.scoped |= kScopeSignal;
    } else {
      outcome.notes.emplace_back(
          "Landlock signal scope left off: this kernel lacks the fix of erratum 2, and threads "
          "restricted one by one could no longer signal each other");
    }
  }
  if (abi > 8) {
    outcome.notes.push_back("Landlock ABI " + std::to_string(abi) +
                            " is newer than kiln_confine knows (8): rights added since are not "
                            "handled, so they stay allowed");
  }
  if (abi < 5) {
    outcome.notes.push_back("Landlock ABI " + std::to_string(abi) +
                            ": ioctl on devices is not confined (needs ABI 5)");
  }
  int raw_fd =
      static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, ruleset_attr_size(abi), 0U));
  if (raw_fd < 0) {
    return make_error("kiln_confine: landlock_create_ruleset (ABI " + std::to_string(abi) +
                      ") failed: " + errno_text());
  }
  Fd ruleset(raw_fd);
  int pinned = 0;
  for (const auto& path : policy.readable) {
    Status added = add_path_rule(ruleset.get(), path, kReadableRights & handled, "readable",
                                 outcome.notes, pinned);
    if (!added) return added.error();
  }
  for (const auto& path : policy.writable) {
    Status added = add_path_rule(ruleset.get(), path, kWritableRights & handled, "writable",
                                 outcome.notes, pinned);
    if (!added) return added.error();
  }
  if (pinned > 0) {
    outcome.notes.push_back("holding " + std::to_string(pinned) +
                            " O_PATH descriptors open on the /proc rules, so that their inodes "
                            "outlive a reclaim of the dentry cache");
  }

  if (kernel_tsync) {
    if (syscall(SYS_landlock_restrict_self, ruleset.get(), kRestrictSelfTsync) != 0) {
      return make_error("kiln_confine: landlock_restrict_self(TSYNC) failed: " + errno_text());
    }
    outcome.all_threads = true;
    return outcome;
  }
  // No TSYNC before ABI 8: every other thread restricts itself in a signal handler, the way
  // glibc's setuid reaches every thread; then the calling thread.
  ThreadsRestricted others = restrict_other_threads(ruleset.get());
  if (syscall(SYS_landlock_restrict_self, ruleset.get(), 0U) != 0) {
    return make_error("kiln_confine: landlock_restrict_self failed: " + errno_text());
  }
  outcome.notes.push_back(
      "Landlock ABI " + std::to_string(abi) + " has no LANDLOCK_RESTRICT_SELF_TSYNC (ABI 8): " +
      std::to_string(others.restricted) + " other thread(s) restricted themselves on a signal");
  for (const std::string& note : others.unreached) outcome.notes.push_back(note);
  outcome.all_threads = others.unreached.empty();
  return outcome;
}

}  // namespace kiln::confine_detail
