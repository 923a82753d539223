// loaded_libraries.h: the candidate host reports what it has loaded; the verifier matches the
// names against the task's banned prefixes.
#include "kiln/worker/loaded_libraries.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kiln::worker {
namespace {

TEST(LoadedLibraries, ListsThisProcesssObjectsOnceEach) {
  LoadedLibraries libraries;
  const std::vector<std::string> first = libraries.new_since_last();
  EXPECT_TRUE(std::any_of(first.begin(), first.end(),
                          [](const std::string& n) { return n.rfind("libc.so", 0) == 0; }));
  EXPECT_TRUE(libraries.new_since_last().empty());  // nothing new loaded since
}

TEST(LoadedLibraries, BannedPrefixesMatchTheNameWithoutLib) {
  const std::vector<std::string> loaded = {"libcudart.so.13", "libcublasLt.so.13", "libcupti.so.13",
                                           "libcudnn_ops.so.9", "cutlass_x.so"};
  const auto found = banned_among(loaded, {"cublas", "cudnn", "cutlass"});
  ASSERT_EQ(found.size(), 3u);
  EXPECT_NE(found[0].find("libcublasLt.so.13"), std::string::npos);
  EXPECT_NE(found[0].find("bans cublas"), std::string::npos);
  EXPECT_NE(found[2].find("cutlass_x.so"), std::string::npos);
  EXPECT_TRUE(banned_among(loaded, {}).empty());
  EXPECT_TRUE(banned_among({"libcudart.so.13"}, {"cublas"}).empty());
}

}  // namespace
}  // namespace kiln::worker
