// diagnostics.h: nvcc, cudafe, gcc and ptxas messages as file:line:column with the source
// line. The samples are real nvcc 13.0 output for broken kernels.
#include "kiln/compiler/diagnostics.h"

#include <gtest/gtest.h>

namespace kiln::compiler {
namespace {

constexpr const char* kBadSource = R"(#include <cstdio>
__global__ void k(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int unused = 3;
  if (i < n) out[i] = undefined_thing + 1.0f;
}
)";

// nvcc -c bad.cu
constexpr const char* kFrontEndError =
    R"(bad.cu(5): error: identifier "undefined_thing" is undefined
    if (i < n) out[i] = undefined_thing + 1.0f;
                        ^

1 error detected in the compilation of "bad.cu".
)";

// nvcc -c warn.cu
constexpr const char* kFrontEndWarning =
    R"(warn.cu(4): warning #177-D: variable "unused" was declared but never referenced
    int unused = 3;
        ^

Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"

ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z1kPfi' for 'sm_90a'
ptxas info    : Function properties for _Z1kPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 3.238 ms
)";

// A template error: nvcc quotes the preprocessed line and adds the instantiation after it.
constexpr const char* kTemplateSource =
    "template <typename T> __device__ T twice(T v) { return v.nope(); }\n"
    "__global__ void k(float* out) { out[0] = twice(out[1]); }\n";
constexpr const char* kTemplateError =
    R"(tmpl.cu(1): error: expression must have class type but it has type "float"
  template <typename T> __attribute__((device)) T twice(T v) { return v.nope(); }
                                                                      ^
          detected during instantiation of "T twice(T) [with T=float]" at line 2

1 error detected in the compilation of "tmpl.cu".
)";

// The host compiler's preprocessor on `#error "stop here"`.
constexpr const char* kHostError = R"(host.cu:3:2: error: #error "stop here"
    3 | #error "stop here"
      |  ^~~~~
)";

// Inline asm naming a register that does not exist, and too much shared memory.
constexpr const char* kPtxasErrors =
    R"(ptxas keep/ptxerr.ptx, line 61; error   : Arguments mismatch for instruction 'mov'
ptxas keep/ptxerr.ptx, line 61; error   : Unknown symbol '%nosuchreg'
ptxas fatal   : Ptx assembly aborted due to errors
)";
constexpr const char* kPtxasSmem =
    "ptxas error   : Entry function '_Z3bigPf' uses too much shared data (0x445c0 bytes, "
    "0x38c00 max)\n";
constexpr const char* kPtxasSpillWarning =
    "ptxas warning : Registers are spilled to local memory in function '_Z5spillPfPKfi', 1228 "
    "bytes spill stores, 1404 bytes spill loads\n";
constexpr const char* kNvccFatal = "nvcc fatal   : Unsupported gpu architecture 'compute_99'\n";

SourceReader reader_for(std::string name, std::string text) {
  return [name, text](const std::string& file) -> std::optional<std::string> {
    if (file == name) return text;
    return std::nullopt;
  };
}

TEST(Diagnostics, FrontEndErrorHasLineColumnAndSourceLine) {
  auto diagnostics = parse_diagnostics(kFrontEndError, reader_for("bad.cu", kBadSource));
  ASSERT_EQ(diagnostics.size(), 1u);
  const Diagnostic& d = diagnostics[0];
  EXPECT_EQ(d.severity, "error");
  EXPECT_EQ(d.tool, "nvcc");
  EXPECT_EQ(d.file, "bad.cu");
  EXPECT_EQ(d.line, 5);
  EXPECT_EQ(d.column, 23);
  EXPECT_EQ(d.message, "identifier \"undefined_thing\" is undefined");
  EXPECT_EQ(d.source_line, "  if (i < n) out[i] = undefined_thing + 1.0f;");
  EXPECT_EQ(d.to_string(),
            "bad.cu:5:23: error: identifier \"undefined_thing\" is undefined\n"
            "    if (i < n) out[i] = undefined_thing + 1.0f;");
}

TEST(Diagnostics, UsesNvccsQuoteWhenTheFileCannotBeRead) {
  auto diagnostics = parse_diagnostics(kFrontEndError);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics[0].column, 23);
  EXPECT_EQ(diagnostics[0].source_line, "  if (i < n) out[i] = undefined_thing + 1.0f;");
}

