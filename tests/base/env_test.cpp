// env.h: an environment variable set to the empty string counts as unset.
#include "kiln/base/env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace kiln {
namespace {

constexpr const char* kName = "KILN_ENV_TEST_VARIABLE";

class EnvTest : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv(kName); }
};

TEST_F(EnvTest, ValueOfASetVariable) {
  setenv(kName, "/opt/x", 1);
  EXPECT_EQ(env_value(kName), std::optional<std::string>("/opt/x"));
  EXPECT_EQ(env_or(kName, "fallback"), "/opt/x");
}

TEST_F(EnvTest, UnsetVariableHasNoValue) {
  unsetenv(kName);
  EXPECT_EQ(env_value(kName), std::nullopt);
  EXPECT_EQ(env_or(kName, "fallback"), "fallback");
}

TEST_F(EnvTest, EmptyVariableCountsAsUnset) {
  setenv(kName, "", 1);
  EXPECT_EQ(env_value(kName), std::nullopt);
  EXPECT_EQ(env_or(kName, "fallback"), "fallback");
  EXPECT_EQ(env_or(kName, ""), "");
}

TEST_F(EnvTest, WhitespaceIsAValue) {
  setenv(kName, " ", 1);
  EXPECT_EQ(env_value(kName), std::optional<std::string>(" "));
}

}  // namespace
}  // namespace kiln
