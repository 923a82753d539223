#include "kiln/kb/ptx_document.h"

#include <gtest/gtest.h>

#include "kb_fixture.h"

namespace kiln::kb {
namespace {

TEST(PtxDocument, SplitsMarkdownAtLevelOneToFourHeadings) {
  auto sections = split_markdown_document(
      "intro line\n# 1. Introduction\ntext one\n## 9.7.13.15.16. Parallel Synchronization and "
      "Communication "
      "Instructions: mbarrier.test_wait / mbarrier.try_wait\nwait text\n##### too deep stays "
      "text\n```\n# in fence\n```\n"
      "#### Notes\nn\n#hashtag is not a heading\n",
      "isa");
  ASSERT_EQ(sections.size(), 4u);
  EXPECT_EQ(sections[0].title, "Preamble");
  EXPECT_EQ(sections[1].id, "isa:1");
  EXPECT_EQ(sections[1].number, "1");
  EXPECT_EQ(sections[2].id, "isa:9.7.13.15.16");
  EXPECT_EQ(sections[2].level, 2);
  EXPECT_EQ(sections[2].instructions,
            (std::vector<std::string>{"mbarrier.test_wait", "mbarrier.try_wait"}));
  EXPECT_NE(sections[2].text.find("too deep stays text"), std::string::npos);
  EXPECT_NE(sections[2].text.find("# in fence"), std::string::npos);
  EXPECT_EQ(sections[3].id, "isa:notes");
  EXPECT_NE(sections[3].text.find("#hashtag"), std::string::npos);
}

TEST(PtxDocument, SplitsHtmlAtHeadingsAndConvertsToText) {
  const char* html = R"(<!DOCTYPE html><html><head><title>PTX ISA</title><style>h1{}</style>
<script>var x = "<h2>not a heading</h2>";</script></head><body>
<h1>1. Introduction<a class="headerlink" href="#intro">&#xB6;</a></h1><p>PTX is a <em>virtual</em> ISA &amp; more.</p>
<section><h3 id="x">9.7.9.3. Data Movement and Conversion Instructions: cp.async.bulk.tensor</h3>
<pre>cp.async.bulk.tensor.dim.dst.src{.load_mode}.completion_mechanism
    [dstMem], [tensorMap, tensorCoords], [mbar];</pre>
<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table></section>
<H2>1. Introduction</H2><p>&lt;again&gt; &#62; &bogus; &#xZZ;</p></body></html>)";
  auto sections = split_html_document(html, "isa");
  ASSERT_EQ(sections.size(), 3u);
  EXPECT_EQ(sections[0].title, "1. Introduction");
  EXPECT_EQ(sections[0].id, "isa:1");
  EXPECT_NE(sections[0].text.find("PTX is a virtual ISA & more."), std::string::npos)
      << sections[0].text;
  EXPECT_EQ(sections[0].text.find("not a heading"), std::string::npos);
  EXPECT_EQ(sections[1].id, "isa:9.7.9.3");
  EXPECT_EQ(sections[1].level, 3);
  EXPECT_EQ(sections[1].instructions, std::vector<std::string>{"cp.async.bulk.tensor"});
  EXPECT_NE(sections[1].text.find("    [dstMem], [tensorMap, tensorCoords], [mbar];"),
            std::string::npos)
      << sections[1].text;
  EXPECT_NE(sections[1].text.find("a | b"), std::string::npos) << sections[1].text;
  EXPECT_EQ(sections[2].id, "isa:1-2");  // a repeated number gets a suffix
  EXPECT_NE(sections[2].text.find("<again> > &bogus; &#xZZ;"), std::string::npos)
      << sections[2].text;
}

TEST(PtxDocument, ToleratesBrokenHtml) {
  EXPECT_NO_THROW(split_html_document("<h1>unclosed", "d"));
  EXPECT_NO_THROW(split_html_document("<h2>t</h2><p unterminated", "d"));
  EXPECT_NO_THROW(split_html_document("<<<>>>&&&;;;<h4></h4>", "d"));
  EXPECT_TRUE(split_html_document("", "d").empty());
}

TEST(PtxDocument, HeadingInstructionsFindsDottedOpcodesAndBareNamesAfterInstructions) {
  EXPECT_EQ(heading_instructions("9.7.3.1. Integer Arithmetic Instructions: add"),
            std::vector<std::string>{"add"});
  EXPECT_EQ(heading_instructions("Warpgroup MMA: wgmma.mma_async and wgmma.fence"),
            (std::vector<std::string>{"wgmma.mma_async", "wgmma.fence"}));
  EXPECT_TRUE(heading_instructions("1. Introduction").empty());
}

TEST(PtxDocument, StoresADocumentUnderTheCacheAndRejectsOneWithoutHeadings) {
  testing::TempDir dir;
  KbPaths paths{dir.path() / "kb", dir.path() / "cccl", dir.path() / "cache"};
  testing::write_text(dir.path() / "spec.md", "# 1. Intro\ntext\n## 2. More\nmore\n");
  auto stored = store_ptx_document(paths, dir.path() / "spec.md", "PTX ISA");
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(*stored, 2u);
  EXPECT_TRUE(std::filesystem::exists(paths.documents_dir() / "ptx-isa.md"));

  testing::write_text(dir.path() / "plain.txt", "no headings at all\n");
  auto rejected = store_ptx_document(paths, dir.path() / "plain.txt", "plain");
  ASSERT_FALSE(rejected);
  EXPECT_NE(rejected.error().message.find("headings"), std::string::npos);
  EXPECT_FALSE(store_ptx_document(paths, dir.path() / "missing.md", "x"));
}

}  // namespace
}  // namespace kiln::kb
