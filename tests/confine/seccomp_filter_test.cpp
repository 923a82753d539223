// The syscall filter (base/confine/src/seccomp_filter.cpp), seen from a confined child. These run
// whether or not the kernel has Landlock: what they try is refused by seccomp alone.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "confined_child.h"

namespace kiln::testing {
namespace {

int probe_exit(const ChildOutcome& outcome) {
  EXPECT_EQ(outcome.signal, 0) << "the child was killed by signal " << outcome.signal;
  return outcome.exit_code;
}

TEST(SeccompFilter, ReportsTheFilterInstalled) {
  auto outcome = run_confined(cuda_policy(),
                              [](const ConfineReport& report) { return report.seccomp ? 0 : 1; });
  EXPECT_EQ(probe_exit(outcome), 0);
}

TEST(SeccompFilter, RefusesExecveWithEperm) {
  auto outcome = run_confined(cuda_policy(), [](const ConfineReport&) {
    char* const argv[] = {const_cast<char*>("true"), nullptr};
    return errno_if(execve("/bin/true", argv, environ) != 0);
  });
  EXPECT_EQ(probe_exit(outcome), EPERM);
}

TEST(SeccompFilter, RefusesExecveat) {
  auto outcome = run_confined(cuda_policy(), [](const ConfineReport&) {
    char* const argv[] = {const_cast<char*>("true"), nullptr};
    return errno_if(syscall(SYS_execveat, AT_FDCWD, "/bin/true", argv, environ, 0) != 0);
  });
  EXPECT_EQ(probe_exit(outcome), EPERM);
}

TEST(SeccompFilter, RefusesFork) {
  auto outcome = run_confined(cuda_policy(), [](const ConfineReport&) {
    pid_t child = fork();
    if (child == 0) _exit(0);  // must not happen; the parent would see 0 below
    if (child > 0) waitpid(child, nullptr, 0);
    return child < 0 ? errno : 0;
  });
  EXPECT_EQ(probe_exit(outcome), EPERM);
}

TEST(SeccompFilter, RefusesCloneOfAProcessAndAnswersClone3WithEnosys) {
  auto outcome = run_confined(cuda_policy(), [](const ConfineReport&) {
    // clone(SIGCHLD) is what fork is made of; vfork-style CLONE_VM too.
    long plain = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (plain == 0) _exit(0);
    if (plain > 0 || errno != EPERM) return 1;
    clone_args args{};
    args.exit_signal = SIGCHLD;
    long three = syscall(SYS_clone3, &args, sizeof(args));
    if (three == 0) _exit(0);
    if (three > 0 || errno != ENOSYS) return 2;
    return 0;
  });
  EXPECT_EQ(probe_exit(outcome), 0);
}

TEST(SeccompFilter, RefusesAThreadInNewNamespaces) {
  auto outcome = run_confined(cuda_policy(), [](const ConfineReport&) {
    // The flags of a thread plus CLONE_NEWNET: refused before the kernel looks at the stack.
    long flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_NEWNET;
    long result = syscall(SYS_clone, flags, 0, 0, 0, 0);
    return result < 0 ? errno : 1;
  });
  EXPECT_EQ(probe_exit(outcome), EPERM);
}

TEST(SeccompFilter, LetsStdThreadRunAndJoin) {
  auto outcome = run_confined(cuda_policy(), [](const ConfineReport&) {
    std::atomic<int> sum{0};
    std::vector<std::thread> threads;
    for (int i = 1; i <= 4; ++i) threads.emplace_back([&sum, i] { sum += i; });
    for (auto& thread : threads) thread.join();
    return sum == 10 ? 0 : 1;
  });
  EXPECT_EQ(probe_exit(outcome), 0);
}

TEST(SeccompFilter, RefusesInetSocketsAndAllowsUnixStreamSockets) {
  auto outcome = run_confined(cuda_policy(), [](const ConfineReport&) {
    if (socket(AF_INET, SOCK_STREAM, 0) >= 0 || errno != EPERM) return 1;
    if (socket(AF_INET6, SOCK_DGRAM, 0) >= 0 || errno != EPERM) return 2;
    if (socket(AF_NETLINK, SOCK_RAW, 0) >= 0 || errno != EPERM) return 3;
    int unix_stream = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (unix_stream < 0) return 4;
    close(unix_stream);
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair) != 0) return 5;
    if (socketpair(AF_INET, SOCK_STREAM, 0, pair) == 0 || errno != EPERM) return 6;
    return 0;
  });
  EXPECT_EQ(probe_exit(outcome), 0);
}

TEST(SeccompFilter, RefusesUnixDatagramSocketsThatCouldSendToAnyNamedSocket) {
  auto outcome = run_confined(cuda_policy(), [](const ConfineReport&) {
    if (socket(AF_UNIX, SOCK_DGRAM, 0) >= 0 || errno != EPERM) return 1;
    if (socket(AF_UNIX, SOCK_RAW, 0) >= 0 || errno != EPERM) return 2;
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, pair) == 0 || errno != EPERM) return 3;
    return 0;
  });
  EXPECT_EQ(probe_exit(outcome), 0);
}

TEST(SeccompFilter, RefusesConnectBindAndListenEvenOnUnixSockets) {
  auto outcome = run_confined(cuda_policy(), [](const ConfineReport&) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return 1;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, "/run/kiln-confine-test.sock");
    auto* raw = reinterpret_cast<sockaddr*>(&address);
    if (connect(fd, raw, sizeof(address)) == 0 || errno != EPERM) return 2;
    if (bind(fd, raw, sizeof(address)) == 0 || errno != EPERM) return 3;
    if (listen(fd, 1) == 0 || errno != EPERM) return 4;
    if (accept4(fd, nullptr, nullptr, 0) >= 0 || errno != EPERM) return 5;
    return 0;
  });
  EXPECT_EQ(probe_exit(outcome), 0);
}

