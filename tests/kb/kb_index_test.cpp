#include "kiln/kb/kb_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "kb_fixture.h"
#include "kiln/kb/ptx_document.h"

namespace kiln::kb {
namespace {

class KbIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    paths_ = testing::make_fixture(dir_.path());
    auto report = build_index(paths_, paths_.index_path());
    ASSERT_TRUE(report) << report.error().message;
    report_ = *report;
    auto index = KbIndex::open(paths_.index_path());
    ASSERT_TRUE(index) << index.error().message;
    index_ = std::move(*index);
  }

  std::vector<std::string> zoo_ids(const ZooQuery& query) {
    auto page = index_->search_zoo(query);
    EXPECT_TRUE(page) << page.error().message;
    std::vector<std::string> ids;
    if (page)
      for (const auto& hit : page->hits) ids.push_back(hit.id);
    return ids;
  }

  testing::TempDir dir_;
  KbPaths paths_;
  BuildReport report_;
  std::unique_ptr<KbIndex> index_;
};

TEST_F(KbIndexTest, BuildCountsEverySourceAndReportsTheBrokenOnes) {
  EXPECT_EQ(report_.zoo_entries, 7u);
  EXPECT_TRUE(report_.cccl_found);
  EXPECT_EQ(report_.cccl_headers, 2u);
  EXPECT_EQ(report_.ptx_forms, 5u);
  EXPECT_EQ(report_.ptx_notes, 3u);
  EXPECT_EQ(report_.note_sections, 5u);
  EXPECT_EQ(report_.documents, 0u);
  EXPECT_EQ(report_.content_hash.size(), 64u);
  EXPECT_EQ(index_->meta("content_hash"), report_.content_hash);
  auto mentions = [&](const std::string& text) {
    return std::any_of(report_.warnings.begin(), report_.warnings.end(),
                       [&](const std::string& w) { return w.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(mentions("broken_entry"));
  EXPECT_TRUE(mentions("broken"));
  EXPECT_FALSE(mentions("CCCL"));
  EXPECT_NE(report_.summary().find("zoo entries: 7"), std::string::npos);
  // No temp files are left beside the index.
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(paths_.cache_dir))
    files += entry.is_regular_file();
  EXPECT_EQ(files, 1u);
}

TEST_F(KbIndexTest, WarpSpecializedPersistentGemmRanksTheEntryFirst) {
  auto ids = zoo_ids({.text = "warp specialized persistent gemm"});
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.front(), "gemm_warp_specialized_persistent");
}

TEST_F(KbIndexTest, BankConflictTransposeFindsTransposeSmem) {
  auto ids = zoo_ids({.text = "bank conflict transpose"});
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.front(), "transpose_smem");
}

TEST_F(KbIndexTest, HitsSayWhyTheyMatchedAndCarrySnippetsAndMeasurements) {
  auto page = index_->search_zoo({.text = "warp specialized persistent gemm", .limit = 1});
  ASSERT_TRUE(page);
  ASSERT_EQ(page->hits.size(), 1u);
  const auto& hit = page->hits[0];
  EXPECT_GT(hit.score, 0);
  EXPECT_TRUE(hit.matched_fields.count("title"));
  EXPECT_TRUE(hit.matched_fields.count("id"));
  EXPECT_NE(hit.snippet.find("«"), std::string::npos) << hit.snippet;
  ASSERT_EQ(hit.measured.size(), 1u);
  EXPECT_EQ(hit.measured[0]["gpu"], "NVIDIA H200");
  EXPECT_EQ(hit.techniques.front(), "wgmma");
  EXPECT_EQ(hit.dtypes, (std::vector<std::string>{"f16", "bf16"}));
  // The words, then each two adjacent ones joined (for names the zoo writes as one word).
  EXPECT_EQ(page->terms, (std::vector<std::string>{"warp", "specialized", "persistent", "gemm",
                                                   "warpspecialized", "specializedpersistent",
                                                   "persistentgemm"}));
}

