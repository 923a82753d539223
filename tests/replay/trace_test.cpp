#include "kiln/replay/trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln::replay {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

std::string line(const char* ts, const char* dir, const json& message) {
  return json{{"ts", std::string("2026-12-02T06:") + ts + "Z"}, {"dir", dir}, {"message", message}}
             .dump() +
         "\n";
}

json call(int id, const std::string& tool, json arguments) {
  return {{"jsonrpc", "2.0"},
          {"id", id},
          {"method", "tools/call"},
          {"params", {{"name", tool}, {"arguments", arguments}}}};
}

json answer(int id, const std::string& text, json structured = json::object(), bool error = false) {
  return {{"jsonrpc", "2.0"},
          {"id", id},
          {"result",
           {{"content", {{{"type", "text"}, {"text", text}}}},
            {"structuredContent", structured},
            {"isError", error}}}};
}

Trace sample() {
  const std::string text =
      line("00:00.000", "in",
           {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"}, {"params", json::object()}}) +
      line("00:00.010", "out",
           {{"jsonrpc", "2.0"}, {"id", 1}, {"result", {{"protocolVersion", "2025-11-25"}}}}) +
      line("00:01.000", "in", call(2, "get_task", json::object())) +
      line("00:01.050", "out", answer(2, "fp16_gemm: FP16 GEMM\narch sm_90a")) +
      line("00:02.000", "in",
           call(3, "simulate",
                {{"candidate",
                  "/very/long/path/to/the/run/worktree/candidates/fp16_gemm/scratch/kernel.cu"},
                 {"workloads", {"64x64x64"}}})) +
      line("00:09.500", "out", answer(3, "simulate: 0/1 pass", {{"ok", false}})) +
      line("00:10.000", "in", call(4, "compile", {{"source", "a\nb\nc\n"}})) +
      line("00:13.000", "out",
           answer(
               4, "compile: FAILED",
               {{"error", {{"code", "compile_error"}, {"message", "kernel.cu:1:1: error\nmore"}}}},
               true)) +
      line("00:14.000", "in", call(5, "benchmark", {{"source", "x"}})) +
      line("00:44.000", "out",
           answer(5, "benchmark r-1: PASSED 10/10", {{"summary", {{"geomean_speedup", 0.9123}}}})) +
      line("00:45.000", "in", call(6, "read_ptx_spec", {{"query", 3}})) +
      line("00:45.002", "out",
           {{"jsonrpc", "2.0"},
            {"id", 6},
            {"error", {{"code", -32602}, {"message", "query must be a string"}}}}) +
      line("00:46.000", "in", call(7, "simulate", json::object()));
  auto recording = parse_recording(text, "session.jsonl", ReadMode::kLenient);
  EXPECT_TRUE(recording);
  return build_trace(*recording);
}

TEST(TraceTest, EachToolCallWithItsOutcomeAndDuration) {
  const Trace trace = sample();
  ASSERT_EQ(trace.calls.size(), 6u);
  EXPECT_EQ(trace.sessions, 1u);
  EXPECT_EQ(trace.other_requests, 1u);
  EXPECT_EQ(trace.calls[0].outcome, CallOutcome::kPass);
  EXPECT_DOUBLE_EQ(*trace.calls[0].seconds, 0.05);
  EXPECT_EQ(trace.calls[0].message, "fp16_gemm: FP16 GEMM");
  EXPECT_EQ(trace.calls[1].outcome, CallOutcome::kFail);
  EXPECT_THAT(trace.calls[1].arguments, HasSubstr("kernel.cu"));
  EXPECT_THAT(trace.calls[1].arguments, HasSubstr("workloads=[\"64x64x64\"]"));
  EXPECT_EQ(trace.calls[2].outcome, CallOutcome::kToolError);
  EXPECT_EQ(trace.calls[2].message, "kernel.cu:1:1: error");
  EXPECT_EQ(trace.calls[2].arguments, "source=<4 lines>");
  EXPECT_DOUBLE_EQ(*trace.calls[3].geomean, 0.9123);
  EXPECT_EQ(trace.calls[4].outcome, CallOutcome::kRpcError);
  EXPECT_EQ(trace.calls[4].message, "error -32602: query must be a string");
  EXPECT_EQ(trace.calls[5].outcome, CallOutcome::kNoAnswer);
  EXPECT_FALSE(trace.calls[5].seconds);
}

TEST(TraceTest, TotalsPerToolMostCalledFirst) {
  const Trace trace = sample();
  ASSERT_EQ(trace.tools.size(), 5u);
  EXPECT_EQ(trace.tools[0].tool, "simulate");
  EXPECT_EQ(trace.tools[0].calls, 2u);
  EXPECT_EQ(trace.tools[0].unanswered, 1u);
  EXPECT_DOUBLE_EQ(trace.tools[0].total_s, 7.5);
}

TEST(TraceTest, ReadsAsPlainTextWithTheLongestCalls) {
  const std::string text = format_trace(sample(), 2);
  EXPECT_THAT(text, HasSubstr("session.jsonl: 6 tool call(s), 1 other request(s), 1 session(s)"));
  EXPECT_THAT(text, HasSubstr("06:00:14.000  benchmark        30.00 s   pass     geomean 0.912x"));
  EXPECT_THAT(text, HasSubstr("compile          3.00 s    isError"));
  EXPECT_THAT(text, HasSubstr("per tool: calls, errors, unanswered, total, longest"));
  const auto longest = text.find("longest calls:");
  ASSERT_NE(longest, std::string::npos);
  const std::string tail = text.substr(longest);
  EXPECT_LT(tail.find("benchmark"), tail.find("simulate"));
  EXPECT_EQ(tail.find("compile"), std::string::npos) << "only the two longest";
}

TEST(TraceTest, AsJson) {
  const json j = trace_json(sample());
  EXPECT_EQ(j["calls"].size(), 6u);
  EXPECT_EQ(j["calls"][3]["geomean"], 0.9123);
  EXPECT_EQ(j["calls"][2]["outcome"], "isError");
  EXPECT_EQ(j["tools"][0]["tool"], "simulate");
}

TEST(TraceTest, ALineCutShortIsAWarningNotAnEnd) {
  const std::string text = line("00:00.000", "in", call(2, "get_task", json::object())) +
                           "{\"ts\":\"2026-12-02T06:00:01Z\",\"dir\":\"out\",\"mess";
  auto recording = parse_recording(text, "cut.jsonl", ReadMode::kLenient);
  ASSERT_TRUE(recording);
  const std::string shown = format_trace(build_trace(*recording));
  EXPECT_THAT(shown, HasSubstr("warning: cut.jsonl:2: the recording is cut short"));
  EXPECT_THAT(shown, HasSubstr("no answer"));
}

}  // namespace
}  // namespace kiln::replay
