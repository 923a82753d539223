// C++ symbol names as a reader writes them: _Z1kPfi -> k(float*, int).
#pragma once

#include <string>

namespace kiln::compiler {

// The readable name of an Itanium-mangled symbol; anything else (a C name) unchanged.
std::string demangle(const std::string& name);

}  // namespace kiln::compiler
