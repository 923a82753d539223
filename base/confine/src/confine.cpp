#include "kiln/base/confine.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <system_error>

#include "landlock_ruleset.h"
#include "seccomp_filter.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

bool all_digits(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
  }
  return true;
}

// /proc, less other processes' folders and the files that read kernel memory or its log.
void add_proc(ConfinePolicy& policy) {
  static const std::set<std::string> kLeftOut = {"kcore",      "kmsg",       "kpagecgroup",
                                                 "kpagecount", "kpageflags", "sysrq-trigger",
                                                 "self",       "thread-self"};
  policy.readable.emplace_back("/proc/self");  // resolved when applied: the confined process's
  // CUDA names the threads it starts by writing /proc/self/task/TID/comm (measured: cuInit
  // fails without it, H200, driver 580); the other files there concern only this process.
  policy.writable.emplace_back("/proc/self/task");
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc", error)) {
    std::string name = entry.path().filename().string();
    if (all_digits(name) || kLeftOut.count(name) != 0) continue;
    policy.readable.push_back(entry.path());
  }
}

// The NVIDIA device files (opened read-write, and ioctl'd), and a few harmless devices.
void add_devices(ConfinePolicy& policy) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/dev", error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("nvidia", 0) != 0) continue;
    std::error_code is_dir_error;
    if (entry.is_directory(is_dir_error)) {
      policy.readable.push_back(entry.path());  // /dev/nvidia-caps: opened read-only
    } else {
      policy.writable.push_back(entry.path());
    }
  }
  policy.writable.emplace_back("/dev/null");
  for (const char* device : {"/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}) {
    policy.readable.emplace_back(device);
  }
}

}  // namespace

ConfinePolicy ConfinePolicy::for_cuda_process(const fs::path& cuda_root) {
  ConfinePolicy policy;
  // The ones a system lacks (/lib32 on most) are left out here rather than noted when applied.
  for (const char* dir : {"/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/sys"}) {
    std::error_code error;
    if (fs::exists(dir, error)) policy.readable.emplace_back(dir);
  }
  if (!cuda_root.empty()) policy.readable.push_back(cuda_root);
  add_proc(policy);
  add_devices(policy);
  return policy;
}

namespace {

fs::path resolved(const fs::path& p) {
  std::error_code error;
  fs::path r = fs::canonical(p, error);
  return error ? p.lexically_normal() : r;
}

bool is_within(const fs::path& inner, const fs::path& outer) {
  auto o = outer.begin();
  auto i = inner.begin();
  for (; o != outer.end(); ++o, ++i) {
    if (i == inner.end() || *o != *i) return false;
  }
  return true;
}

// `root` (readable) without `hidden` (resolved paths): root itself when nothing hidden lies in
// it, else its entries, each treated the same way.
void readable_without(const fs::path& root, const std::vector<fs::path>& hidden,
                      std::vector<fs::path>* out, int depth) {
  const fs::path real = resolved(root);
  bool holds = false;
  for (const auto& h : hidden) {
    if (h == real) return;  // the hidden file itself
    holds = holds || is_within(h, real);
  }
  std::error_code error;
  if (!holds || depth > 16 || !fs::is_directory(real, error)) {
    out->push_back(root);
    return;
  }
  for (const auto& entry : fs::directory_iterator(root, error))
    readable_without(entry.path(), hidden, out, depth + 1);
}

}  // namespace

void ConfinePolicy::hide(const std::vector<fs::path>& files) {
  std::vector<fs::path> hidden;
  for (const auto& f : files) hidden.push_back(resolved(f));
  std::vector<fs::path> kept;
  for (const auto& root : readable) readable_without(root, hidden, &kept, 0);
  readable = std::move(kept);
}

std::vector<fs::path> ConfinePolicy::find_libraries(const fs::path& cuda_root,
                                                    const std::vector<std::string>& prefixes) {
  std::vector<fs::path> dirs = {"/usr/lib/x86_64-linux-gnu",
                                "/usr/lib/aarch64-linux-gnu",
                                "/lib/x86_64-linux-gnu",
                                "/usr/lib64",
                                "/usr/lib",
                                "/usr/local/lib"};
  std::error_code error;
  if (!cuda_root.empty()) {
    dirs.push_back(cuda_root / "lib64");
    dirs.push_back(cuda_root / "lib");
    dirs.push_back(cuda_root / "extras" / "CUPTI" / "lib64");
    for (const auto& target : fs::directory_iterator(cuda_root / "targets", error))
      dirs.push_back(target.path() / "lib");
  }
  std::vector<fs::path> found;
  for (const auto& dir : dirs) {
    for (const auto& entry : fs::directory_iterator(dir, error)) {
      const std::string name = entry.path().filename().string();
      for (const auto& prefix : prefixes) {
        if (!prefix.empty() && name.rfind("lib" + prefix, 0) == 0) {
          found.push_back(entry.path());
          break;
        }
      }
    }
  }
  return found;
}

int landlock_abi_version() { return confine_detail::query_landlock_abi(); }

Result<ConfineReport> confine_this_process(const ConfinePolicy& policy) {
  static std::mutex once_at_a_time;
  std::lock_guard<std::mutex> lock(once_at_a_time);
  ConfineReport report;

  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return make_error(std::string("kiln_confine: prctl(PR_SET_NO_NEW_PRIVS) failed: ") +
                      std::strerror(errno));
  }
  Status installed =
      confine_detail::install_seccomp_filter(confine_detail::build_seccomp_filter(getpid()));
  if (!installed) return installed.error();
  report.seccomp = true;

  report.landlock_abi = confine_detail::query_landlock_abi();
  if (report.landlock_abi == 0) {
    report.notes.push_back(
        "Landlock is unavailable on this kernel (landlock_create_ruleset: " +
        std::string(std::strerror(errno)) +
        "): the filesystem is not confined, and reading another process's /proc/PID/mem is "
        "refused only by what the kernel's ptrace rules refuse anyway");
  } else {
    auto landlock = confine_detail::apply_landlock(policy, report.landlock_abi);
    if (!landlock) return landlock.error();
    report.landlock_all_threads = landlock->all_threads;
    for (std::string& note : landlock->notes) report.notes.push_back(std::move(note));
  }

  // Not attachable, nor its memory readable, by other processes of the same user; no core dump.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    return make_error(std::string("kiln_confine: prctl(PR_SET_DUMPABLE, 0) failed: ") +
                      std::strerror(errno));
  }
  return report;
}

}  // namespace kiln
