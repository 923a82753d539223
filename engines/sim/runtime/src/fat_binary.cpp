#include "fat_binary.h"

#include <dlfcn.h>

#include <cstring>

#include "kiln/base/hex.h"

namespace kiln::sim::runtime {
namespace {

constexpr size_t kHeaderBytes = 16;
constexpr size_t kEntryMinBytes = 64;  // through uncompressed_bytes
// nvcc 13 marks a compressed payload with these flag bits (0x2000 LZ4 in older toolkits,
// 0x8000 zstd since CUDA 13); the payload's own magic decides which decoder runs.
constexpr uint64_t kCompressedFlags = 0x2000 | 0x8000;
constexpr unsigned char kZstdMagic[4] = {0x28, 0xB5, 0x2F, 0xFD};
// The registered wrapper gives no size; no real fat binary comes near this.
constexpr size_t kUnboundedLimit = size_t{1} << 32;

template <typename T>
T read_le(const unsigned char* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

}  // namespace

Result<std::vector<FatbinEntry>> parse_fat_binary(const void* data, size_t limit) {
  if (data == nullptr) return make_error("fat binary: null pointer");
  const auto* base = static_cast<const unsigned char*>(data);
  if (limit < kHeaderBytes) return make_error("fat binary: shorter than its 16-byte header");
  const auto magic = read_le<uint32_t>(base);
  if (magic != kFatbinMagic)
    return make_error("fat binary: magic is " + hex(magic) + ", not 0xba55ed50; the object was " +
                      "not produced by nvcc or is corrupt");
  const auto header_bytes = read_le<uint16_t>(base + 6);
  const auto entries_bytes = read_le<uint64_t>(base + 8);
  if (header_bytes < kHeaderBytes || header_bytes > limit)
    return make_error("fat binary: header size " + std::to_string(header_bytes) + " is invalid");
  if (entries_bytes > limit - header_bytes)
    return make_error("fat binary: entries claim " + std::to_string(entries_bytes) +
                      " bytes but only " + std::to_string(limit - header_bytes) + " are there");

  std::vector<FatbinEntry> entries;
  const unsigned char* cursor = base + header_bytes;
  const unsigned char* end = cursor + entries_bytes;
  while (cursor < end) {
    const auto left = static_cast<size_t>(end - cursor);
    if (left < kEntryMinBytes)
      return make_error("fat binary: truncated entry header at offset " +
                        std::to_string(cursor - base));
    const auto entry_header = read_le<uint32_t>(cursor + 4);
    const auto payload_bytes = read_le<uint64_t>(cursor + 8);
    if (entry_header < kEntryMinBytes || entry_header > left || payload_bytes > left - entry_header)
      return make_error("fat binary: entry at offset " + std::to_string(cursor - base) +
                        " runs past the end of the fat binary");
    FatbinEntry entry;
    entry.kind = read_le<uint16_t>(cursor);
    entry.ptx_minor = read_le<uint16_t>(cursor + 24);
    entry.ptx_major = read_le<uint16_t>(cursor + 26);
    entry.arch = read_le<uint32_t>(cursor + 28);
    entry.flags = read_le<uint64_t>(cursor + 40);
    entry.uncompressed_bytes = read_le<uint64_t>(cursor + 56);
    entry.payload = cursor + entry_header;
    entry.payload_bytes = payload_bytes;
    entry.compressed = (entry.flags & kCompressedFlags) != 0 && entry.uncompressed_bytes != 0;
    if (entry.compressed) {
      // The stored size without the padding that aligns the next entry.
      const auto compressed_bytes = read_le<uint32_t>(cursor + 16);
      if (compressed_bytes != 0 && compressed_bytes <= payload_bytes)
        entry.payload_bytes = compressed_bytes;
    }
    entries.push_back(entry);
    cursor += entry_header + payload_bytes;
  }
  return entries;
}

Result<std::vector<FatbinEntry>> parse_fatbin_wrapper(const void* wrapper) {
  if (wrapper == nullptr) return make_error("fat binary wrapper: null pointer");
  const auto* bytes = static_cast<const unsigned char*>(wrapper);
  const auto magic = read_le<uint32_t>(bytes);
  const auto version = read_le<uint32_t>(bytes + 4);
  if (magic != kFatbinWrapperMagic)
    return make_error("fat binary wrapper: magic is " + hex(magic) +
                      ", not 0x466243b1; the object was not produced by nvcc");
  if (version != 1)
    return make_error("fat binary wrapper version " + std::to_string(version) +
                      " (relocatable device code, -rdc) is not supported by the simulator; "
                      "build the candidate without -rdc/-dc");
  const void* data = read_le<const void*>(bytes + 8);
  return parse_fat_binary(data, kUnboundedLimit);
}

Result<std::string> zstd_decompress(const unsigned char* data, size_t bytes,
                                    size_t expected_bytes) {
  using DecompressFn = size_t (*)(void*, size_t, const void*, size_t);
  using IsErrorFn = unsigned (*)(size_t);
  using ErrorNameFn = const char* (*)(size_t);
  // Loaded once and kept: the library is a system component, never unloaded.
  static void* library = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr)
    return make_error(
        "the PTX in this fat binary is zstd-compressed and libzstd.so.1 is not "
        "installed; rebuild the candidate with nvcc --no-compress");
  auto decompress = reinterpret_cast<DecompressFn>(dlsym(library, "ZSTD_decompress"));
  auto is_error = reinterpret_cast<IsErrorFn>(dlsym(library, "ZSTD_isError"));
  auto error_name = reinterpret_cast<ErrorNameFn>(dlsym(library, "ZSTD_getErrorName"));
  if (decompress == nullptr || is_error == nullptr || error_name == nullptr)
    return make_error(
        "libzstd.so.1 lacks ZSTD_decompress; rebuild the candidate with nvcc "
        "--no-compress");
  std::string out(expected_bytes, '\0');
  const size_t written = decompress(out.data(), out.size(), data, bytes);
  if (is_error(written) != 0)
    return make_error(std::string("zstd could not decompress the PTX: ") + error_name(written) +
                      "; rebuild the candidate with nvcc --no-compress");
  out.resize(written);
  return out;
}

Result<std::string> extract_ptx(const std::vector<FatbinEntry>& entries) {
  const FatbinEntry* best = nullptr;
  for (const auto& entry : entries) {
    if (entry.kind != static_cast<uint16_t>(FatbinEntryKind::kPtx)) continue;
    if (best == nullptr || entry.arch > best->arch) best = &entry;
  }
  if (best == nullptr)
    return make_error(
        "the fat binary holds no PTX (only SASS), and the simulator runs PTX; "
        "rebuild with -gencode arch=compute_90a,code=compute_90a (or add that "
        "-gencode), or point KILN_SIM_PTX at the kernel's .ptx file");
  std::string text;
  if (best->compressed) {
    if (best->payload_bytes < 4 || std::memcmp(best->payload, kZstdMagic, 4) != 0)
      return make_error(
          "the PTX in this fat binary is compressed in a format the simulator "
          "does not read (flags " +
          hex(best->flags) + "); rebuild the candidate with nvcc --no-compress");
    auto decompressed =
        zstd_decompress(best->payload, best->payload_bytes, best->uncompressed_bytes);
    if (!decompressed) return decompressed.error();
    text = std::move(decompressed.value());
  } else {
    text.assign(reinterpret_cast<const char*>(best->payload), best->payload_bytes);
  }
  // The payload is padded with NULs to an 8-byte boundary.
  if (const auto nul = text.find('\0'); nul != std::string::npos) text.resize(nul);
  return text;
}

}  // namespace kiln::sim::runtime
