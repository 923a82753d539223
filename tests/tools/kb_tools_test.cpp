// The kb tools and resources as an MCP client sees them: schemas, sizes, errors.
#include <gtest/gtest.h>

#include "kb_fixture.h"
#include "kiln/mcp/resource_registry.h"
#include "kiln/mcp/tool_registry.h"
#include "kiln/tools/tool_factories.h"
#include "kiln/tools/toolbox_parts.h"
#include "line_window.h"

namespace kiln::tools {
namespace {

using json = nlohmann::json;
constexpr size_t kTenKb = 10 * 1024;

class KbToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    paths_ = kb::testing::make_fixture(dir_.path());
    kb_ = std::make_shared<kb::KbService>(paths_, std::chrono::milliseconds(0));
    for (auto tool :
         {make_search_zoo_tool(kb_), make_read_zoo_entry_tool(kb_), make_read_ptx_spec_tool(kb_)}) {
      auto status = tools_.add(std::move(tool));
      ASSERT_TRUE(status) << status.error().message;
    }
    resources_.add(make_zoo_resource_template(kb_));
    resources_.add(make_ptx_resource_template(kb_));
  }

  mcp::ToolResult call(const std::string& name, const json& arguments) {
    auto context = mcp::CallContext::detached();
    return tools_.run(name, arguments, context);
  }

  // Each view a client may show (text, or structuredContent) stays under 10 KB.
  static void expect_small(const mcp::ToolResult& result) {
    EXPECT_LT(result.text.size(), kTenKb);
    EXPECT_LT(result.structured.dump().size(), kTenKb);
  }

  kb::testing::TempDir dir_;
  kb::KbPaths paths_;
  std::shared_ptr<kb::KbService> kb_;
  mcp::ToolRegistry tools_;
  mcp::ResourceRegistry resources_;
};

TEST_F(KbToolsTest, ToolsAreDeclaredByTheRules) {
  json list = tools_.list()["tools"];
  ASSERT_EQ(list.size(), 3u);
  for (const auto& tool : list) {
    EXPECT_FALSE(tool["title"].get<std::string>().empty());
    EXPECT_LT(tool["description"].get<std::string>().size(), 1024u);
    EXPECT_EQ(tool["outputSchema"]["type"], "object");
    EXPECT_TRUE(tool["annotations"]["readOnlyHint"].get<bool>());
  }
}

TEST_F(KbToolsTest, SearchZooReturnsRankedHitsInBothViews) {
  auto result = call("search_zoo", {{"query", "warp specialized persistent gemm"}});
  ASSERT_FALSE(result.is_error) << result.text;
  expect_small(result);
  EXPECT_EQ(result.structured["hits"][0]["id"], "gemm_warp_specialized_persistent");
  EXPECT_FALSE(result.structured["hits"][0]["measured"][0].contains("command"));
  EXPECT_TRUE(result.structured["hits"][0]["why"]["fields"].contains("title"));
  EXPECT_NE(result.text.find("1. gemm_warp_specialized_persistent"), std::string::npos)
      << result.text;
  EXPECT_NE(
      result.text.find(
          "measured: NVIDIA H200 M=4096 N=4096 K=4096: 210.5 us, 653 TFLOP/s (cuBLAS 200.1 us)"),
      std::string::npos)
      << result.text;
  EXPECT_NE(result.text.find("matched: "), std::string::npos);
}

// The zoo GPU test records "baseline": null (and null numbers) where nothing was compared; a
// hit shows what was measured and leaves the rest out, in both views.
TEST_F(KbToolsTest, SearchZooShowsAMeasurementWithoutABaseline) {
  auto result = call("search_zoo", {{"query", "multistage TMA pipeline wgmma"}});
  ASSERT_FALSE(result.is_error) << result.text;
  json hit;
  for (const json& h : result.structured["hits"])
    if (h["id"] == "gemm_wgmma_tma") hit = h;
  ASSERT_FALSE(hit.is_null()) << result.text;
  EXPECT_EQ(hit["measured"][0]["time_us"], 224.6);
  EXPECT_FALSE(hit["measured"][0].contains("baseline"));
  EXPECT_FALSE(hit["measured"][0].contains("gbps"));
  EXPECT_NE(result.text.find("measured: NVIDIA H200 M=4096 N=4096 K=4096: 224.6 us, 611.9 "
                             "TFLOP/s\n"),
            std::string::npos)
      << result.text;
}

