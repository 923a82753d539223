// The simulator side of a differential case: kiln::sim::Device.
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "backend.h"
#include "kiln/sim/device.h"
#include "kiln/sim/tensor_map.h"

namespace kiln::simdiff {
namespace {

uint32_t element_bytes_of(uint32_t data_type) {
  switch (data_type) {
    case 0:
      return 1;  // UINT8
    case 1:
    case 6:
    case 9:
    case 10:
      return 2;  // UINT16, FLOAT16, BFLOAT16, FLOAT16_FTZ
    case 3:
    case 4:
    case 7:
    case 8:
    case 11:
    case 12:
      return 4;
    default:
      return 8;
  }
}

class SimBackend : public Backend {
 public:
  std::string name() const override { return "sim"; }

  std::string load(const std::string& ptx, const std::string& label) override {
    if (const char* dir = std::getenv("KILN_DIFF_DUMP_PTX")) {  // for checking with ptxas
      std::ofstream(std::string(dir) + "/" + std::to_string(dumped_++) + ".ptx") << ptx;
    }
    Result<sim::ModuleHandle> m = device_->load_module(ptx, label);
    if (!m.ok()) return m.error().message;
    module_ = *m;
    return "";
  }
  std::string allocate(size_t bytes, uint64_t* address) override {
    Result<uint64_t> a = device_->allocate(bytes);
    if (!a.ok()) return a.error().message;
    *address = *a;
    allocations_.push_back(*a);
    return "";
  }
  std::string upload(uint64_t address, const void* data, size_t bytes) override {
    Status s = device_->copy_to_device(address, data, bytes);
    return s.ok() ? "" : s.error().message;
  }
  std::string download(void* data, uint64_t address, size_t bytes) override {
    Status s = device_->copy_to_host(data, address, bytes);
    return s.ok() ? "" : s.error().message;
  }
  std::string launch(const std::string& kernel, Dim grid, Dim block, uint32_t shared,
                     const Params& params) override {
    sim::LaunchConfig config;
    config.grid = {grid.x, grid.y, grid.z};
    config.block = {block.x, block.y, block.z};
    config.dynamic_shared_bytes = shared;
    Result<sim::LaunchReport> r = device_->launch(module_, kernel, config, params.bytes());
    if (!r.ok()) return r.error().message;
    if (!r->ok()) {
      const sim::LaunchFault& f = r->faults.front();
      return f.kind + ": " + f.message + " [" + f.instruction + " line " +
             std::to_string(f.ptx_line) + "]";
    }
    return "";
  }
  std::string encode_map(const TiledMap& map, MapBytes* out) override {
    sim::TensorMapDesc d;
    d.rank = map.rank;
    d.data_type = map.data_type;
    d.element_bytes = map.element_bytes ? map.element_bytes : element_bytes_of(map.data_type);
    d.global_address = map.global_address;
    for (uint32_t i = 0; i < map.rank; ++i) {
      d.global_dim[i] = map.global_dim[i];
      d.global_stride_bytes[i] = i == 0 ? d.element_bytes : map.global_stride_bytes[i];
      d.box_dim[i] = map.box_dim[i];
      d.element_strides[i] = map.element_strides[i];
    }
    d.swizzle = map.swizzle;
    d.oob_fill = map.oob_fill;
    std::memset(out->bytes, 0, sizeof(out->bytes));
    sim::encode_tensor_map(d, out->bytes);
    return "";
  }
  void reset() override {
    // A fresh device per case: nothing one case leaves behind reaches the next.
    allocations_.clear();
    device_ = std::make_unique<sim::Device>();
  }

 private:
  std::unique_ptr<sim::Device> device_ = std::make_unique<sim::Device>();
  sim::ModuleHandle module_ = 0;
  std::vector<uint64_t> allocations_;
  int dumped_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_sim_backend() { return std::make_unique<SimBackend>(); }

}  // namespace kiln::simdiff