TEST(SeccompFilter, KeepsASocketpairOpenedBeforeConfinementWorking) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  ASSERT_EQ(write(pair[0], "ping", 4), 4);  // waits in the socket for the confined child
  auto outcome = run_confined(cuda_policy(), [&pair](const ConfineReport&) {
    close(pair[0]);
    char buffer[8] = {};
    if (read(pair[1], buffer, 4) != 4 || std::memcmp(buffer, "ping", 4) != 0) return 1;
    return write(pair[1], "pong", 4) == 4 ? 0 : 2;
  });
  char reply[8] = {};
  EXPECT_EQ(read(pair[0], reply, 4), 4);
  EXPECT_EQ(std::string(reply, 4), "pong");
  close(pair[0]);
  close(pair[1]);
  EXPECT_EQ(probe_exit(outcome), 0);
}

TEST(SeccompFilter, RefusesPtraceOfTheParent) {
  pid_t parent = getpid();
  auto outcome = run_confined(cuda_policy(), [parent](const ConfineReport&) {
    return errno_if(ptrace(PTRACE_ATTACH, parent, nullptr, nullptr) != 0);
  });
  EXPECT_EQ(probe_exit(outcome), EPERM);
}

TEST(SeccompFilter, RefusesReadingTheParentsMemoryThroughProcessVmReadv) {
  pid_t parent = getpid();
  static int secret = 42;
  auto outcome = run_confined(cuda_policy(), [parent](const ConfineReport&) {
    int copy = 0;
    iovec local{&copy, sizeof(copy)};
    iovec remote{&secret, sizeof(secret)};
    return errno_if(process_vm_readv(parent, &local, 1, &remote, 1, 0) < 0);
  });
  EXPECT_EQ(probe_exit(outcome), EPERM);
}

TEST(SeccompFilter, RefusesSignalsToTheParentAndAllowsThemToItself) {
  pid_t parent = getpid();
  auto outcome = run_confined(cuda_policy(), [parent](const ConfineReport&) {
    if (kill(parent, 0) == 0 || errno != EPERM) return 1;
    if (kill(-1, 0) == 0 || errno != EPERM) return 2;  // every process it may signal
    if (kill(0, 0) == 0 || errno != EPERM) return 3;   // its process group, the parent's here
    if (syscall(SYS_tgkill, parent, parent, 0) == 0 || errno != EPERM) return 4;
    if (syscall(SYS_tkill, parent, 0) == 0 || errno != EPERM) return 5;
    if (syscall(SYS_pidfd_open, parent, 0) >= 0 || errno != EPERM) return 6;
    if (kill(getpid(), 0) != 0) return 7;
    if (syscall(SYS_tgkill, getpid(), gettid(), 0) != 0) return 8;
    int own = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
    return own >= 0 ? 0 : 9;
  });
  EXPECT_EQ(probe_exit(outcome), 0);
}

TEST(SeccompFilter, LetsTheProcessRaiseAndCatchASignal) {
  auto outcome = run_confined(cuda_policy(), [](const ConfineReport&) {
    static volatile sig_atomic_t caught = 0;
    signal(SIGUSR1, [](int) { caught = 1; });
    raise(SIGUSR1);  // tgkill(own pid, own tid)
    return caught == 1 ? 0 : 1;
  });
  EXPECT_EQ(probe_exit(outcome), 0);
}

TEST(SeccompFilter, RefusesNamespacesMountsAndIoUring) {
  auto outcome = run_confined(cuda_policy(), [](const ConfineReport&) {
    if (unshare(CLONE_NEWUSER) == 0 || errno != EPERM) return 1;
    if (syscall(SYS_setns, 0, 0) == 0 || errno != EPERM) return 2;
    if (syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, nullptr) == 0 || errno != EPERM) return 3;
    if (syscall(SYS_fsopen, "tmpfs", 0) >= 0 || errno != EPERM) return 4;
    if (syscall(SYS_io_uring_setup, 1, nullptr) >= 0 || errno != EPERM) return 5;
    if (syscall(SYS_bpf, 0, nullptr, 0) >= 0 || errno != EPERM) return 6;
    if (syscall(SYS_userfaultfd, 0) >= 0 || errno != EPERM) return 7;
    if (syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0) >= 0 || errno != EPERM) return 8;
    return 0;
  });
  EXPECT_EQ(probe_exit(outcome), 0);
}

TEST(SeccompFilter, AllowsOnlyThePersonalityQuery) {
  auto outcome = run_confined(cuda_policy(), [](const ConfineReport&) {
    if (personality(0xffffffff) < 0) return 1;
    return errno_if(personality(0x0400000 /* READ_IMPLIES_EXEC */) < 0);
  });
  EXPECT_EQ(probe_exit(outcome), EPERM);
}

#if defined(__x86_64__)
TEST(SeccompFilter, KillsTheProcessOnAnI386SystemCall) {
  auto outcome = run_confined(cuda_policy(), [](const ConfineReport&) {
    long result = 20;  // getpid on i386
    asm volatile("int $0x80" : "+a"(result) : : "memory");
    return 0;  // reached only if the call was let through
  });
  EXPECT_EQ(outcome.signal, SIGSYS);
}

TEST(SeccompFilter, KillsTheProcessOnAnX32SystemCall) {
  auto outcome = run_confined(cuda_policy(), [](const ConfineReport&) {
    syscall(0x40000000L | SYS_getpid);
    return 0;
  });
  EXPECT_EQ(outcome.signal, SIGSYS);
}
#endif

}  // namespace
}  // namespace kiln::testing