TEST_F(KbIndexTest, FiltersNarrowTheResultsAndWorkWithoutAQuery) {
  EXPECT_EQ(zoo_ids({.technique = "wgmma"}),
            (std::vector<std::string>{"gemm_warp_specialized_persistent", "gemm_wgmma_tma"}));
  EXPECT_EQ(zoo_ids({.text = "gemm", .arch = "sm_80"}),
            (std::vector<std::string>{"gemm_naive", "gemm_smem_tiling"}));
  EXPECT_EQ(zoo_ids({.op = "transpose"}), std::vector<std::string>{"transpose_smem"});
  EXPECT_EQ(zoo_ids({.text = "gemm", .dtype = "bf16"}),
            std::vector<std::string>{"gemm_warp_specialized_persistent"});
  EXPECT_TRUE(zoo_ids({.op = "softmax", .technique = "wgmma"}).empty());
  EXPECT_TRUE(zoo_ids({.arch = "sm_75"}).empty());
  auto page = index_->search_zoo({.op = "gemm_tn", .technique = "tma"});
  ASSERT_TRUE(page);
  EXPECT_EQ(page->hits[0].matched_filters,
            (std::vector<std::string>{"op=gemm_tn", "technique=tma"}));
  EXPECT_EQ(page->hits[0].score, 0);
}

TEST_F(KbIndexTest, PagesWithLimitAndOffset) {
  auto all = index_->search_zoo({.text = "gemm", .limit = 50});
  ASSERT_TRUE(all);
  ASSERT_EQ(all->total, 4);
  ASSERT_EQ(all->hits.size(), 4u);
  std::vector<std::string> paged;
  for (int offset = 0; offset < 4; offset += 3) {
    auto page = index_->search_zoo({.text = "gemm", .limit = 3, .offset = offset});
    ASSERT_TRUE(page);
    EXPECT_EQ(page->total, 4);
    for (const auto& hit : page->hits) paged.push_back(hit.id);
  }
  std::vector<std::string> expected;
  for (const auto& hit : all->hits) expected.push_back(hit.id);
  EXPECT_EQ(paged, expected);
  auto beyond = index_->search_zoo({.text = "gemm", .offset = 100});
  ASSERT_TRUE(beyond);
  EXPECT_TRUE(beyond->hits.empty());
  EXPECT_EQ(beyond->total, 4);
  auto huge = index_->search_zoo({.text = "gemm", .limit = 1000000});  // clamped to 50
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->hits.size(), 4u);
  auto negative =
      index_->search_zoo({.text = "gemm", .limit = -5, .offset = -3});  // clamped to 1 and 0
  ASSERT_TRUE(negative);
  EXPECT_EQ(negative->hits.size(), 1u);
}

TEST_F(KbIndexTest, RejectsAnEmptyQueryWithoutFiltersAndUnknownVocabulary) {
  for (const char* text : {"", "   ", "\"*:-()"}) {
    auto page = index_->search_zoo({.text = text});
    ASSERT_FALSE(page) << text;
    EXPECT_NE(page.error().message.find("filter"), std::string::npos);
  }
  auto technique = index_->search_zoo({.technique = "tensor_cores"});
  ASSERT_FALSE(technique);
  EXPECT_NE(technique.error().message.find("valid techniques:"), std::string::npos);
  EXPECT_NE(technique.error().message.find("wgmma"), std::string::npos);
  auto op = index_->search_zoo({.op = "matmul"});
  ASSERT_FALSE(op);
  EXPECT_NE(op.error().message.find("valid ops:"), std::string::npos);
  EXPECT_NE(op.error().message.find("gemm_tn"), std::string::npos);
  // An op from the README table without entries is valid and finds nothing.
  auto empty = index_->search_zoo({.op = "attention_fwd"});
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->total, 0);
}

TEST_F(KbIndexTest, FtsSyntaxInQueriesNeverErrors) {
  for (const char* text : {"\"",
                           "\"tma",
                           "tma*",
                           "*",
                           "NEAR(tma wgmma)",
                           "NEAR(",
                           "-gemm",
                           "gemm -naive",
                           "op:gemm",
                           "id:transpose_smem",
                           "AND",
                           "OR OR",
                           "NOT gemm",
                           "(gemm",
                           "gemm)",
                           "^gemm",
                           "{id title}:x",
                           "'; DROP TABLE zoo; --",
                           "\xff\xfe invalid utf8",
                           "«»",
                           "tile[32][33]",
                           "a\nb\tc",
                           "cp.async.bulk.tensor",
                           "__syncthreads()"}) {
    auto page = index_->search_zoo({.text = text});
    if (!page) {
      EXPECT_NE(page.error().message.find("filter"), std::string::npos)
          << text << ": " << page.error().message;
    }
    auto ptx = index_->search_ptx({.text = text});
    if (!ptx) {
      EXPECT_NE(ptx.error().message.find("query"), std::string::npos)
          << text << ": " << ptx.error().message;
    }
  }
  auto tile = index_->search_zoo({.text = "tile[32][33]"});
  ASSERT_TRUE(tile);
  EXPECT_EQ(tile->hits.front().id, "transpose_smem");
}

