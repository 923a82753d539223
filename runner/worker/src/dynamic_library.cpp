#include "kiln/worker/dynamic_library.h"

#include <dlfcn.h>

namespace kiln::worker {

Result<DynamicLibrary> DynamicLibrary::open(const std::filesystem::path& path) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return make_error(
        "cannot load " + path.filename().string() + ": " + (why ? why : "unknown dlopen error") +
        "; an undefined symbol means the code calls something that is not linked (only the CUDA "
        "runtime is)");
  }
  return DynamicLibrary(handle, path);
}

Result<void*> DynamicLibrary::symbol(const std::string& name) const {
  dlerror();
  void* address = dlsym(handle_, name.c_str());
  if (address == nullptr) {
    return make_error(path_.filename().string() + " does not export `" + name +
                      "`; declare it extern \"C\" with the signature in kiln/abi.h");
  }
  return address;
}

}  // namespace kiln::worker