TEST_F(KbToolsTest, SearchZooPagesAndValidates) {
  auto first = call("search_zoo", {{"query", "gemm"}, {"limit", 2}});
  ASSERT_FALSE(first.is_error) << first.text;
  EXPECT_EQ(first.structured["hits"].size(), 2u);
  EXPECT_EQ(first.structured["next_offset"], 2);
  EXPECT_NE(first.text.find("more: offset=2"), std::string::npos);
  auto second = call("search_zoo", {{"query", "gemm"}, {"limit", 2}, {"offset", 2}});
  ASSERT_FALSE(second.is_error);
  EXPECT_FALSE(second.structured.contains("next_offset"));
  EXPECT_NE(second.structured["hits"][0]["id"], first.structured["hits"][0]["id"]);

  EXPECT_TRUE(call("search_zoo", json::object()).is_error);
  EXPECT_TRUE(call("search_zoo", {{"query", ""}}).is_error);
  auto huge = call("search_zoo", {{"query", "gemm"}, {"limit", 100000}});
  ASSERT_TRUE(huge.is_error);
  EXPECT_NE(huge.text.find("at most 50"), std::string::npos) << huge.text;
  auto technique = call("search_zoo", {{"technique", "tensorcore"}});
  ASSERT_TRUE(technique.is_error);
  EXPECT_NE(technique.text.find("valid techniques:"), std::string::npos);
  auto none = call("search_zoo", {{"arch", "sm_75"}});
  ASSERT_FALSE(none.is_error);
  EXPECT_NE(none.text.find("archs in the zoo: sm_80, sm_90a"), std::string::npos) << none.text;
  for (const char* nasty : {"\"", "NEAR(", "*", "-x", "a:b", "\")) OR ((\""})
    EXPECT_FALSE(call("search_zoo", {{"query", std::string("gemm ") + nasty}}).is_error) << nasty;
}

TEST_F(KbToolsTest, ReadZooEntryReturnsNumberedLinesAndSuggestsIds) {
  auto result = call("read_zoo_entry", {{"id", "transpose_smem"}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["file"], "kernel.cu");
  EXPECT_EQ(result.structured["start_line"], 1);
  EXPECT_NE(result.text.find("1| __global__ void transpose"), std::string::npos) << result.text;
  EXPECT_EQ(result.structured["files"], json({"kernel.cu", "meta.json", "NOTES.md"}));

  auto notes =
      call("read_zoo_entry",
           {{"id", "transpose_smem"}, {"file", "NOTES.md"}, {"start_line", 3}, {"end_line", 3}});
  ASSERT_FALSE(notes.is_error);
  EXPECT_EQ(notes.structured["text"].get<std::string>().rfind("Without padding", 0), 0u);
  EXPECT_FALSE(notes.structured["truncated"].get<bool>());  // line 3 is the last
  auto title =
      call("read_zoo_entry", {{"id", "transpose_smem"}, {"file", "NOTES.md"}, {"end_line", 1}});
  ASSERT_FALSE(title.is_error);
  EXPECT_EQ(title.structured["text"], "# Transpose\n");
  EXPECT_TRUE(title.structured["truncated"].get<bool>());
  EXPECT_EQ(title.structured["next_start_line"], 2);

  auto unknown = call("read_zoo_entry", {{"id", "transpose"}});
  ASSERT_TRUE(unknown.is_error);
  EXPECT_NE(unknown.text.find("transpose_smem"), std::string::npos) << unknown.text;
  EXPECT_TRUE(call("read_zoo_entry", {{"id", "../kb"}}).is_error);
  EXPECT_TRUE(call("read_zoo_entry", {{"id", "transpose_smem"}, {"file", "secret.txt"}}).is_error);
  EXPECT_TRUE(call("read_zoo_entry", {{"id", "transpose_smem"}, {"start_line", 5}, {"end_line", 2}})
                  .is_error);
  EXPECT_TRUE(call("read_zoo_entry", {{"id", "transpose_smem"}, {"start_line", 500}}).is_error);
}

TEST_F(KbToolsTest, ReadZooEntryKeepsABigFileUnderTenKilobytesAndSaysHowToGoOn) {
  std::string big;
  for (int i = 1; i <= 2000; ++i)
    big += "  float acc" + std::to_string(i) + " = 0.0f;  // accumulator\n";
  kb::testing::write_text(paths_.zoo_dir() / "gemm_naive" / "kernel.cu", big);
  auto result = call("read_zoo_entry", {{"id", "gemm_naive"}});
  ASSERT_FALSE(result.is_error);
  expect_small(result);
  const int next = result.structured["next_start_line"];
  EXPECT_GT(next, 100);
  EXPECT_NE(result.text.find("\"start_line\": " + std::to_string(next)), std::string::npos);
  auto more = call("read_zoo_entry", {{"id", "gemm_naive"}, {"start_line", next}});
  ASSERT_FALSE(more.is_error);
  EXPECT_EQ(more.structured["start_line"], next);
}

TEST_F(KbToolsTest, ReadPtxSpecByInstructionQueryAndSection) {
  auto by_instruction = call("read_ptx_spec", {{"instruction", "mbarrier.try_wait"}});
  ASSERT_FALSE(by_instruction.is_error) << by_instruction.text;
  expect_small(by_instruction);
  EXPECT_EQ(by_instruction.structured["total_forms"], 2);
  EXPECT_EQ(by_instruction.structured["forms"][0]["ptx_isa"], "7.8");
  EXPECT_EQ(by_instruction.structured["forms"][0]["min_sm"], "sm_90");
  EXPECT_EQ(by_instruction.structured["forms"][0]["wrapper"],
            "cuda::ptx::mbarrier_try_wait_parity");
  EXPECT_EQ(by_instruction.structured["sections"][0]["id"], "mbarrier");
  EXPECT_NE(by_instruction.text.find("[PTX ISA 7.8, sm_90]"), std::string::npos)
      << by_instruction.text;

  auto by_query = call("read_ptx_spec", {{"query", "mbarrier parity wait"}});
  ASSERT_FALSE(by_query.is_error) << by_query.text;
  expect_small(by_query);
  EXPECT_EQ(by_query.structured["sections"][0]["id"], "mbarrier:phase-parity");

  auto section = call("read_ptx_spec", {{"section", "mbarrier:phase-parity"}});
  ASSERT_FALSE(section.is_error) << section.text;
  EXPECT_NE(section.text.find("flips the parity bit"), std::string::npos);
  EXPECT_EQ(section.structured["uri"], "kiln://ptx/mbarrier:phase-parity");

  auto unknown = call("read_ptx_spec", {{"section", "mbarier"}});
  ASSERT_TRUE(unknown.is_error);
  EXPECT_NE(unknown.text.find("mbarrier"), std::string::npos);
  EXPECT_TRUE(call("read_ptx_spec", json::object()).is_error);
  EXPECT_TRUE(call("read_ptx_spec", {{"query", "x"}, {"instruction", "bar.sync"}}).is_error);
  EXPECT_TRUE(call("read_ptx_spec", {{"instruction", "frobnicate.now"}}).is_error);
  EXPECT_FALSE(call("read_ptx_spec", {{"query", "NEAR( \" * - : wait"}}).is_error);
  EXPECT_TRUE(call("read_ptx_spec", {{"query", "( \" * - :"}}).is_error);  // no words at all
}

TEST_F(KbToolsTest, ReadPtxSpecPagesALongSectionByLine) {
  std::string note = "# Long note\ninstructions: wgmma.mma_async\n\n## Body\n";
  for (int i = 0; i < 600; ++i)
    note += "line " + std::to_string(i) + " of a long explanation of wgmma descriptors\n";
  kb::testing::write_text(paths_.notes_dir() / "wgmma.md", note);
  auto first = call("read_ptx_spec", {{"section", "wgmma:body"}});
  ASSERT_FALSE(first.is_error) << first.text;
  expect_small(first);
  const int next = first.structured["next_offset"];
  auto second = call("read_ptx_spec", {{"section", "wgmma:body"}, {"offset", next}});
  ASSERT_FALSE(second.is_error);
  EXPECT_EQ(second.structured["start_line"], next + 1);
}

TEST_F(KbToolsTest, ResourcesServeZooFilesAndPtxSections) {
  auto kernel = resources_.read("kiln://zoo/transpose_smem/kernel.cu");
  ASSERT_TRUE(kernel) << kernel.error().message;
  EXPECT_EQ((*kernel)["contents"][0]["mimeType"], "text/x-cuda");
  auto meta = resources_.read("kiln://zoo/transpose_smem/meta.json");
  ASSERT_TRUE(meta);
  EXPECT_EQ(json::parse((*meta)["contents"][0]["text"].get<std::string>())["op"], "transpose");
  auto note = resources_.read("kiln://ptx/mbarrier");
  ASSERT_TRUE(note);
  EXPECT_EQ((*note)["contents"][0]["text"].get<std::string>().rfind("# mbarrier", 0), 0u);
  EXPECT_FALSE(resources_.read("kiln://zoo/nope/kernel.cu"));
  EXPECT_FALSE(resources_.read("kiln://zoo/transpose_smem/passwd"));
  auto missing = resources_.read("kiln://ptx/nothing");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("no PTX note or section"), std::string::npos);
}

