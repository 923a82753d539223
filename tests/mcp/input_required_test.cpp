#include "kiln/mcp/input_required.h"

#include <gtest/gtest.h>

namespace kiln::mcp {
namespace {

TEST(InputRequiredTest, SealedStateOpensToItself) {
  RequestStateSeal seal("key");
  EXPECT_EQ(seal.open(seal.seal("round-2:Ada")), "round-2:Ada");
  EXPECT_EQ(seal.open(seal.seal("")), "");
}

TEST(InputRequiredTest, AlteredOrForeignStateDoesNotOpen) {
  RequestStateSeal seal("key");
  std::string sealed = seal.seal("round-1");
  EXPECT_FALSE(seal.open(sealed + "-TAMPERED"));
  EXPECT_FALSE(seal.open("round-1"));
  EXPECT_FALSE(RequestStateSeal("other key").open(sealed));
  EXPECT_FALSE(RequestStateSeal().open(sealed)) << "a fresh process draws a fresh key";
}

TEST(InputRequiredTest, ResultCarriesRequestsAndSealedStateOnlyWhenThereIsState) {
  RequestStateSeal seal("key");
  InputRequired ask{{{"q", {{"method", "roots/list"}, {"params", nlohmann::json::object()}}}}, ""};
  auto plain = input_required_result(ask, seal);
  EXPECT_EQ(plain["resultType"], "input_required");
  EXPECT_EQ(plain["inputRequests"]["q"]["method"], "roots/list");
  EXPECT_FALSE(plain.contains("requestState"));
  ask.request_state = "s";
  EXPECT_EQ(seal.open(input_required_result(ask, seal)["requestState"]), "s");
}

}  // namespace
}  // namespace kiln::mcp