TEST_F(KbIndexTest, MbarrierParityWaitPutsTheMbarrierNoteFirst) {
  auto page = index_->search_ptx({.text = "mbarrier parity wait"});
  ASSERT_TRUE(page) << page.error().message;
  ASSERT_FALSE(page->sections.empty());
  EXPECT_EQ(page->sections.front().id, "mbarrier:phase-parity");
  EXPECT_EQ(page->sections.front().kind, "note_section");
  EXPECT_EQ(page->sections.front().requirements, "PTX ISA 7.0, sm_80");
  EXPECT_NE(page->sections.front().snippet.find("«"), std::string::npos);
  ASSERT_FALSE(page->forms.empty());
  EXPECT_EQ(page->forms.front().opcode.rfind("mbarrier.try_wait.parity", 0), 0u);
}

TEST_F(KbIndexTest, InstructionLookupFindsFormsAndNotesByOpcodePrefix) {
  auto page = index_->search_ptx({.instruction = "mbarrier.try_wait"});
  ASSERT_TRUE(page) << page.error().message;
  EXPECT_EQ(page->instruction, "mbarrier.try_wait");
  EXPECT_EQ(page->total_forms, 2);
  EXPECT_EQ(page->forms[0].ptx_isa, "7.8");  // ordered by PTX ISA version
  EXPECT_EQ(page->forms[1].ptx_isa, "8.0");
  ASSERT_EQ(page->sections.size(), 1u);
  EXPECT_EQ(page->sections[0].id, "mbarrier");
  EXPECT_EQ(page->sections[0].kind, "note");
  EXPECT_EQ(page->sections[0].subsections,
            (std::vector<std::string>{"mbarrier:what-it-is-for", "mbarrier:phase-parity",
                                      "mbarrier:pitfalls"}));

  auto tensor = index_->search_ptx({.instruction = " CP.ASYNC.BULK.TENSOR; "});
  ASSERT_TRUE(tensor);
  EXPECT_EQ(tensor->total_forms, 1);
  EXPECT_EQ(tensor->forms[0].wrapper, "cuda::ptx::cp_async_bulk_tensor");
}

TEST_F(KbIndexTest, InstructionLookupFallsBackToAPrefixAndSuggestsForUnknownOpcodes) {
  auto longer = index_->search_ptx({.instruction = "mbarrier.try_wait.parity.acquire.cluster"});
  ASSERT_TRUE(longer);
  EXPECT_EQ(longer->instruction, "mbarrier.try_wait.parity");
  EXPECT_EQ(longer->total_forms, 2);
  EXPECT_EQ(longer->sections.size(), 1u);  // the note lists mbarrier.try_wait

  auto notes_only = index_->search_ptx({.instruction = "cp.async.wait_group"});
  ASSERT_TRUE(notes_only);
  EXPECT_EQ(notes_only->total_forms, 0);
  EXPECT_EQ(notes_only->sections.at(0).id, "cp-async");

  auto unknown = index_->search_ptx({.instruction = "mbarier.try_wait"});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("mbarrier.try_wait"), std::string::npos)
      << unknown.error().message;
  EXPECT_FALSE(index_->search_ptx({}));
  EXPECT_FALSE(index_->search_ptx({.text = "wait", .instruction = "bar.sync"}));
}

TEST_F(KbIndexTest, ReadsNotesAndSectionsById) {
  auto note = index_->read_section("mbarrier");
  ASSERT_TRUE(note);
  EXPECT_EQ(note->kind, "note");
  EXPECT_EQ(note->text.rfind("# mbarrier", 0), 0u);
  EXPECT_EQ(note->requirements, "PTX ISA 7.0, sm_80");
  auto section = index_->read_section("mbarrier:pitfalls");
  ASSERT_TRUE(section);
  EXPECT_EQ(section->text, "## Pitfalls\n\nForgetting expect_tx leaves the phase incomplete.\n");
  EXPECT_FALSE(index_->read_section("nope"));
  auto ids = index_->section_ids();
  EXPECT_NE(std::find(ids.begin(), ids.end(), "bar-barrier:what-it-is-for"), ids.end());
}

