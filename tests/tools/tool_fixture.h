// The GPU tools through a server built as `kiln mcp` builds it, with KILN_RUNNER
// pointing at an in-process runner that starts the fake worker.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "kiln/frontier/run_frontier.h"
#include "kiln/mcp/server.h"
#include "kiln/tools/toolbox.h"
#include "runner_fixture.h"

namespace kiln::runner::testing {

// A PTX fingerprint without nvcc: sources that contain "same-ptx" share one, others differ by
// their length (record_candidate's duplicate check, without compiling).
class FixedPtx : public frontier::PtxHasher {
 public:
  Result<std::string> fingerprint(const std::string& source) override {
    return std::string(64, source.find("same-ptx") != std::string::npos ? 'e' : 'f') +
           std::to_string(source.size());
  }
};

class ToolTest : public ::testing::Test {
 protected:
  // `with_runner` false: no runner anywhere.
  void start(bool with_runner = true) {
    unsetenv("KILN_RUNNER");
    unsetenv("KILN_RUNNER_TOKEN");
    if (with_runner) {
      runner_ = std::make_unique<FakeRunner>();
      setenv("KILN_RUNNER", runner_->url().c_str(), 1);
    }
    tools::ToolboxConfig config;
    config.tasks_dir = KILN_TASKS_DIR;
    config.default_task = "fp16_gemm";
    config.run_dir = run_dir_.path();
    config.probe_local_gpu = false;
    config.results_db = run_dir_ / "results.sqlite";
    configure(config);
    ASSERT_TRUE(tools::register_toolbox(server_, config).ok());
    unsetenv("KILN_RUNNER");
  }

  // What a test suite sets beyond the defaults above (e.g. a compile cache of its own).
  virtual void configure(tools::ToolboxConfig&) {}

  // `background`: as a session calls, so a long tool answers "running" past its wait_s.
  mcp::ToolResult call(const std::string& tool, const json& arguments, bool background = false) {
    mcp::CallContext context(
        [this](json note) {
          std::lock_guard lock(mutex_);
          notes_.push_back(std::move(note));
        },
        "progress-1", cancelled_,
        std::make_shared<std::atomic<mcp::LogLevel>>(mcp::LogLevel::kInfo));
    if (background) context.allow_background();
    return server_.tools().run(tool, arguments, context);
  }

  std::vector<json> notes(const std::string& method) {
    std::lock_guard lock(mutex_);
    std::vector<json> out;
    for (const auto& note : notes_)
      if (note.value("method", "") == method) out.push_back(note);
    return out;
  }

  TempDir run_dir_;
  std::unique_ptr<FakeRunner> runner_;
  mcp::Server server_{mcp::ServerInfo{}};
  std::shared_ptr<std::atomic<bool>> cancelled_ = std::make_shared<std::atomic<bool>>(false);
  std::mutex mutex_;
  std::vector<json> notes_;
};

}  // namespace kiln::runner::testing
