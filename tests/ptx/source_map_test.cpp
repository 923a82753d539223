#include "kiln/ptx/source_map.h"

#include <gtest/gtest.h>

#include "ptx_test_support.h"

namespace kiln::ptx {
namespace {

using testing::parse_ok;

const std::string kMapped = std::string(testing::kHeader) +
                            ".entry k()\n"              // 5
                            "{\n"                       // 6
                            "\t.reg .b32 %r<4>;\n"      // 7
                            "\t.loc 1 10 3\n"           // 8
                            "\tmov.u32 %r1, %tid.x;\n"  // 9
                            "\tadd.s32 %r2, %r1, 1;\n"  // 10
                            "\t.loc 1 20 5\n"           // 11
                            "\t.loc 2 7 9, function_name $L__info_string0, inlined_at 1 20 5\n"
                            "\tmul.lo.s32 %r3, %r2, 3;\n"  // 13
                            "\tret;\n"                     // 14
                            "}\n"
                            "\t.file\t1 \"/src/kernel.cu\"\n"
                            "\t.file\t2 \"/inc/helpers.cuh\"\n"
                            "\t.section\t.debug_str\n\t{\n$L__info_string0:\n"
                            ".b8 95,90,54,104,101,108,112,101,114,0\n\t}\n";

TEST(SourceMap, MapsEachInstructionLineToItsLoc) {
  const SourceMap map = SourceMap::build(parse_ok(kMapped));
  ASSERT_EQ(map.entries().size(), 4u);
  std::optional<SourcePosition> p = map.at_ptx_line(9);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->file, "/src/kernel.cu");
  EXPECT_EQ(p->line, 10u);
  EXPECT_EQ(p->column, 3u);
  EXPECT_TRUE(p->inlined_at.empty());
  EXPECT_EQ(map.at_ptx_line(10)->line, 10u);
}

TEST(SourceMap, FollowsInliningToTheCallSiteAndNamesTheInlinedFunction) {
  const SourceMap map = SourceMap::build(parse_ok(kMapped));
  std::optional<SourcePosition> p = map.at_ptx_line(13);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->file, "/inc/helpers.cuh");
  EXPECT_EQ(p->line, 7u);
  EXPECT_EQ(p->function, "_Z6helper");
  ASSERT_EQ(p->inlined_at.size(), 1u);
  EXPECT_EQ(p->inlined_at[0].file, "/src/kernel.cu");
  EXPECT_EQ(p->inlined_at[0].line, 20u);
  EXPECT_EQ(to_string(*p), "/inc/helpers.cuh:7:9 (inlined into /src/kernel.cu:20:5)");
}

TEST(SourceMap, AnswersForLinesBetweenInstructionsWithinAFunction) {
  const SourceMap map = SourceMap::build(parse_ok(kMapped));
  EXPECT_EQ(map.at_ptx_line(11)->line, 10u);  // the .loc line itself: the instruction above
  EXPECT_FALSE(map.at_ptx_line(3));           // before any instruction
  EXPECT_FALSE(map.at_ptx_line(16));          // after the function
}

TEST(SourceMap, FindsThePtxLinesOfASourceLineIncludingInlinedCode) {
  const SourceMap map = SourceMap::build(parse_ok(kMapped));
  EXPECT_EQ(map.ptx_lines_for("kernel.cu", 10), (std::vector<uint32_t>{9, 10}));
  EXPECT_EQ(map.ptx_lines_for("kernel.cu", 20), (std::vector<uint32_t>{13, 14}));
  EXPECT_EQ(map.ptx_lines_for("helpers.cuh", 7), (std::vector<uint32_t>{13, 14}));
  EXPECT_TRUE(map.ptx_lines_for("ernel.cu", 10).empty());  // whole path components only
}

TEST(SourceMap, MapsNvccLineInfoOutput) {
  const std::string text = testing::committed("cp_async.sm80.ptx");
  const Module m = parse_ok(text);
  const SourceMap map = SourceMap::build(m);
  ASSERT_FALSE(map.entries().empty());
  // Every mapped instruction names the .cu file or a CUDA header.
  size_t in_kernel = 0, inlined = 0;
  for (const SourceMapEntry& e : map.entries()) {
    EXPECT_FALSE(e.position.file.empty());
    if (e.position.file.ends_with("cp_async.cu")) ++in_kernel;
    if (!e.position.inlined_at.empty()) {
      ++inlined;
      EXPECT_FALSE(e.position.function.empty()) << to_string(e.position);
    }
  }
  EXPECT_GT(in_kernel, 10u);
  EXPECT_GT(inlined, 0u);
  // The loop body on cp_async.cu line 27 (the sum) maps back from PTX.
  EXPECT_FALSE(map.ptx_lines_for("cp_async.cu", 27).empty());
}

}  // namespace
}  // namespace kiln::ptx
