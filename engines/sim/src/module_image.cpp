#include "module_image.h"

#include <bit>
#include <cstring>

#include "kiln/ptx/parser.h"

namespace kiln::sim {

namespace {

uint32_t variable_align(const ptx::Variable& v) {
  if (v.align != 0) return v.align;
  return std::max<uint32_t>(1, ptx::type_bits(v.type) / 8);
}

// Writes an initializer's values, element by element, into `out` (bounded by `size`).
class InitWriter {
 public:
  InitWriter(uint8_t* out, uint64_t size, ptx::Type type, const SymbolTable& symbols)
      : out_(out),
        size_(size),
        type_(type),
        symbols_(symbols),
        element_(std::max<uint32_t>(1, ptx::type_bits(type) / 8)) {}

  Status write(const ptx::Initializer& init) {
    using Kind = ptx::Initializer::Kind;
    if (init.kind == Kind::List) {
      for (const ptx::Initializer& e : init.elements) {
        Status s = write(e);
        if (!s) return s;
      }
      return Ok{};
    }
    uint64_t bits = 0;
    if (init.kind == Kind::Symbol) {
      auto it = symbols_.find(init.symbol);
      if (it == symbols_.end()) {
        return make_error("initializer names '" + init.symbol +
                          "', which is not a .global or .const variable of this module");
      }
      bits = it->second.address + static_cast<uint64_t>(init.offset);
    } else if (type_ == ptx::Type::F32) {
      float f = init.number.format == ptx::NumberFormat::HexF32
                    ? std::bit_cast<float>(static_cast<uint32_t>(init.number.bits))
                    : static_cast<float>(init.number.as_double());
      bits = std::bit_cast<uint32_t>(f);
    } else if (type_ == ptx::Type::F64) {
      bits = init.number.format == ptx::NumberFormat::HexF64
                 ? init.number.bits
                 : std::bit_cast<uint64_t>(init.number.as_double());
    } else {
      bits = init.number.bits;
    }
    if (offset_ + element_ > size_) {
      return make_error("initializer has more elements than the variable holds");
    }
    std::memcpy(out_ + offset_, &bits, element_);  // little-endian: low bytes first
    offset_ += element_;
    return Ok{};
  }

