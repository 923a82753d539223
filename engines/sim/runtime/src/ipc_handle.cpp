#include "ipc_handle.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace kiln::sim::runtime {
namespace {

// "/kiln-sim-" then digits, '-' and hex digits: what ipc_object_name writes, and nothing that
// could name a path outside /dev/shm.
bool is_object_name(const std::string& name) {
  constexpr const char* kPrefix = "/kiln-sim-";
  if (name.size() <= std::strlen(kPrefix) || name.rfind(kPrefix, 0) != 0) return false;
  for (size_t i = std::strlen(kPrefix); i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string ipc_object_name(int pid, uint64_t random) {
  char name[64];
  std::snprintf(name, sizeof name, "/kiln-sim-%d-%016llx", pid,
                static_cast<unsigned long long>(random));
  return name;
}

Status encode_ipc_handle(const IpcHandleFields& fields, cudaIpcMemHandle_t* handle) {
  if (fields.name.size() > kIpcMaxNameBytes || !is_object_name(fields.name))
    return make_error("shared-memory object name '" + fields.name + "' does not fit a handle");
  unsigned char bytes[sizeof(cudaIpcMemHandle_t)] = {};
  const uint16_t name_bytes = static_cast<uint16_t>(fields.name.size());
  std::memcpy(bytes, &kIpcHandleMagic, 4);
  std::memcpy(bytes + 4, &kIpcHandleVersion, 2);
  std::memcpy(bytes + 6, &name_bytes, 2);
  std::memcpy(bytes + 8, &fields.size, 8);
  std::copy(fields.name.begin(), fields.name.end(), bytes + kIpcHandleHeaderBytes);  // NUL-padded
  std::memcpy(handle, bytes, sizeof bytes);
  return Ok{};
}

Result<IpcHandleFields> decode_ipc_handle(const cudaIpcMemHandle_t& handle) {
  unsigned char bytes[sizeof(cudaIpcMemHandle_t)];
  std::memcpy(bytes, &handle, sizeof bytes);
  uint32_t magic = 0;
  uint16_t version = 0, name_bytes = 0;
  IpcHandleFields fields;
  std::memcpy(&magic, bytes, 4);
  std::memcpy(&version, bytes + 4, 2);
  std::memcpy(&name_bytes, bytes + 6, 2);
  std::memcpy(&fields.size, bytes + 8, 8);
  if (magic != kIpcHandleMagic)
    return make_error(
        "the handle was not made by cudaIpcGetMemHandle of kiln's simulated runtime (wrong "
        "magic); pass the 64 bytes the exporting process got, unchanged");
  if (version != kIpcHandleVersion)
    return make_error("the handle has version " + std::to_string(version) +
                      ", this runtime reads " + std::to_string(kIpcHandleVersion) +
                      "; build both processes from one kiln");
  if (name_bytes == 0 || name_bytes > kIpcMaxNameBytes || fields.size == 0)
    return make_error("the handle's name length or size is out of range; it is damaged");
  fields.name.assign(reinterpret_cast<const char*>(bytes + kIpcHandleHeaderBytes), name_bytes);
  for (size_t i = kIpcHandleHeaderBytes + name_bytes; i < sizeof bytes; ++i)
    if (bytes[i] != 0) return make_error("the handle's padding is not zero; it is damaged");
  if (!is_object_name(fields.name))
    return make_error("the handle names '" + fields.name +
                      "', not a kiln shared-memory object; it is damaged");
  return fields;
}

}  // namespace kiln::sim::runtime
