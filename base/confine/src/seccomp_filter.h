// The seccomp half of kiln_confine: a hand-written BPF program (no libseccomp) that allows every
// system call except a deny list, checked against the syscall ABI this file was built for.
#pragma once

#include <linux/filter.h>
#include <sys/types.h>

#include <vector>

#include "kiln/base/result.h"

namespace kiln::confine_detail {

// The program, for a process whose id is `own_pid` (signals and pidfds may target only it).
// A system call of another ABI (i386 or x32 on x86_64, arm32 on aarch64) kills the process.
std::vector<sock_filter> build_seccomp_filter(pid_t own_pid);

// Installs the program on every thread of the process (SECCOMP_FILTER_FLAG_TSYNC). The calling
// thread must have no_new_privs set; TSYNC sets it on the other threads.
Status install_seccomp_filter(const std::vector<sock_filter>& program);

}  // namespace kiln::confine_detail