 private:
  uint8_t* out_;
  uint64_t size_;
  ptx::Type type_;
  const SymbolTable& symbols_;
  uint32_t element_;
  uint64_t offset_ = 0;
};

}  // namespace

Result<std::unique_ptr<ModuleImage>> ModuleImage::load(std::string_view ptx_text,
                                                       std::string_view name,
                                                       GlobalMemory& memory) {
  ptx::ParseOptions options;
  options.source_name = std::string(name);
  Result<ptx::ParsedModule> parsed = ptx::parse_ptx(ptx_text, options);
  if (!parsed) return make_error(parsed.error().message);
  auto image = std::make_unique<ModuleImage>();
  image->name_ = std::string(name);
  image->module_ = std::move(parsed->module);
  image->source_map_ = ptx::SourceMap::build(image->module_);
  // Place every sized .global/.const variable first (initializers may name each other).
  for (const ptx::Variable& v : image->module_.variables) {
    Space space = space_of(v.space);
    if (space != Space::Global && space != Space::Const) continue;
    std::optional<uint64_t> size = v.size_bytes();
    if (!size) continue;
    (void)variable_align(v);  // allocations are 256-byte aligned, enough for any variable
    Result<uint64_t> address = memory.allocate(*size, "module variable " + v.name);
    if (!address) return make_error(address.error().message);
    image->globals_[v.name] = {space, *address};
  }
  for (const ptx::Variable& v : image->module_.variables) {
    auto it = image->globals_.find(v.name);
    if (it == image->globals_.end() || !v.init) continue;
    uint64_t size = *v.size_bytes();
    InitWriter writer(memory.bytes(it->second.address, size), size, v.type, image->globals_);
    Status s = writer.write(*v.init);
    if (!s)
      return make_error(std::string(name) + ": variable " + v.name + ": " + s.error().message);
  }
  return image;
}

const ptx::Function* ModuleImage::find_kernel(std::string_view kernel) const {
  for (const ptx::Function& f : module_.functions) {
    if (f.is_kernel() && f.has_body && f.name == kernel) return &f;
  }
  return nullptr;
}

Result<KernelInfo> ModuleImage::kernel_info(std::string_view kernel) const {
  const ptx::Function* f = find_kernel(kernel);
  if (f == nullptr) {
    std::string names;
    for (const ptx::Function& g : module_.functions) {
      if (g.is_kernel() && g.has_body) names += (names.empty() ? "" : ", ") + g.name;
    }
    return make_error("module '" + name_ + "' has no kernel '" + std::string(kernel) +
                      "'; its kernels are: " + (names.empty() ? "(none)" : names) +
                      " (names are mangled unless declared extern \"C\")");
  }
  KernelInfo info;
  info.name = f->name;
  uint32_t offset = 0;
  for (const ptx::Variable& p : f->params) {
    ParamSlot slot;
    slot.name = p.name;
    slot.size = static_cast<uint32_t>(p.size_bytes().value_or(8));
    slot.align = variable_align(p);
    offset = (offset + slot.align - 1) / slot.align * slot.align;
    slot.offset = offset;
    offset += slot.size;
    info.params.push_back(slot);
  }
  info.param_bytes = offset;
  auto* self = const_cast<ModuleImage*>(this);
  Result<const Program*> program = self->program(kernel);
  if (program) info.static_shared_bytes = (*program)->shared_static_bytes;
  for (const ptx::FunctionAttribute& a : f->attributes) {
    auto dim = [&](size_t i) {
      return i < a.values.size() ? static_cast<uint32_t>(a.values[i]) : 1;
    };
    if (a.name == "maxntid") info.max_threads = dim(0) * dim(1) * dim(2);
    if (a.name == "reqntid") info.required_block = {dim(0), dim(1), dim(2)};
    if (a.name == "reqnctapercluster" || a.name == "explicitcluster") {
      if (!a.values.empty()) info.cluster = {dim(0), dim(1), dim(2)};
    }
  }
  if (info.required_block.x == 1 && info.required_block.y == 1 && info.required_block.z == 1) {
    bool has = false;
    for (const ptx::FunctionAttribute& a : f->attributes) has |= a.name == "reqntid";
    if (!has) info.required_block = {0, 0, 0};
  }
  return info;
}

Result<const Program*> ModuleImage::program(std::string_view kernel) {
  auto it = programs_.find(std::string(kernel));
  if (it != programs_.end()) return static_cast<const Program*>(it->second.get());
  const ptx::Function* f = find_kernel(kernel);
  if (f == nullptr) {
    Result<KernelInfo> info = kernel_info(kernel);
    return make_error(info ? "no kernel" : info.error().message);
  }
  auto program = std::make_unique<Program>(decode_kernel(module_, *f, globals_));
  const Program* raw = program.get();
  programs_.emplace(std::string(kernel), std::move(program));
  return raw;
}

Result<uint64_t> ModuleImage::symbol_address(std::string_view symbol) const {
  auto it = globals_.find(std::string(symbol));
  if (it == globals_.end()) {
    return make_error("module '" + name_ + "' has no .global or .const variable '" +
                      std::string(symbol) +
                      "' (a __device__ or __constant__ variable; the name "
                      "is mangled unless declared extern \"C\")");
  }
  return it->second.address;
}

std::string ModuleImage::source_of(uint32_t ptx_line) const {
  if (ptx_line == 0) return "";
  std::optional<ptx::SourcePosition> p = source_map_.at_ptx_line(ptx_line);
  if (!p || p->line == 0) return "";
  return ptx::to_string(*p);
}

}  // namespace kiln::sim