TEST_F(KbIndexTest, IngestedDocumentSectionsAreSearchableAndReadable) {
  testing::write_text(
      dir_.path() / "isa.md",
      "# 9.7.13.15.16. Parallel Synchronization and Communication Instructions: mbarrier.test_wait "
      "/ "
      "mbarrier.try_wait\nTest or wait for the completion of the current phase of an mbarrier.\n"
      "# 9.7.9.25. Data Movement: cp.async.bulk.tensor\nTensor copies.\n");
  ASSERT_TRUE(store_ptx_document(paths_, dir_.path() / "isa.md", "isa"));
  auto report = build_index(paths_, paths_.index_path());
  ASSERT_TRUE(report);
  EXPECT_EQ(report->documents, 1u);
  EXPECT_EQ(report->document_sections, 2u);
  auto index = KbIndex::open(paths_.index_path());
  ASSERT_TRUE(index);
  auto page = (*index)->search_ptx({.instruction = "mbarrier.try_wait"});
  ASSERT_TRUE(page);
  ASSERT_EQ(page->sections.size(), 2u);
  EXPECT_EQ(page->sections[1].id, "isa:9.7.13.15.16");
  EXPECT_EQ(page->sections[1].kind, "document");
  auto text = (*index)->read_section("isa:9.7.9.25");
  ASSERT_TRUE(text);
  EXPECT_EQ(text->text, "Tensor copies.");
  auto search = (*index)->search_ptx({.text = "completion current phase"});
  ASSERT_TRUE(search);
  EXPECT_EQ(search->sections.at(0).id, "isa:9.7.13.15.16");
}

TEST(KbIndexBuild, IndexesWithoutCcclHeadersAndSaysSo) {
  testing::TempDir dir;
  auto paths = testing::make_fixture(dir.path());
  paths.cccl_dir = dir.path() / "no_such_toolkit";
  auto report = build_index(paths, paths.index_path());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_FALSE(report->cccl_found);
  EXPECT_EQ(report->ptx_forms, 0u);
  EXPECT_NE(report->summary().find("none (no CCCL headers at"), std::string::npos);
  auto index = KbIndex::open(paths.index_path());
  ASSERT_TRUE(index);
  EXPECT_EQ((*index)->meta("cccl_found"), "0");
  auto page = (*index)->search_ptx({.instruction = "mbarrier.try_wait"});
  ASSERT_TRUE(page);
  EXPECT_EQ(page->total_forms, 0);
  EXPECT_EQ(page->sections.size(), 1u);
}

TEST(KbIndexBuild, FailsCleanlyWhenTheCacheIsNotWritableOrTheIndexIsBroken) {
  testing::TempDir dir;
  auto paths = testing::make_fixture(dir.path());
  testing::write_text(dir.path() / "file", "x");
  auto report = build_index(paths, dir.path() / "file" / "kb.sqlite");
  ASSERT_FALSE(report);
  EXPECT_NE(report.error().message.find("index"), std::string::npos);

  EXPECT_FALSE(KbIndex::open(dir.path() / "missing.sqlite"));
  testing::write_text(dir.path() / "garbage.sqlite", "this is not a database");
  auto garbage = KbIndex::open(dir.path() / "garbage.sqlite");
  ASSERT_FALSE(garbage);
  EXPECT_NE(garbage.error().message.find("kiln kb build"), std::string::npos);
}

TEST(KbIndexBuild, EmptySourcesGiveAnEmptyButUsableIndex) {
  testing::TempDir dir;
  KbPaths paths{dir.path() / "kb", dir.path() / "cccl", dir.path() / "cache"};
  auto report = build_index(paths, paths.index_path());
  ASSERT_TRUE(report) << report.error().message;
  auto index = KbIndex::open(paths.index_path());
  ASSERT_TRUE(index);
  auto page = (*index)->search_zoo({.text = "gemm"});
  ASSERT_TRUE(page);
  EXPECT_EQ(page->total, 0);
  EXPECT_TRUE(
      (*index)->search_zoo({.technique = "anything"}));  // no vocabulary: nothing to check against
}

