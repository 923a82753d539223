// Confining a process for the rest of its life: a seccomp filter (no new processes, no network,
// no ptrace or reading another process's memory, no mounts, namespaces, kernel modules or BPF)
// and, where the kernel has Landlock, a filesystem allow-list (read and write only under the
// folders named). Meant for the candidate host, the child of kiln-worker that loads untrusted
// kernel code: it calls confine_this_process() once CUDA is initialized and before it dlopens
// the candidate. What is and is not confined, and why: base/confine/README.md.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln {

struct ConfinePolicy {
  // Read and execute. A folder grants its whole tree; a file, that file alone.
  std::vector<std::filesystem::path> readable;
  // Read, write, create and remove (files, folders, FIFOs and symlinks; never device nodes),
  // no execute. A device file listed here may be opened for writing and take ioctls.
  std::vector<std::filesystem::path> writable;

  // What a process that has initialized CUDA needs to keep working: the system's libraries and
  // configuration, the CUDA root, /sys, /proc (this process's folder, writable under
  // /proc/self/task where CUDA names its threads, and the system files; not other processes'
  // folders, nor kcore, kmsg or the kpage files), the NVIDIA device files (writable) and a few
  // harmless devices (/dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom). Not /tmp, not
  // the home folder, not the job's folders: add those. /proc/self is kept as that name and
  // resolved when the policy is applied, so the policy may be built in another process.
  static ConfinePolicy for_cuda_process(const std::filesystem::path& cuda_root);

  // Takes `files` out of what is readable. Landlock only allows, so a readable folder that
  // holds one of them is replaced by its entries, recursively along the way to each hidden
  // file, and the hidden files themselves are left out: the rest of the tree stays readable,
  // entry by entry. Symbolic links are compared by what they resolve to.
  void hide(const std::vector<std::filesystem::path>& files);

  // The shared libraries whose file names start with "lib" + a prefix (e.g. "cublas" finds
  // libcublas.so.13 and libcublasLt.so.13) in the library folders of the system and of
  // `cuda_root` (lib64, targets/*/lib, extras/CUPTI/lib64): what hide() takes so that a banned
  // vendor library cannot be read and mapped by hand.
  static std::vector<std::filesystem::path> find_libraries(
      const std::filesystem::path& cuda_root, const std::vector<std::string>& prefixes);
};

struct ConfineReport {
  bool seccomp = false;  // the syscall filter is installed (on every thread)
  int landlock_abi = 0;  // 0: Landlock unavailable on this kernel: the filesystem is then not
                         // confined, and another process's /proc/PID/mem is refused only by the
                         // kernel's own ptrace rules (seccomp refuses ptrace itself); README.md
  // Every thread of the process is in a Landlock domain: by the kernel (LANDLOCK_RESTRICT_SELF_
  // TSYNC, ABI 8) or because each thread restricted itself on a signal. False when Landlock is
  // unavailable or a thread could not be reached (it blocks the signal); notes say which.
  bool landlock_all_threads = false;
  std::vector<std::string> notes;  // why Landlock is unavailable, rules skipped (a path that does
                                   // not exist), threads left unconfined, rights not handled
};

// The Landlock ABI version this kernel offers; 0 when it has none (ENOSYS, or disabled).
int landlock_abi_version();

// Confines the calling process, all of its threads, for good: no_new_privs, the seccomp filter
// (SECCOMP_FILTER_FLAG_TSYNC), the Landlock ruleset of `policy` (on every thread it can reach),
// and PR_SET_DUMPABLE 0. Meant to be called once. An error names the step that failed; the
// process may then be partly confined and should exit rather than go on.
Result<ConfineReport> confine_this_process(const ConfinePolicy& policy);

}  // namespace kiln
