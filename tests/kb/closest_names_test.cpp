#include "kiln/kb/closest_names.h"

#include <gtest/gtest.h>

namespace kiln::kb {
namespace {

TEST(ClosestNames, PrefersContainmentThenSharedWordsThenEdits) {
  std::vector<std::string> names = {"gemm_naive", "gemm_wgmma_tma",
                                    "gemm_warp_specialized_persistent", "softmax_online"};
  EXPECT_EQ(closest_names("gemm_wgmma", names, 1), std::vector<std::string>{"gemm_wgmma_tma"});
  EXPECT_EQ(closest_names("softmx_online", names, 1), std::vector<std::string>{"softmax_online"});
  EXPECT_TRUE(closest_names("zzzzzz", names).empty());
  EXPECT_EQ(closest_names("gemm_wrap", names, 1),
            std::vector<std::string>{"gemm_warp_specialized_persistent"});
  EXPECT_EQ(closest_names("mbarrier.try_wiat", {"mbarrier.try_wait", "bar.sync"}, 2),
            std::vector<std::string>{"mbarrier.try_wait"});
}

}  // namespace
}  // namespace kiln::kb
