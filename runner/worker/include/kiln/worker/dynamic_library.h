// A shared object loaded with dlopen(RTLD_NOW | RTLD_LOCAL): every undefined symbol is
// resolved at load (so a missing one is a load error naming it, not a crash later) and
// nothing it defines can interpose on the worker's or another kernel's symbols.
// Handles are never closed: CUDA modules registered by the object stay valid until exit.
#pragma once

#include <filesystem>
#include <string>

#include "kiln/base/result.h"

namespace kiln::worker {

class DynamicLibrary {
 public:
  static Result<DynamicLibrary> open(const std::filesystem::path& path);

  // The address of `name`; an error names the symbol and the file.
  Result<void*> symbol(const std::string& name) const;
  const std::filesystem::path& path() const { return path_; }

 private:
  DynamicLibrary(void* handle, std::filesystem::path path)
      : handle_(handle), path_(std::move(path)) {}
  void* handle_ = nullptr;
  std::filesystem::path path_;
};

}  // namespace kiln::worker
