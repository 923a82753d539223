// A server built the way `kiln mcp` builds it, over the repository's tasks, with a fresh run
// directory and compile cache per test: the fixture of the local tool tests that need nvcc.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kiln/mcp/server.h"
#include "kiln/tools/toolbox.h"
#include "support/temp_dir.h"

namespace kiln::tools {

class NvccToolboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!KILN_TEST_HAVE_NVCC) GTEST_SKIP() << "no CUDA toolkit";
    ToolboxConfig config;
    config.tasks_dir = KILN_TASKS_DIR;
    config.default_task = "fp16_gemm";
    config.run_dir = run_dir_.path();
    config.compile_cache_dir = cache_.path();
    config.probe_local_gpu = false;
    configure(config);
    const Status registered = register_toolbox(server_, config);
    ASSERT_TRUE(registered.ok()) << registered.error().message;
  }
  // What a test suite sets beyond the defaults above (e.g. the simulator's driver).
  virtual void configure(ToolboxConfig&) {}
  mcp::ToolResult call_tool(const std::string& tool, const nlohmann::json& arguments) {
    auto context = mcp::CallContext::detached();
    return server_.tools().run(tool, arguments, context);
  }
  testing::TempDir run_dir_;
  testing::TempDir cache_;
  mcp::Server server_{mcp::ServerInfo{}};
};

}  // namespace kiln::tools
