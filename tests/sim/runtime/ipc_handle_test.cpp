#include "ipc_handle.h"

#include <gtest/gtest.h>

#include <cstring>

namespace kiln::sim::runtime {
namespace {

cudaIpcMemHandle_t encoded(const std::string& name, uint64_t size) {
  cudaIpcMemHandle_t handle{};
  EXPECT_TRUE(encode_ipc_handle({name, size}, &handle).ok());
  return handle;
}

TEST(IpcHandle, RoundTripsNameAndSize) {
  const std::string name = ipc_object_name(4242, 0x0123456789abcdefull);
  EXPECT_EQ(name, "/kiln-sim-4242-0123456789abcdef");
  auto fields = decode_ipc_handle(encoded(name, 4096));
  ASSERT_TRUE(fields.ok()) << fields.error().message;
  EXPECT_EQ(fields->name, name);
  EXPECT_EQ(fields->size, 4096u);
}

TEST(IpcHandle, LongestPidStillFits) {
  const std::string name = ipc_object_name(2147483647, ~0ull);
  EXPECT_LE(name.size(), kIpcMaxNameBytes);
  EXPECT_TRUE(decode_ipc_handle(encoded(name, 1)).ok());
}

TEST(IpcHandle, RefusesHandlesItDidNotWrite) {
  cudaIpcMemHandle_t zero{};
  auto decoded = decode_ipc_handle(zero);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.error().message.find("magic"), std::string::npos);

  cudaIpcMemHandle_t version = encoded(ipc_object_name(1, 2), 64);
  version.reserved[4] = 9;
  EXPECT_NE(decode_ipc_handle(version).error().message.find("version"), std::string::npos);

  cudaIpcMemHandle_t padding = encoded(ipc_object_name(1, 2), 64);
  padding.reserved[63] = 1;
  EXPECT_NE(decode_ipc_handle(padding).error().message.find("padding"), std::string::npos);

  cudaIpcMemHandle_t empty = encoded(ipc_object_name(1, 2), 64);
  std::memset(empty.reserved + 8, 0, 8);  // size 0
  EXPECT_FALSE(decode_ipc_handle(empty).ok());
}

TEST(IpcHandle, RefusesNamesOutsideKilnsObjects) {
  cudaIpcMemHandle_t handle{};
  EXPECT_FALSE(encode_ipc_handle({"/../../etc/passwd", 8}, &handle).ok());
  EXPECT_FALSE(encode_ipc_handle({"/kiln-sim-1/../x", 8}, &handle).ok());
  EXPECT_FALSE(
      encode_ipc_handle({std::string("/kiln-sim-") + std::string(60, '1'), 8}, &handle).ok());

  // A written handle whose name is then changed byte by byte into a path.
  cudaIpcMemHandle_t changed = encoded(ipc_object_name(7, 8), 64);
  changed.reserved[16 + 11] = '/';
  EXPECT_FALSE(decode_ipc_handle(changed).ok());
}

}  // namespace
}  // namespace kiln::sim::runtime
