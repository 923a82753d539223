// The 64 bytes of a cudaIpcMemHandle_t as the simulated runtime fills them: the name and size
// of the POSIX shared-memory object that holds an exported allocation (ipc_memory.h). Layout,
// little-endian: u32 magic 0x4B53494D, u16 version 1, u16 name bytes, u64 size, then the name
// ("/kiln-sim-PID-RANDOM"), NUL-padded to the end. Pure: no runtime state.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "kiln/base/result.h"

namespace kiln::sim::runtime {

inline constexpr uint32_t kIpcHandleMagic = 0x4B53494Du;
inline constexpr uint16_t kIpcHandleVersion = 1;
inline constexpr size_t kIpcHandleHeaderBytes = 16;
inline constexpr size_t kIpcMaxNameBytes = sizeof(cudaIpcMemHandle_t) - kIpcHandleHeaderBytes - 1;

struct IpcHandleFields {
  std::string name;   // the shared-memory object, "/kiln-sim-1234-0123456789abcdef"
  uint64_t size = 0;  // bytes of the allocation
};

// The name for a new object of process `pid` with 64 random bits.
std::string ipc_object_name(int pid, uint64_t random);

// Fails (without writing) when the name does not fit or is not an object name.
Status encode_ipc_handle(const IpcHandleFields& fields, cudaIpcMemHandle_t* handle);

// The fields of a handle this runtime wrote; the error says what is wrong with any other.
Result<IpcHandleFields> decode_ipc_handle(const cudaIpcMemHandle_t& handle);

}  // namespace kiln::sim::runtime
