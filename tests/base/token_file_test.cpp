#include "kiln/http/token_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/base/file.h"
#include "support/temp_dir.h"

namespace kiln::http {
namespace {

using ::testing::HasSubstr;

TEST(TokenFile, ReadsTheTokenWithoutTrailingWhitespace) {
  testing::TempDir dir;
  ASSERT_TRUE(write_file(dir / "token", "0123456789abcdef0123 \t\r\n").ok());
  auto token = read_token_file(dir / "token");
  ASSERT_TRUE(token.ok()) << token.error().message;
  EXPECT_EQ(*token, "0123456789abcdef0123");
}

TEST(TokenFile, RefusesAnEmptyOrShortTokenAndSaysHowToMakeOne) {
  testing::TempDir dir;
  ASSERT_TRUE(write_file(dir / "empty", "\n").ok());
  auto empty = read_token_file(dir / "empty");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message, HasSubstr("holds nothing"));
  EXPECT_THAT(empty.error().message, HasSubstr("openssl rand -hex 32"));
  ASSERT_TRUE(write_file(dir / "short", "0123456789abcde\n").ok());  // 15 characters
  auto short_token = read_token_file(dir / "short");
  ASSERT_FALSE(short_token.ok());
  EXPECT_THAT(short_token.error().message, HasSubstr("under 16 characters"));
  ASSERT_TRUE(write_file(dir / "sixteen", "0123456789abcdef").ok());
  EXPECT_TRUE(read_token_file(dir / "sixteen").ok());
}

TEST(TokenFile, RefusesAMissingFileNamingIt) {
  testing::TempDir dir;
  auto missing = read_token_file(dir / "missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("token file"));
  EXPECT_THAT(missing.error().message, HasSubstr("missing"));
}

}  // namespace
}  // namespace kiln::http