TEST(Diagnostics, WarningKeepsItsNumberAndIgnoresPtxasInfo) {
  auto diagnostics = parse_diagnostics(kFrontEndWarning);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics[0].severity, "warning");
  EXPECT_EQ(diagnostics[0].code, "177-D");
  EXPECT_EQ(diagnostics[0].line, 4);
  EXPECT_EQ(diagnostics[0].column, 7);
  EXPECT_FALSE(diagnostics[0].is_error());
}

TEST(Diagnostics, TemplateErrorShowsTheWrittenLineAndTheInstantiation) {
  auto diagnostics = parse_diagnostics(kTemplateError, reader_for("tmpl.cu", kTemplateSource));
  ASSERT_EQ(diagnostics.size(), 1u);
  const Diagnostic& d = diagnostics[0];
  EXPECT_EQ(d.source_line, "template <typename T> __device__ T twice(T v) { return v.nope(); }");
  // The column points at `v.nope()` in the line as written, not in the preprocessed quote.
  EXPECT_EQ(d.source_line.substr(static_cast<size_t>(d.column - 1), 6), "v.nope");
  EXPECT_NE(d.message.find("detected during instantiation"), std::string::npos) << d.message;
}

TEST(Diagnostics, HostCompilerErrorsCarryTheirColumn) {
  auto diagnostics = parse_diagnostics(
      kHostError, reader_for("host.cu", "#include <cstdio>\nint x;\n#error \"stop here\"\n"));
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics[0].tool, "host");
  EXPECT_EQ(diagnostics[0].line, 3);
  EXPECT_EQ(diagnostics[0].column, 2);
  EXPECT_EQ(diagnostics[0].source_line, "#error \"stop here\"");
}

TEST(Diagnostics, PtxasLineErrorsKeepThePtxLineAndDropTheSummary) {
  auto diagnostics = parse_diagnostics(kPtxasErrors);
  ASSERT_EQ(diagnostics.size(), 2u);
  EXPECT_EQ(diagnostics[0].tool, "ptxas");
  EXPECT_EQ(diagnostics[0].ptx_line, 61);
  EXPECT_EQ(diagnostics[1].message, "Unknown symbol '%nosuchreg'");
}

TEST(Diagnostics, PtxasMessagesNameKernelsBySourceName) {
  auto errors = parse_diagnostics(kPtxasSmem);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(errors[0].is_error());
  EXPECT_EQ(errors[0].message,
            "Entry function 'big(float*)' uses too much shared data (0x445c0 bytes, 0x38c00 max)");
  auto warnings = parse_diagnostics(kPtxasSpillWarning);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].severity, "warning");
  EXPECT_NE(warnings[0].message.find("'spill(float*, float const*, int)'"), std::string::npos);
}

TEST(Diagnostics, NvccDriverFatalIsAnError) {
  auto diagnostics = parse_diagnostics(kNvccFatal);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_TRUE(diagnostics[0].is_error());
  EXPECT_EQ(diagnostics[0].file, "");
  EXPECT_EQ(diagnostics[0].to_string(), "nvcc: error: Unsupported gpu architecture 'compute_99'");
}

TEST(Diagnostics, MalformedAndUnrelatedOutputGivesNothing) {
  EXPECT_TRUE(parse_diagnostics("").empty());
  EXPECT_TRUE(parse_diagnostics("kernel.cu(: error: x\n(3): error\n^^^\n  ^\n").empty());
  EXPECT_TRUE(parse_diagnostics("ptxas info    : Used 10 registers\n").empty());
}

TEST(Diagnostics, RoundTripsThroughJson) {
  auto diagnostics = parse_diagnostics(kFrontEndWarning);
  ASSERT_EQ(diagnostics.size(), 1u);
  const Diagnostic back = Diagnostic::from_json(diagnostics[0].to_json());
  EXPECT_EQ(back.to_string(), diagnostics[0].to_string());
  EXPECT_EQ(back.code, "177-D");
}

TEST(Diagnostics, LineOfCountsFromOne) {
  EXPECT_EQ(line_of("a\nb\r\nc", 2), "b");
  EXPECT_EQ(line_of("a\nb", 3), "");
  EXPECT_EQ(line_of("a", 0), "");
}

}  // namespace
}  // namespace kiln::compiler
