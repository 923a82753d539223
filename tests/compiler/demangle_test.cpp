// demangle.h: readable kernel names.
#include "kiln/compiler/demangle.h"

#include <gtest/gtest.h>

namespace kiln::compiler {
namespace {

TEST(Demangle, TurnsMangledNamesIntoSignatures) {
  EXPECT_EQ(demangle("_Z1kPfi"), "k(float*, int)");
  EXPECT_EQ(demangle("_Z14gemm_tn_kernelPK6__halfS1_PS_lllll"),
            "gemm_tn_kernel(__half const*, __half const*, __half*, long, long, long, long, long)");
}

TEST(Demangle, LeavesCNamesAndGarbageAlone) {
  EXPECT_EQ(demangle("kiln_launch"), "kiln_launch");
  EXPECT_EQ(demangle("_Znot-a-name"), "_Znot-a-name");
  EXPECT_EQ(demangle(""), "");
}

}  // namespace
}  // namespace kiln::compiler