TEST(LineWindow, CutsAtTheBudgetOnLineBoundaries) {
  std::string text;
  for (int i = 1; i <= 10; ++i) text += "line" + std::to_string(i) + "\n";
  auto all = line_window(text, 1, 0, 1000);
  EXPECT_EQ(all.end_line, 10);
  EXPECT_FALSE(all.truncated);
  auto cut = line_window(text, 1, 0, 20);
  EXPECT_EQ(cut.end_line, 3);  // 6 + 6 + 6 bytes
  EXPECT_TRUE(cut.truncated);
  auto range = line_window(text, 4, 5, 1000);
  EXPECT_EQ(range.text, "line4\nline5\n");
  EXPECT_EQ(numbered(range), "4| line4\n5| line5\n");
  auto past = line_window(text, 50, 0, 1000);
  EXPECT_EQ(past.end_line, 49);
  EXPECT_TRUE(past.text.empty());
  auto long_line = line_window(std::string(100, 'x'), 1, 0, 10);
  EXPECT_EQ(long_line.end_line, 1);
  EXPECT_EQ(long_line.text, std::string(10, 'x') + "…\n");
  auto no_newline = line_window("a\nb", 1, 0, 100);
  EXPECT_EQ(no_newline.text, "a\nb\n");
  EXPECT_EQ(no_newline.total_lines, 2);
}

}  // namespace
}  // namespace kiln::tools
