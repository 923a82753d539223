#include "seccomp_filter.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace kiln::confine_detail {
namespace {

#if defined(__x86_64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
#error "kiln_confine knows the syscall ABIs of x86_64 and aarch64 only"
#endif
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "an argument's low 32 bits are read at its own offset: little-endian only");

// Syscalls newer than the kernel headers kiln builds against (Debian 12: Linux 6.1). Numbers
// from 424 on are the same on every architecture.
#ifdef __NR_open_tree_attr
constexpr long kNrOpenTreeAttr = __NR_open_tree_attr;
#else
constexpr long kNrOpenTreeAttr = 467;  // Linux 6.15
#endif

// The namespace flags of clone(2). CLONE_NEWTIME (0x80) is left out: in clone(2) that bit is part
// of the exit signal, and only clone3 and unshare (both refused) take it as a namespace.
constexpr std::uint32_t kCloneNamespaceFlags = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS |
                                               CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
                                               CLONE_NEWNET;
constexpr std::uint32_t kSocketTypeMask = 0xf;  // SOCK_NONBLOCK and SOCK_CLOEXEC above it

// One test of one argument's low 32 bits (every argument kiln tests is an int or unsigned int
// to the kernel, which ignores the high half).
struct ArgTest {
  enum class Kind { kOneOf, kNoneOf, kHasAnyBit, kHasNoBit };
  Kind kind;
  int arg;             // 0..5
  std::uint32_t mask;  // kOneOf, kNoneOf: applied before comparing; the bit tests: the bits
  std::vector<std::uint32_t> values;
};

// A refused call: with `errno_value`, unless every test of `allowed_if` passes.
struct Rule {
  long nr;
  int errno_value;
  std::vector<ArgTest> allowed_if;
};

std::uint32_t low_half_offset(int arg) {
  return static_cast<std::uint32_t>(offsetof(seccomp_data, args) +
                                    8 * static_cast<std::size_t>(arg));
}

sock_filter statement(std::uint16_t code, std::uint32_t k) { return sock_filter{code, 0, 0, k}; }

sock_filter jump(std::uint16_t code, std::uint32_t k, std::size_t jt, std::size_t jf) {
  return sock_filter{code, static_cast<std::uint8_t>(jt), static_cast<std::uint8_t>(jf), k};
}

// One argument test: falls through to the next test when it passes, returns `refuse` when not.
void append_test(const ArgTest& test, sock_filter refuse, std::vector<sock_filter>& out) {
  out.push_back(statement(BPF_LD | BPF_W | BPF_ABS, low_half_offset(test.arg)));
  switch (test.kind) {
    case ArgTest::Kind::kOneOf:
    case ArgTest::Kind::kNoneOf: {
      if (test.mask != 0xffffffffU) out.push_back(statement(BPF_ALU | BPF_AND | BPF_K, test.mask));
      bool one_of = test.kind == ArgTest::Kind::kOneOf;
      std::size_t n = test.values.size();
      for (std::size_t i = 0; i < n; ++i) {
        // kOneOf: a match skips the other comparisons and the refusal. kNoneOf: a match skips
        // the other comparisons and the jump over the refusal.
        out.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, test.values[i], n - 1 - i + 1, 0));
      }
      if (!one_of) out.push_back(statement(BPF_JMP | BPF_JA, 1));
      out.push_back(refuse);
      break;
    }
    case ArgTest::Kind::kHasAnyBit:
      out.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, test.mask, 1, 0));
      out.push_back(refuse);
      break;
    case ArgTest::Kind::kHasNoBit:
      out.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, test.mask, 0, 1));
      out.push_back(refuse);
      break;
  }
}

// A rule's block: it always ends in a return, so the dispatch needs no reload of the number.
std::vector<sock_filter> rule_block(const Rule& rule) {
  std::vector<sock_filter> block;
  sock_filter refuse = statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (rule.errno_value & 0xffff));
  for (const ArgTest& test : rule.allowed_if) append_test(test, refuse, block);
  block.push_back(rule.allowed_if.empty() ? refuse : statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return block;
}

