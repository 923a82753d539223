// The device code nvcc embeds in a host object: a fat binary, registered at load time through
// __cudaRegisterFatBinary. The simulator runs PTX, so this finds the PTX entry and returns its
// text (decompressing it when nvcc compressed it).
//
// Layout, as nvcc 13 writes it (little-endian):
//   wrapper  {u32 magic 0x466243B1, u32 version, const void* fatbin, void* unused}
//   header   {u32 magic 0xBA55ED50, u16 version, u16 header_bytes, u64 entries_bytes}
//   entries  {u16 kind (1 PTX, 2 ELF), u16 version, u32 header_bytes, u64 payload_bytes,
//             u32 compressed_bytes, u32 _, u16 ptx_minor, u16 ptx_major, u32 arch,
//             u32 name_offset, u32 name_bytes, u64 flags, u64 _, u64 uncompressed_bytes, ...}
//            each followed by its payload; the next entry starts after header + payload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::sim::runtime {

inline constexpr uint32_t kFatbinWrapperMagic = 0x466243B1u;
inline constexpr uint32_t kFatbinMagic = 0xBA55ED50u;

enum class FatbinEntryKind : uint16_t { kPtx = 1, kElf = 2 };

struct FatbinEntry {
  uint16_t kind = 0;
  uint32_t arch = 0;  // 90 for compute_90 / compute_90a
  uint16_t ptx_major = 0, ptx_minor = 0;
  uint64_t flags = 0;
  bool compressed = false;
  uint64_t uncompressed_bytes = 0;
  const unsigned char* payload = nullptr;  // points into the fat binary
  uint64_t payload_bytes = 0;              // stored bytes (compressed size when compressed)
};

// The entries of a fat binary that starts at `data`. `limit` bounds how far parsing may read
// (the header's own size is trusted only up to it); pass the section size when known.
Result<std::vector<FatbinEntry>> parse_fat_binary(const void* data, size_t limit);

// The same, starting from the __fatBinC_Wrapper_t that __cudaRegisterFatBinary receives.
Result<std::vector<FatbinEntry>> parse_fatbin_wrapper(const void* wrapper);

// The PTX text of the best PTX entry (the highest arch), decompressed and without padding.
// Fails with advice (rebuild with -gencode arch=compute_90a,code=compute_90a, or set
// KILN_SIM_PTX) when there is none.
Result<std::string> extract_ptx(const std::vector<FatbinEntry>& entries);

// Decompresses a zstd frame through the system's libzstd.so.1, loaded on first use.
Result<std::string> zstd_decompress(const unsigned char* data, size_t bytes, size_t expected_bytes);

}  // namespace kiln::sim::runtime
