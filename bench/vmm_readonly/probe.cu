// Can a candidate host undo a read-only mapping of the verifier's inputs? (issue 12)
//
// The verifier would export each input allocation (cuMemCreate, POSIX file descriptor handle)
// and the candidate host would import and map it with CU_MEM_ACCESS_FLAGS_PROT_READ. This probe
// asks the driver what a hostile candidate in the importing process can do about that:
//   1. write through the read-only mapping (expect a fault: run in a child of its own);
//   2. cuMemSetAccess(PROT_READWRITE) on its own read-only mapping;
//   3. cuMemRetainAllocationHandle on the read-only address, then cuMemMap the handle at a new
//      address with PROT_READWRITE, and write there;
//   4. the same as 3, through cuMemExportToShareableHandle + re-import of the handle it holds.
// Each step prints what the driver answered. The exporter is the parent; the importer is a
// child that gets the file descriptor over a socketpair (SCM_RIGHTS), as the host would.
//
// Build: nvcc -O2 -o vmm_probe probe.cu -lcuda ; run: ./vmm_probe
#include <cuda.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#define CHECK(call)                                         \
  do {                                                      \
    CUresult r_ = (call);                                   \
    if (r_ != CUDA_SUCCESS) {                               \
      const char* s_ = nullptr;                             \
      cuGetErrorName(r_, &s_);                              \
      std::printf("FAILED %s: %s\n", #call, s_ ? s_ : "?"); \
      return 1;                                             \
    }                                                       \
  } while (0)

static const char* name(CUresult r) {
  const char* s = nullptr;
  cuGetErrorName(r, &s);
  return s ? s : "?";
}

__global__ void write_one(unsigned* p, unsigned v) { *p = v; }

static int send_fd(int sock, int fd) {
  char byte = 0;
  iovec io{&byte, 1};
  char ctrl[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = ctrl;
  msg.msg_controllen = sizeof ctrl;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock) {
  char byte = 0;
  iovec io{&byte, 1};
  char ctrl[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = ctrl;
  msg.msg_controllen = sizeof ctrl;
  if (recvmsg(sock, &msg, 0) != 1) return -1;
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof(int));
  return fd;
}

static CUmemAllocationProp prop() {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return p;
}

static CUmemAccessDesc access(CUmemAccess_flags flags) {
  CUmemAccessDesc d{};
  d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  d.location.id = 0;
  d.flags = flags;
  return d;
}

// Launches write_one at p and reports what the launch and the synchronize answered.
static CUresult try_write(CUdeviceptr p, unsigned v) {
  write_one<<<1, 1>>>(reinterpret_cast<unsigned*>(p), v);
  return cuCtxSynchronize();
}

static int importer(int sock, size_t size, int step) {
  CHECK(cuInit(0));
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  const int fd = recv_fd(sock);
  CUmemGenericAllocationHandle h;
  CHECK(cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(fd);
  CUdeviceptr ro;
  CHECK(cuMemAddressReserve(&ro, size, 0, 0, 0));
  CHECK(cuMemMap(ro, size, 0, h, 0));
  CUmemAccessDesc rd = access(CU_MEM_ACCESS_FLAGS_PROT_READ);
  CUresult r = cuMemSetAccess(ro, size, &rd, 1);
  std::printf("step %d: import + map + cuMemSetAccess(PROT_READ): %s\n", step, name(r));
  if (r != CUDA_SUCCESS) return 2;
  CHECK(cuMemRelease(h));  // the host keeps only the mapping, as it would
  unsigned long long flags = 0;
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  r = cuMemGetAccess(&flags, &loc, ro);
  std::printf("step %d: cuMemGetAccess -> %s, flags %llu (1 read, 3 read-write)\n", step, name(r),
              flags);
  if (step == 1) {
    r = try_write(ro, 0xdead);
    std::printf("step 1: a kernel writes through the read-only mapping: %s\n", name(r));
    return 0;
  }
  if (step == 2) {
    CUmemAccessDesc rw = access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    r = cuMemSetAccess(ro, size, &rw, 1);
    std::printf("step 2: cuMemSetAccess(PROT_READWRITE) on the host's own mapping: %s\n", name(r));
    if (r == CUDA_SUCCESS) {
      r = try_write(ro, 0x2222);
      std::printf("step 2: write after the upgrade: %s\n", name(r));
    }
    return 0;
  }
  CUmemGenericAllocationHandle again;
  r = cuMemRetainAllocationHandle(&again, reinterpret_cast<void*>(ro));
  std::printf("step %d: cuMemRetainAllocationHandle(read-only address): %s\n", step, name(r));
  if (r != CUDA_SUCCESS) return 0;
  if (step == 4) {
    int fd2 = -1;
    r = cuMemExportToShareableHandle(&fd2, again, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    std::printf("step 4: cuMemExportToShareableHandle(retained): %s\n", name(r));
    if (r != CUDA_SUCCESS) return 0;
    CHECK(cuMemRelease(again));
    r = cuMemImportFromShareableHandle(&again, reinterpret_cast<void*>(static_cast<intptr_t>(fd2)),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    std::printf("step 4: re-import: %s\n", name(r));
    if (r != CUDA_SUCCESS) return 0;
  }
  CUdeviceptr rwp;
  CHECK(cuMemAddressReserve(&rwp, size, 0, 0, 0));
  r = cuMemMap(rwp, size, 0, again, 0);
  std::printf("step %d: cuMemMap(retained handle, new address): %s\n", step, name(r));
  if (r != CUDA_SUCCESS) return 0;
  CUmemAccessDesc rw = access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  r = cuMemSetAccess(rwp, size, &rw, 1);
  std::printf("step %d: cuMemSetAccess(PROT_READWRITE) at the new address: %s\n", step, name(r));
  if (r != CUDA_SUCCESS) return 0;
  r = try_write(rwp, 0x3333 + step);
  std::printf("step %d: write through the new mapping: %s\n", step, name(r));
  return 0;
}

int main() {
  size_t size = 0;
  int ok_children = 0;
  for (int step = 1; step <= 4; ++step) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 1;
    const pid_t pid = fork();  // before the parent touches CUDA in this round
    if (pid == 0) {
      close(sv[0]);
      // The size is the granularity; the parent sends the fd only, so recompute it here.
      cuInit(0);
      CUmemAllocationProp p = prop();
      cuMemGetAllocationGranularity(&size, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
      std::fflush(stdout);
      const int rc = importer(sv[1], size, step);
      std::fflush(stdout);
      char done = 1;
      (void)!write(sv[1], &done, 1);  // the exporter reads the buffer only after this
      _exit(rc);
    }
    close(sv[1]);
    // A fresh exporter and importer per round keep each step's context faults apart.
    const pid_t exporter = fork();
    if (exporter == 0) {
      CHECK(cuInit(0));
      CUdevice dev;
      CHECK(cuDeviceGet(&dev, 0));
      CUcontext ctx;
      CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
      CHECK(cuCtxSetCurrent(ctx));
      CUmemAllocationProp p = prop();
      size_t gran = 0;
      CHECK(cuMemGetAllocationGranularity(&gran, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
      CUmemGenericAllocationHandle h;
      CHECK(cuMemCreate(&h, gran, &p, 0));
      CUdeviceptr va;
      CHECK(cuMemAddressReserve(&va, gran, 0, 0, 0));
      CHECK(cuMemMap(va, gran, 0, h, 0));
      CUmemAccessDesc rw = access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
      CHECK(cuMemSetAccess(va, gran, &rw, 1));
      CHECK(cuMemsetD32(va, 0x1111, gran / 4));
      CHECK(cuCtxSynchronize());
      int fd = -1;
      CHECK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
      send_fd(sv[0], fd);
      close(fd);
      char done = 0;
      (void)!read(sv[0], &done, 1);  // the importer's end (0 bytes if it died)
      unsigned first = 0;
      CHECK(cuMemcpyDtoH(&first, va, sizeof first));
      std::printf("step %d: the exporter reads 0x%x after the importer (0x1111: unchanged)\n", step,
                  first);
      std::fflush(stdout);
      _exit(0);
    }
    close(sv[0]);
    int status = 0;
    waitpid(pid, nullptr, 0);
    waitpid(exporter, &status, 0);
    ok_children += WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  std::printf("rounds finished: %d of 4\n", ok_children);
  return 0;
}
