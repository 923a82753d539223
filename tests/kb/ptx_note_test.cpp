#include "kiln/kb/ptx_note.h"

#include <gtest/gtest.h>

namespace kiln::kb {
namespace {

TEST(PtxNote, ReadsTitleInstructionsFrontMatterAndSections) {
  auto note = parse_ptx_note(
      "# mbarrier: phases\ninstructions: mbarrier.init, `mbarrier.try_wait`,  "
      "mbarrier.arrive\nrequires: PTX ISA 7.0, "
      "sm_80\n\nIntro text.\n\n## Phase parity\n\nFlip.\n\n```\n## fenced, not a heading\n```\n## "
      "Pitfalls\nDon't.\n",
      "mbarrier");
  ASSERT_TRUE(note) << note.error().message;
  EXPECT_EQ(note->id, "mbarrier");
  EXPECT_EQ(note->title, "mbarrier: phases");
  EXPECT_EQ(note->instructions,
            (std::vector<std::string>{"mbarrier.init", "mbarrier.try_wait", "mbarrier.arrive"}));
  EXPECT_EQ(note->front_matter.at("requires"), "PTX ISA 7.0, sm_80");
  ASSERT_EQ(note->sections.size(), 3u);
  EXPECT_EQ(note->sections[0].slug, "overview");
  EXPECT_EQ(note->sections[1].slug, "phase-parity");
  EXPECT_EQ(note->sections[1].heading, "Phase parity");
  EXPECT_EQ(note->sections[1].first_line, 7);
  EXPECT_NE(note->sections[1].text.find("## fenced, not a heading"), std::string::npos);
  EXPECT_EQ(note->sections[2].slug, "pitfalls");
}

TEST(PtxNote, RepeatedHeadingsGetDistinctSlugs) {
  auto note = parse_ptx_note("# T\n## Example\na\n## Example\nb\n", "t");
  ASSERT_TRUE(note);
  ASSERT_EQ(note->sections.size(), 2u);
  EXPECT_EQ(note->sections[0].slug, "example");
  EXPECT_EQ(note->sections[1].slug, "example-2");
}

TEST(PtxNote, RejectsANoteWithoutATitleLine) {
  auto note = parse_ptx_note("instructions: bar.sync\n# Late title\n", "bad");
  ASSERT_FALSE(note);
  EXPECT_NE(note.error().message.find("# Title"), std::string::npos);
  EXPECT_FALSE(parse_ptx_note("", "empty"));
  EXPECT_TRUE(parse_ptx_note("\n\n# Title after blank lines\r\n", "crlf"));
}

TEST(PtxNote, SlugsAreLowercaseWordsJoinedByDashes) {
  EXPECT_EQ(slugify("Phase parity & waits"), "phase-parity-waits");
  EXPECT_EQ(slugify("9.7.13. Data Movement"), "9.7.13-data-movement");
  EXPECT_EQ(slugify("***"), "section");
  EXPECT_LE(slugify(std::string(500, 'a')).size(), 80u);
}

}  // namespace
}  // namespace kiln::kb
