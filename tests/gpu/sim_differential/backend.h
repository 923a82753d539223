// One interface over the two machines a differential case runs on: the real GPU through the
// CUDA driver API (gpu_backend.cpp) and the CPU PTX simulator (sim_backend.cpp). A case is
// written once against Backend and run on both; its outputs are then compared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace kiln::simdiff {

struct Dim {
  uint32_t x = 1, y = 1, z = 1;
};

// The fields of a 2D/ND tiled tensor map, as cuTensorMapEncodeTiled takes them.
struct TiledMap {
  uint32_t rank = 2;
  uint32_t data_type = 0;  // CUtensorMapDataType
  uint32_t element_bytes = 0;
  uint64_t global_address = 0;
  uint64_t global_dim[5] = {};
  uint64_t global_stride_bytes[5] = {};  // [1..rank-1] used
  uint32_t box_dim[5] = {};
  uint32_t element_strides[5] = {1, 1, 1, 1, 1};
  uint32_t swizzle = 0;   // 0 none, 1 32B, 2 64B, 3 128B
  uint32_t oob_fill = 0;  // 0 zeros
};

// Packs kernel arguments with their natural alignment, as the .param layout expects.
class Params {
 public:
  template <typename T>
  Params& add(const T& value, size_t align = alignof(T)) {
    size_t offset = (bytes_.size() + align - 1) / align * align;
    bytes_.resize(offset + sizeof(T));
    std::memcpy(bytes_.data() + offset, &value, sizeof(T));
    offsets_.push_back(offset);
    return *this;
  }
  const std::vector<std::byte>& bytes() const { return bytes_; }
  // Where each argument starts in bytes(), in order (one per .param of the kernel).
  const std::vector<size_t>& offsets() const { return offsets_; }

 private:
  std::vector<std::byte> bytes_;
  std::vector<size_t> offsets_;
};

struct alignas(64) MapBytes {
  unsigned char bytes[128];
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Every call returns an empty string on success, otherwise what went wrong.
  virtual std::string load(const std::string& ptx, const std::string& label) = 0;
  virtual std::string allocate(size_t bytes, uint64_t* address) = 0;
  virtual std::string upload(uint64_t address, const void* data, size_t bytes) = 0;
  virtual std::string download(void* data, uint64_t address, size_t bytes) = 0;
  // Launches `kernel` of the module last loaded, and waits for it.
  virtual std::string launch(const std::string& kernel, Dim grid, Dim block, uint32_t shared,
                             const Params& params) = 0;
  virtual std::string encode_map(const TiledMap& map, MapBytes* out) = 0;
  // Frees what the last case allocated and unloads its module.
  virtual void reset() = 0;
};

std::unique_ptr<Backend> make_sim_backend();
// Null with `error` set when there is no usable GPU (no driver, no device).
std::unique_ptr<Backend> make_gpu_backend(std::string* error);

}  // namespace kiln::simdiff