// The real kb/ and toolkit, built into a temporary cache. Entries still being written
// are skipped rather than failed.
class RealKbTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir;
    paths_ = KbPaths{testing::real_kb_dir(), default_cccl_dir(), dir_->path()};
    auto report = build_index(paths_, paths_.index_path());
    ASSERT_TRUE(report) << report.error().message;
    report_ = new BuildReport(*report);
    auto index = KbIndex::open(paths_.index_path());
    ASSERT_TRUE(index);
    index_ = index->release();
  }
  static void TearDownTestSuite() {
    delete index_;
    delete report_;
    delete dir_;
  }
  static bool has_entry(const std::string& id) {
    return std::filesystem::exists(testing::real_kb_dir() / "zoo" / id / "meta.json");
  }
  static std::vector<std::string> top(const std::string& text, int n) {
    auto page = index_->search_zoo({.text = text, .limit = n});
    EXPECT_TRUE(page);
    std::vector<std::string> ids;
    for (const auto& hit : page->hits) ids.push_back(hit.id);
    return ids;
  }
  static inline testing::TempDir* dir_ = nullptr;
  static inline KbPaths paths_;
  static inline BuildReport* report_ = nullptr;
  static inline KbIndex* index_ = nullptr;
};

TEST_F(RealKbTest, IndexesTheRepositoryAndTheToolkit) {
  ASSERT_NE(report_, nullptr);
  EXPECT_GT(report_->ptx_notes, 5u);
  if (std::filesystem::exists(default_cccl_dir())) {
    EXPECT_TRUE(report_->cccl_found);
    EXPECT_GT(report_->ptx_forms, 1000u);
  }
  std::cout << report_->summary();
}

TEST_F(RealKbTest, MbarrierParityWaitPutsTheMbarrierNotesFirst) {
  if (!std::filesystem::exists(testing::real_kb_dir() / "ptx" / "notes" / "mbarrier.md"))
    GTEST_SKIP() << "kb/ptx/notes/mbarrier.md is not written yet";
  auto page = index_->search_ptx({.text = "mbarrier parity wait"});
  ASSERT_TRUE(page);
  ASSERT_FALSE(page->sections.empty());
  EXPECT_EQ(page->sections.front().id.rfind("mbarrier:", 0), 0u) << page->sections.front().id;
}

TEST_F(RealKbTest, WarpSpecializedPersistentGemmIsInTheTopThree) {
  if (!has_entry("gemm_warp_specialized_persistent")) GTEST_SKIP() << "entry not written yet";
  auto ids = top("warp specialized persistent gemm", 3);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "gemm_warp_specialized_persistent"), ids.end());
}

TEST_F(RealKbTest, BankConflictTransposeFindsTransposeSmem) {
  if (!has_entry("transpose_smem")) GTEST_SKIP() << "entry not written yet";
  auto ids = top("bank conflict transpose", 3);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "transpose_smem"), ids.end());
}

// The entries added on 2026-12-02 are found first for what an agent would ask, and carry numbers
// exactly when kb/zoo/awaiting_h200.json no longer lists them (search_zoo prints "measured: not
// yet" for a listed one).
TEST_F(RealKbTest, NewEntriesRankFirstAndCarryNumbersOnceMeasured) {
  std::set<std::string> awaiting;
  const auto list = testing::real_kb_dir() / "zoo" / "awaiting_h200.json";
  if (std::ifstream in(list); in) {
    for (const auto& id : nlohmann::json::parse(in).value("entries", nlohmann::json::array()))
      awaiting.insert(id.get<std::string>());
  }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"fused residual add rmsnorm fp8 quantization", "add_rmsnorm_fp8_bf16"},
      {"swiglu gate up fused activation", "swiglu_fused_bf16"},
      {"rotary position embedding rope", "rope_halfsplit_bf16"},
      {"cross entropy logsumexp vocabulary", "cross_entropy_online"},
      {"decode gemv skinny gemm M=16", "gemv_decode_splitk"},
  };
  for (const auto& [query, id] : cases) {
    if (!has_entry(id)) continue;
    auto page = index_->search_zoo({.text = query, .limit = 3});
    ASSERT_TRUE(page) << query;
    ASSERT_FALSE(page->hits.empty()) << query;
    EXPECT_EQ(page->hits.front().id, id) << query;
    for (const auto& hit : page->hits) {
      if (hit.id != id) continue;
      if (awaiting.count(id) != 0) {
        EXPECT_TRUE(hit.measured.empty()) << id << " is listed as awaiting but has numbers";
      } else {
        EXPECT_FALSE(hit.measured.empty()) << id << " is measured, but search_zoo shows none";
      }
    }
  }
}

}  // namespace
}  // namespace kiln::kb
