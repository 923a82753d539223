#include "ipc_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "error_state.h"
#include "ipc_handle.h"
#include "kiln/base/hex.h"

namespace kiln::sim::runtime {
namespace {

std::string errno_text() { return std::strerror(errno); }

uint64_t random_bits() {
  uint64_t value = 0;
  if (getrandom(&value, sizeof value, 0) == static_cast<ssize_t>(sizeof value)) return value;
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

// At exit, unlink what this process still exports, so /dev/shm keeps nothing of it (a process
// that is killed leaves its objects; their names carry its pid). Opened mappings stay valid.
void unlink_exports_at_exit() {
  auto& state = RuntimeState::get();
  std::unique_lock lock(state.mutex, std::try_to_lock);
  if (!lock.owns_lock() || state.ipc_cleanup_pid != getpid()) return;
  for (const auto& [base, exported] : state.ipc_exports) shm_unlink(exported.name.c_str());
}

// A new shared-memory object of `bytes`, mapped; its release unmaps and unlinks it.
cudaError_t create_object(const std::string& name, size_t bytes, ExternalBytes* out) {
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return fail(cudaErrorMapBufferObjectFailed, "cudaIpcGetMemHandle: cannot create /dev/shm" +
                                                    name + ": " + errno_text() +
                                                    "; CUDA IPC in the simulator needs a "
                                                    "writable /dev/shm");
  // Reserve the pages now: a full /dev/shm fails here, not as a SIGBUS in a later copy.
  if (const int error = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); error != 0) {
    close(fd);
    shm_unlink(name.c_str());
    return fail(cudaErrorMemoryAllocation, "cudaIpcGetMemHandle: /dev/shm has no room for " +
                                               std::to_string(bytes) +
                                               " bytes: " + std::strerror(error));
  }
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (data == MAP_FAILED) {
    const std::string why = errno_text();
    shm_unlink(name.c_str());
    return fail(cudaErrorMapBufferObjectFailed,
                "cudaIpcGetMemHandle: cannot map /dev/shm" + name + ": " + why);
  }
  out->data = static_cast<uint8_t*>(data);
  out->size = bytes;
  out->release = [data, bytes, name] {
    munmap(data, bytes);
    shm_unlink(name.c_str());
  };
  return cudaSuccess;
}

// Maps the object a handle names; ENOENT means its allocation is gone.
cudaError_t map_object(const IpcHandleFields& fields, ExternalBytes* out) {
  const std::string path = "/dev/shm" + fields.name;
  const int fd = shm_open(fields.name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0 && errno == ENOENT)
    return fail(cudaErrorInvalidValue,
                "cudaIpcOpenMemHandle: " + path +
                    " does not exist: the exporting process freed the allocation, reset its "
                    "device or exited; export it again while it is live");
  if (fd < 0)
    return fail(cudaErrorMapBufferObjectFailed,
                "cudaIpcOpenMemHandle: cannot open " + path + ": " + errno_text() +
                    "; a confined process needs read-write access to /dev/shm");
  struct stat info {};
  if (fstat(fd, &info) != 0 || static_cast<uint64_t>(info.st_size) != fields.size) {
    close(fd);
    return fail(cudaErrorInvalidValue, "cudaIpcOpenMemHandle: " + path + " is not the " +
                                           std::to_string(fields.size) +
                                           "-byte allocation the handle describes");
  }
  void* data = mmap(nullptr, fields.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (data == MAP_FAILED)
    return fail(cudaErrorMapBufferObjectFailed,
                "cudaIpcOpenMemHandle: cannot map " + path + ": " + errno_text());
  const size_t bytes = fields.size;
  out->data = static_cast<uint8_t*>(data);
  out->size = bytes;
  out->release = [data, bytes] { munmap(data, bytes); };
  return cudaSuccess;
}

}  // namespace

cudaError_t ipc_export(RuntimeState& state, cudaIpcMemHandle_t* handle, void* pointer) {
  if (handle == nullptr) return fail(cudaErrorInvalidValue, "cudaIpcGetMemHandle: null handle");
  if (const cudaError_t sticky = sticky_error(); sticky != cudaSuccess)
    return fail(sticky, "cudaIpcGetMemHandle refused: an earlier launch faulted");
  // A pointer into an allocation exports the whole allocation, as the real runtime does.
  auto allocation = state.allocations.upper_bound(address_of(pointer));
  if (allocation != state.allocations.begin()) --allocation;
  if (allocation == state.allocations.end() || address_of(pointer) < allocation->first ||
      address_of(pointer) - allocation->first >= allocation->second)
    return fail(cudaErrorInvalidValue,
                "cudaIpcGetMemHandle(" + hex(address_of(pointer)) +
                    "): not in a live cudaMalloc allocation (memory opened with "
                    "cudaIpcOpenMemHandle, host memory or freed); pass what cudaMalloc returned");
  const uint64_t base = allocation->first;
  if (auto it = state.ipc_exports.find(base); it != state.ipc_exports.end()) {
    *handle = it->second.handle;  // exporting again is cheap and gives the same handle
    return cudaSuccess;
  }
  if (state.pool_allocations.contains(base))
    return fail(cudaErrorInvalidValue,
                "cudaIpcGetMemHandle: memory from cudaMallocAsync (a stream-ordered pool) cannot "
                "be exported this way; allocate the buffer with cudaMalloc");
  IpcExport exported;
  exported.name = ipc_object_name(getpid(), random_bits());
  if (Status encoded = encode_ipc_handle({exported.name, allocation->second}, &exported.handle);
      !encoded)
    return fail(cudaErrorUnknown, "cudaIpcGetMemHandle: " + encoded.error().message);
  ExternalBytes backing;
  if (cudaError_t error = create_object(exported.name, allocation->second, &backing);
      error != cudaSuccess)
    return error;
  if (Status moved = state.device().move_to_external(base, std::move(backing)); !moved)
    return fail(cudaErrorInvalidValue, "cudaIpcGetMemHandle: " + moved.error().message);
  if (state.ipc_cleanup_pid != getpid()) {
    state.ipc_cleanup_pid = getpid();
    std::atexit(unlink_exports_at_exit);
  }
  *handle = exported.handle;
  state.ipc_exports[base] = std::move(exported);
  return cudaSuccess;
}

cudaError_t ipc_open(RuntimeState& state, void** pointer, const cudaIpcMemHandle_t& handle,
                     unsigned flags) {
  if (pointer == nullptr) return fail(cudaErrorInvalidValue, "cudaIpcOpenMemHandle: null devPtr");
  if ((flags & ~static_cast<unsigned>(cudaIpcMemLazyEnablePeerAccess)) != 0)
    return fail(cudaErrorInvalidValue, "cudaIpcOpenMemHandle: flags " + std::to_string(flags) +
                                           "; pass cudaIpcMemLazyEnablePeerAccess");
  if (const cudaError_t sticky = sticky_error(); sticky != cudaSuccess)
    return fail(sticky, "cudaIpcOpenMemHandle refused: an earlier launch faulted");
  auto fields = decode_ipc_handle(handle);
  if (!fields)
    return fail(cudaErrorInvalidValue, "cudaIpcOpenMemHandle: " + fields.error().message);
  for (const auto& [base, exported] : state.ipc_exports)
    if (exported.name == fields->name)
      return fail(cudaErrorDeviceUninitialized,
                  "cudaIpcOpenMemHandle: the handle was exported by this process, and a CUDA "
                  "runtime refuses to open its own handles; use the pointer cudaMalloc returned");
  for (auto& [base, imported] : state.ipc_imports) {
    if (imported.name != fields->name) continue;
    ++imported.opens;  // opened again: the same pointer, one more close to come
    *pointer = pointer_of(base);
    return cudaSuccess;
  }
  ExternalBytes mapping;
  if (cudaError_t error = map_object(*fields, &mapping); error != cudaSuccess) return error;
  auto address = state.device().map_external(std::move(mapping), "cudaIpcOpenMemHandle");
  if (!address)
    return fail(cudaErrorMapBufferObjectFailed, "cudaIpcOpenMemHandle: " + address.error().message);
  state.mapped_ranges[*address] = fields->size;
  state.ipc_imports[*address] = IpcImport{fields->name, fields->size, 1};
  *pointer = pointer_of(*address);
  return cudaSuccess;
}

cudaError_t ipc_close(RuntimeState& state, void* pointer) {
  const uint64_t base = address_of(pointer);
  auto it = state.ipc_imports.find(base);
  if (it == state.ipc_imports.end())
    return fail(cudaErrorInvalidValue,
                "cudaIpcCloseMemHandle(" + hex(base) +
                    "): not a pointer cudaIpcOpenMemHandle returned, or closed as often as it "
                    "was opened; free cudaMalloc memory with cudaFree");
  if (--it->second.opens > 0) return cudaSuccess;
  state.ipc_imports.erase(it);
  state.mapped_ranges.erase(base);
  if (Status freed = state.device().free(base); !freed)
    return fail(cudaErrorInvalidValue, "cudaIpcCloseMemHandle: " + freed.error().message);
  return cudaSuccess;
}

}  // namespace kiln::sim::runtime
