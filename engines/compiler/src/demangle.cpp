#include "kiln/compiler/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace kiln::compiler {

std::string demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : name;
}

}  // namespace kiln::compiler
