// Where kiln's other programs are: beside the running one. Every program builds into
// build*/bin and installs into one bin folder (kiln, kiln-worker, kiln-sim-run together).
#pragma once

#include <filesystem>
#include <string_view>

namespace kiln {

// `name` in the folder of the running executable; the bare name (for a PATH lookup) when
// /proc/self/exe cannot be read.
std::filesystem::path program_beside_self(std::string_view name);

}  // namespace kiln
