// Where the GPU test finds the zoo's sources (kb/zoo) and its built kernels
// (BUILD/zoo/zoo_<ID>.so), so a build folder carried to another machine still works:
//   sources: $KILN_ZOO_DIR, else the source tree this binary was configured from, else
//            kb/zoo under the current directory or one of its parents;
//   kernels: $KILN_ZOO_LIB_DIR, else the build tree's zoo/ folder, else ../../zoo beside
//            this executable (BUILD/tests/gpu/ -> BUILD/zoo/).
#pragma once

#include <filesystem>

namespace kiln::zoo {

std::filesystem::path zoo_source_dir();   // empty when none is found
std::filesystem::path zoo_library_dir();  // empty when none is found

}  // namespace kiln::zoo
