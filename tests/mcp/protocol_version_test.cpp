#include "kiln/mcp/protocol_version.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln::mcp {
namespace {

TEST(ProtocolVersion, SupportsTheThreeRevisionsNewestFirst) {
  std::vector<std::string> versions(supported_protocol_versions().begin(),
                                    supported_protocol_versions().end());
  EXPECT_EQ(versions, (std::vector<std::string>{"2025-11-25", "2025-06-18", "2025-03-26"}));
  EXPECT_EQ(newest_protocol_version(), "2025-11-25");
}

TEST(ProtocolVersion, EchoesEachSupportedVersion) {
  for (std::string_view version : supported_protocol_versions()) {
    EXPECT_TRUE(is_supported_protocol_version(version));
    EXPECT_EQ(negotiate_protocol_version(version), version);
  }
}

TEST(ProtocolVersion, AnswersAnUnknownVersionWithTheNewest) {
  EXPECT_FALSE(is_supported_protocol_version("2024-11-05"));
  EXPECT_EQ(negotiate_protocol_version("2024-11-05"), "2025-11-25");
  EXPECT_EQ(negotiate_protocol_version("2099-01-01"), "2025-11-25");
  EXPECT_EQ(negotiate_protocol_version(""), "2025-11-25");
  EXPECT_EQ(negotiate_protocol_version("garbage"), "2025-11-25");
}

TEST(ProtocolVersion, BatchesOnlyIn20250326) {
  EXPECT_TRUE(protocol_allows_batches("2025-03-26"));
  EXPECT_FALSE(protocol_allows_batches("2025-06-18"));
  EXPECT_FALSE(protocol_allows_batches("2025-11-25"));
  EXPECT_FALSE(protocol_allows_batches(""));
}

}  // namespace
}  // namespace kiln::mcp
