// Small hand-written kernels with known control flow, shared by the CFG and dataflow tests.
#pragma once

#include <string>

#include "ptx_test_support.h"

namespace kiln::ptx::testing {

// B0: entry (branch on %tid) | B1: else arm | B2: then arm | B3: join | B4: virtual exit.
inline std::string diamond(std::string_view predicate_source = "%tid.x") {
  return kernel("\tmov.u32 %r1, " + std::string(predicate_source) +
                ";\n"
                "\tsetp.lt.u32 %p1, %r1, 16;\n"
                "\t@%p1 bra $THEN;\n"
                "\tmov.u32 %r2, 1;\n"
                "\tbra.uni $JOIN;\n"
                "$THEN:\n"
                "\tmov.u32 %r2, 2;\n"
                "$JOIN:\n"
                "\tld.param.u64 %rd1, [k_out];\n"
                "\tst.global.u32 [%rd1], %r2;\n"
                "\tret;");
}

// B0: preheader | B1: loop body and latch (trip count from `bound`) | B2: after | B3: exit.
inline std::string counted_loop(std::string_view bound = "%tid.x") {
  return kernel("\tmov.u32 %r2, " + std::string(bound) +
                ";\n"
                "\tmov.u32 %r1, 0;\n"
                "\tmov.u32 %r3, 0;\n"
                "$HEAD:\n"
                "\tadd.u32 %r1, %r1, 1;\n"
                "\tadd.u32 %r3, %r3, 5;\n"
                "\tsetp.lt.u32 %p1, %r1, %r2;\n"
                "\t@%p1 bra $HEAD;\n"
                "\tld.param.u64 %rd1, [k_out];\n"
                "\tst.global.u32 [%rd1], %r3;\n"
                "\tret;");
}

}  // namespace kiln::ptx::testing