ArgTest one_of(int arg, std::vector<std::uint32_t> values, std::uint32_t mask = 0xffffffffU) {
  return ArgTest{ArgTest::Kind::kOneOf, arg, mask, std::move(values)};
}
ArgTest none_of(int arg, std::vector<std::uint32_t> values, std::uint32_t mask = 0xffffffffU) {
  return ArgTest{ArgTest::Kind::kNoneOf, arg, mask, std::move(values)};
}
ArgTest has_any_bit(int arg, std::uint32_t bits) {
  return ArgTest{ArgTest::Kind::kHasAnyBit, arg, bits, {}};
}
ArgTest has_no_bit(int arg, std::uint32_t bits) {
  return ArgTest{ArgTest::Kind::kHasNoBit, arg, bits, {}};
}

std::vector<Rule> deny_list(pid_t own_pid) {
  auto self = static_cast<std::uint32_t>(own_pid);
  std::vector<Rule> rules;
  auto refuse = [&rules](long nr, int errno_value = EPERM) {
    rules.push_back(Rule{nr, errno_value, {}});
  };
  auto allow_only_if = [&rules](long nr, std::vector<ArgTest> tests) {
    rules.push_back(Rule{nr, EPERM, std::move(tests)});
  };

  // New processes and programs. Threads are clone(CLONE_THREAD) without new namespaces (the
  // flags are argument 0 on x86_64 and aarch64 alike; they differ in the order of tls and
  // child_tid). clone3 answers ENOSYS, so glibc's pthread_create falls back to clone.
  refuse(__NR_execve);
  refuse(__NR_execveat);
#ifdef __NR_fork
  refuse(__NR_fork);
#endif
#ifdef __NR_vfork
  refuse(__NR_vfork);
#endif
  allow_only_if(__NR_clone, {has_any_bit(0, CLONE_THREAD), has_no_bit(0, kCloneNamespaceFlags)});
  refuse(__NR_clone3, ENOSYS);

  // Other processes: tracing, their memory, their descriptors, their limits, signals to them.
  // kill(0, ...) is refused too: 0 is the process group, which may hold the parent.
  refuse(__NR_ptrace);
  refuse(__NR_process_vm_readv);
  refuse(__NR_process_vm_writev);
  refuse(__NR_process_madvise);
  refuse(__NR_process_mrelease);
  refuse(__NR_kcmp);
  refuse(__NR_pidfd_getfd);
  refuse(__NR_pidfd_send_signal);  // a /proc/PID folder's descriptor is a pidfd too
  allow_only_if(__NR_pidfd_open, {one_of(0, {self})});
  allow_only_if(__NR_kill, {one_of(0, {self})});
  refuse(__NR_tkill);  // takes any thread id of the system; glibc uses tgkill
  allow_only_if(__NR_tgkill, {one_of(0, {self})});
  allow_only_if(__NR_rt_sigqueueinfo, {one_of(0, {self})});
  allow_only_if(__NR_rt_tgsigqueueinfo, {one_of(0, {self})});
  allow_only_if(__NR_prlimit64, {one_of(0, {0, self})});
  allow_only_if(__NR_move_pages, {one_of(0, {0, self})});
  allow_only_if(__NR_migrate_pages, {one_of(0, {0, self})});

  // The network. Unix sockets of the stream kinds only: an unconnected datagram socket (also
  // AF_UNIX SOCK_RAW, which the kernel makes a datagram one) can send to any named socket
  // without connect. Sockets already open (the one to kiln-worker) keep working.
  allow_only_if(__NR_socket,
                {one_of(0, {AF_UNIX}), one_of(1, {SOCK_STREAM, SOCK_SEQPACKET}, kSocketTypeMask)});
  allow_only_if(__NR_socketpair,
                {one_of(0, {AF_UNIX}), one_of(1, {SOCK_STREAM, SOCK_SEQPACKET}, kSocketTypeMask)});
  refuse(__NR_connect);
  refuse(__NR_bind);
  refuse(__NR_listen);
#ifdef __NR_accept
  refuse(__NR_accept);
#endif
  refuse(__NR_accept4);

  // Mounts, namespaces and the root, the old mount API and the new.
  refuse(__NR_mount);
  refuse(__NR_umount2);
  refuse(__NR_pivot_root);
  refuse(__NR_chroot);
  refuse(__NR_unshare);
  refuse(__NR_setns);
  refuse(__NR_open_tree);
  refuse(kNrOpenTreeAttr);
  refuse(__NR_move_mount);
  refuse(__NR_fsopen);
  refuse(__NR_fsconfig);
  refuse(__NR_fsmount);
  refuse(__NR_fspick);
  refuse(__NR_mount_setattr);
  // File handles open a file by inode, past every path check (with CAP_DAC_READ_SEARCH).
  refuse(__NR_name_to_handle_at);
  refuse(__NR_open_by_handle_at);
  // Device nodes (a root candidate could make one for the disk); FIFOs stay allowed.
#ifdef __NR_mknod
  allow_only_if(__NR_mknod, {none_of(1, {S_IFCHR, S_IFBLK}, S_IFMT)});
#endif
  allow_only_if(__NR_mknodat, {none_of(2, {S_IFCHR, S_IFBLK}, S_IFMT)});

  // The kernel itself: BPF, perf events (CUPTI reads the GPU through the driver, not these),
  // keys, kexec, modules, reboot, swap, accounting, quotas, the clock, the host name.
  refuse(__NR_bpf);
  refuse(__NR_perf_event_open);
  refuse(__NR_keyctl);
  refuse(__NR_add_key);
  refuse(__NR_request_key);
  refuse(__NR_kexec_load);
  refuse(__NR_kexec_file_load);
  refuse(__NR_init_module);
  refuse(__NR_finit_module);
  refuse(__NR_delete_module);
  refuse(__NR_reboot);
  refuse(__NR_swapon);
  refuse(__NR_swapoff);
  refuse(__NR_acct);
  refuse(__NR_quotactl);
  refuse(__NR_quotactl_fd);
  refuse(__NR_settimeofday);
  refuse(__NR_clock_settime);
  refuse(__NR_sethostname);
  refuse(__NR_setdomainname);
  refuse(__NR_vhangup);
#ifdef __NR_iopl
  refuse(__NR_iopl);
#endif
#ifdef __NR_ioperm
  refuse(__NR_ioperm);
#endif
#ifdef __NR_uselib
  refuse(__NR_uselib);
#endif
  // Page faults handled in user space (the classic way to win kernel races), and io_uring,
  // whose operations run without passing through this filter.
  refuse(__NR_userfaultfd);
  refuse(__NR_io_uring_setup);
  refuse(__NR_io_uring_enter);
  refuse(__NR_io_uring_register);
  // Personality flags change how the next program is loaded; only the query is allowed.
  allow_only_if(__NR_personality, {one_of(0, {0xffffffffU})});
  // Typing into the terminal of whoever shares it (TIOCSTI), and the console's ioctls.
  allow_only_if(__NR_ioctl, {none_of(1, {TIOCSTI, TIOCLINUX})});
  return rules;
}

}  // namespace

