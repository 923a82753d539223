// Module level: header, functions, .file, .section, item order, errors, the Result boundary.
#include "kiln/ptx/parser.h"

#include <gtest/gtest.h>

#include "ptx_test_support.h"

namespace kiln::ptx {
namespace {

using testing::kHeader;
using testing::parse_error;
using testing::parse_ok;

TEST(Parser, ReadsTheModuleHeader) {
  Module m = parse_ok(".version 8.5\n.target sm_90a, debug\n.address_size 64\n");
  EXPECT_EQ(m.version_major, 8u);
  EXPECT_EQ(m.version_minor, 5u);
  EXPECT_EQ(m.targets, (std::vector<std::string>{"sm_90a", "debug"}));
  EXPECT_EQ(m.address_size, 64u);
  EXPECT_TRUE(m.has_address_size);
  EXPECT_TRUE(m.items.empty());
}

TEST(Parser, ReadsEntriesWithPerformanceDirectives) {
  Module m = parse_ok(std::string(kHeader) +
                      ".visible .entry k(.param .u64 k_a)\n"
                      ".maxntid 256, 1, 1\n.minnctapersm 2\n.explicitcluster\n"
                      ".reqnctapercluster 2, 1, 1\n{\nret;\n}\n");
  ASSERT_EQ(m.functions.size(), 1u);
  const Function& f = m.functions[0];
  EXPECT_TRUE(f.is_kernel());
  EXPECT_EQ(f.linkage, Linkage::Visible);
  EXPECT_TRUE(f.has_body);
  ASSERT_EQ(f.attributes.size(), 4u);
  ASSERT_NE(f.attribute("maxntid"), nullptr);
  EXPECT_EQ(f.attribute("maxntid")->values, (std::vector<uint64_t>{256, 1, 1}));
  EXPECT_EQ(f.attribute("minnctapersm")->values, (std::vector<uint64_t>{2}));
  EXPECT_TRUE(f.attribute("explicitcluster")->values.empty());
  EXPECT_EQ(f.attribute("reqnctapercluster")->values, (std::vector<uint64_t>{2, 1, 1}));
  EXPECT_EQ(f.attribute("maxnreg"), nullptr);
}

TEST(Parser, ReadsFunctionsWithReturnValuesLinkageAndNoreturn) {
  Module m = parse_ok(std::string(kHeader) +
                      ".extern .func (.param .b32 r) ext(.param .b64 a, .param .b64 b);\n"
                      ".weak .func (.param .align 16 .b8 ret[16]) pair(.param .b32 x)\n{\nret;\n}\n"
                      ".func stop() .noreturn\n{\ntrap;\n}\n");
  ASSERT_EQ(m.functions.size(), 3u);
  const Function& ext = m.functions[0];
  EXPECT_EQ(ext.linkage, Linkage::Extern);
  EXPECT_FALSE(ext.has_body);
  ASSERT_EQ(ext.returns.size(), 1u);
  EXPECT_EQ(ext.params.size(), 2u);
  const Function& pair = m.functions[1];
  EXPECT_EQ(pair.linkage, Linkage::Weak);
  EXPECT_EQ(pair.returns[0].align, 16u);
  EXPECT_EQ(pair.returns[0].dims[0], 16u);
  EXPECT_NE(m.functions[2].attribute("noreturn"), nullptr);
  EXPECT_EQ(m.find_function("pair"), &m.functions[1]);
  EXPECT_EQ(m.find_function("missing"), nullptr);
}

TEST(Parser, PrefersADefinitionOverItsPrototype) {
  Module m = parse_ok(std::string(kHeader) +
                      ".func (.param .b32 r) f(.param .b32 a);\n"
                      ".func (.param .b32 r) f(.param .b32 a)\n{\nret;\n}\n");
  ASSERT_EQ(m.functions.size(), 2u);
  EXPECT_EQ(m.find_function("f"), &m.functions[1]);
}

TEST(Parser, KeepsModuleItemsInSourceOrder) {
  Module m = parse_ok(std::string(kHeader) +
                      ".func f();\n.global .b32 g;\n.pragma \"nounroll\";\n.entry k()\n{\nret;\n}\n"
                      "\t.file\t1 \"k.cu\"\n");
  ASSERT_EQ(m.items.size(), 5u);
  EXPECT_EQ(m.items[0].kind, ItemKind::Function);
  EXPECT_EQ(m.items[1].kind, ItemKind::Variable);
  EXPECT_EQ(m.items[2].kind, ItemKind::Pragma);
  EXPECT_EQ(m.items[3].kind, ItemKind::Function);
  EXPECT_EQ(m.items[3].index, 1u);
  EXPECT_EQ(m.items[4].kind, ItemKind::File);
}

TEST(Parser, ReadsFileDirectivesWithTimestampAndSize) {
  Module m = parse_ok(std::string(kHeader) +
                      ".file 1 \"/src/kernel.cu\"\n.file 2 \"/inc/h.h\", 1700000000, 4096\n");
  ASSERT_EQ(m.files.size(), 2u);
  EXPECT_EQ(m.files[0].path, "/src/kernel.cu");
  EXPECT_EQ(m.files[1].extra, (std::vector<uint64_t>{1700000000, 4096}));
  EXPECT_EQ(m.find_file(2), &m.files[1]);
}

TEST(Parser, SkipsDebugSectionsVerbatimAndDecodesDebugStrings) {
  const std::string section =
      "\t.section\t.debug_str\n\t{\n$L__info_string0:\n.b8 95,90,52,102,111,111,0\n"
      "$L__info_string1:\n.b8 104,105\n.b8 0\n\t}\n"
      "\t.section\t.debug_info\n\t{\n.b32 $L__func_end0-$L__func_begin0\n{ nested }\n\t}\n";
  Module m = parse_ok(std::string(kHeader) + section);
  ASSERT_EQ(m.sections.size(), 2u);
  EXPECT_EQ(m.sections[0].name, ".debug_str");
  ASSERT_EQ(m.sections[0].strings.size(), 2u);
  EXPECT_EQ(m.sections[0].strings[0].value, "_Z4foo");
  EXPECT_EQ(m.sections[0].strings[1].value, "hi");
  ASSERT_NE(m.debug_string("$L__info_string1"), nullptr);
  EXPECT_EQ(*m.debug_string("$L__info_string1"), "hi");
  EXPECT_NE(m.sections[1].text.find("$L__func_end0-$L__func_begin0"), std::string::npos);
  EXPECT_NE(m.sections[1].text.find("{ nested }"), std::string::npos);
}

TEST(Parser, RejectsAnUnclosedSection) {
  Diagnostic d = parse_error(std::string(kHeader) + ".section .debug_str\n{\n.b8 1, 2\n");
  EXPECT_NE(d.message.find("expected '}' to close .section .debug_str (opened at line 6)"),
            std::string::npos)
      << d.message;
}

TEST(Parser, KeepsAnUnknownModuleDirectiveWithAWarning) {
  std::vector<Diagnostic> warnings;
  Module m = parse_ok(std::string(kHeader) + ".frobnicate 1, 2;\n.global .b32 g;\n", &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].location.line, 5u);
  EXPECT_NE(warnings[0].message.find("unknown directive '.frobnicate'"), std::string::npos);
  ASSERT_EQ(m.directives.size(), 1u);
  EXPECT_EQ(m.directives[0].text, ".frobnicate 1, 2;");
  EXPECT_EQ(m.variables.size(), 1u);
}

TEST(Parser, RejectsAStrayClosingBrace) {
  Diagnostic d = parse_error(std::string(kHeader) + ".entry k()\n{\nret;\n}\n}\n");
  EXPECT_EQ(d.location.line, 9u);
  EXPECT_NE(d.message.find("unexpected '}'"), std::string::npos) << d.message;
}

TEST(Parser, RejectsTextThatIsNotADirective) {
  Diagnostic d = parse_error(std::string(kHeader) + "add.s32 %r1, %r2, 1;\n");
  EXPECT_EQ(d.location.line, 5u);
  EXPECT_EQ(d.location.column, 1u);
  EXPECT_NE(d.message.find("expected a directive"), std::string::npos) << d.message;
}

TEST(Parser, RejectsAMalformedVersion) {
  Diagnostic d = parse_error(".version nine\n");
  EXPECT_NE(d.message.find("a version such as 9.0"), std::string::npos) << d.message;
  Diagnostic d2 = parse_error(".version 9\n");
  EXPECT_NE(d2.message.find("malformed .version"), std::string::npos) << d2.message;
}

TEST(Parser, RejectsABadAddressSize) {
  Diagnostic d = parse_error(".version 9.0\n.target sm_80\n.address_size 48\n");
  EXPECT_EQ(d.location.line, 3u);
  EXPECT_NE(d.message.find("32 or 64"), std::string::npos);
}

TEST(Parser, ReportsTruncatedInputAtTheEnd) {
  const std::string full = testing::kernel("mov.u32 %r1, %tid.x;\nret;");
  const std::string truncated = full.substr(0, full.find("%tid.x"));
  Diagnostic d = parse_error(truncated);
  EXPECT_EQ(d.location.line, 14u);
  EXPECT_NE(d.message.find("end of input"), std::string::npos) << d.message;
}

TEST(Parser, PutsTheSourceNameLineAndColumnInTheResultError) {
  Result<ParsedModule> r =
      parse_ptx(std::string(kHeader) + ".entry k()\n{\n  bra;\n}\n", {"kernel.ptx"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("kernel.ptx:7:3: error: ", 0), 0u) << r.error().message;
}

TEST(Parser, ReportsALexicalErrorRatherThanWhatItCausedDownstream) {
  Result<ParsedModule> r = parse_ptx(std::string(kHeader) + ".entry k()\n{\n  ret; \x7f\n}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(":7:8: error: unexpected byte 0x7F"), std::string::npos)
      << r.error().message;
}

TEST(Parser, AcceptsEmptyInput) {
  Result<ParsedModule> r = parse_ptx("");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->module.functions.empty());
}

TEST(Parser, ReturnsWarningsAlongsideTheModule) {
  ParseOutcome outcome = parse_ptx_with_diagnostics(testing::kernel("frob %r1;\nret;"));
  ASSERT_TRUE(outcome.module);
  ASSERT_EQ(outcome.diagnostics.size(), 1u);
  EXPECT_EQ(outcome.diagnostics[0].severity, Severity::Warning);
  EXPECT_EQ(outcome.diagnostics[0].to_string("x.ptx"),
            "x.ptx:14:1: warning: unknown instruction 'frob'; kept as a generic instruction");
}

TEST(Parser, ClearsSourceLocationsForStructuralComparison) {
  Module a = parse_ok(testing::kernel("ret;"));
  Module b = parse_ok("\n\n" + testing::kernel("  ret;"));
  EXPECT_FALSE(a == b);
  clear_source_locations(a);
  clear_source_locations(b);
  EXPECT_TRUE(a == b);
}

}  // namespace
}  // namespace kiln::ptx