std::vector<sock_filter> build_seccomp_filter(pid_t own_pid) {
  std::vector<sock_filter> program;
  sock_filter kill_process = statement(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  // The architecture first: the same number means another call under another ABI.
  program.push_back(statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  program.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0));
  program.push_back(kill_process);
  program.push_back(statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
#if defined(__x86_64__)
  // x32 calls come with AUDIT_ARCH_X86_64 and this bit set in the number.
  program.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1));
  program.push_back(kill_process);
#endif
  for (const Rule& rule : deny_list(own_pid)) {
    std::vector<sock_filter> block = rule_block(rule);
    program.push_back(
        jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(rule.nr), 0, block.size()));
    program.insert(program.end(), block.begin(), block.end());
  }
  program.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return program;
}

Status install_seccomp_filter(const std::vector<sock_filter>& program) {
  if (program.size() > BPF_MAXINSNS) {
    return make_error("kiln_confine: the seccomp program has " + std::to_string(program.size()) +
                      " instructions, over the kernel's " + std::to_string(BPF_MAXINSNS));
  }
  sock_fprog fprog{static_cast<unsigned short>(program.size()),
                   const_cast<sock_filter*>(program.data())};  // NOLINT: the kernel only reads
  long result = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fprog);
  if (result > 0) {
    return make_error("kiln_confine: thread " + std::to_string(result) +
                      " could not take the seccomp filter (it has a filter of its own that this "
                      "process's other threads lack); install filters before starting threads");
  }
  if (result < 0) {
    int error = errno;
    return make_error(
        std::string("kiln_confine: seccomp(SECCOMP_SET_MODE_FILTER, TSYNC) failed: ") +
        std::strerror(error) +
        (error == EINVAL ? " (a kernel without seccomp filters or TSYNC)" : "") +
        (error == EACCES ? " (no_new_privs is not set on the calling thread)" : ""));
  }
  return Ok{};
}

}  // namespace kiln::confine_detail
