#include "kiln/replay/id_map.h"

#include <gtest/gtest.h>

namespace kiln::replay {
namespace {

using json = nlohmann::json;

TEST(IdMapTest, AClientRequestKeepsItsRecordedId) {
  IdMap ids;
  EXPECT_EQ(ids.client_request("abc", 4), "abc");
  EXPECT_EQ(ids.client_request(7, 5), 7);
  auto answered = ids.client_answer("abc");
  ASSERT_TRUE(answered);
  EXPECT_EQ(answered->recorded, "abc");
  EXPECT_EQ(answered->ticket, 4u);
  EXPECT_FALSE(ids.client_answer("abc")) << "an answered id is forgotten";
}

TEST(IdMapTest, AnIdStillInFlightGetsAFreshOneThatMapsBack) {
  IdMap ids;
  ASSERT_EQ(ids.client_request(1, 10), 1);
  const json fresh = ids.client_request(1, 11);
  EXPECT_NE(fresh, 1);
  EXPECT_EQ(ids.live_client_id(1), fresh) << "a cancellation of the later request names it";
  auto second = ids.client_answer(fresh);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->recorded, 1);
  EXPECT_EQ(second->ticket, 11u);
  auto first = ids.client_answer(1);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->ticket, 10u);
}

TEST(IdMapTest, TheClientsAnswerToAServerRequestTakesTheLiveId) {
  IdMap ids;
  ids.server_request(0, "srv-9");
  EXPECT_EQ(ids.server_answer(0), json("srv-9"));
  EXPECT_FALSE(ids.server_answer(0)) << "answered once";
  EXPECT_FALSE(ids.server_answer(3)) << "never asked";
}

}  // namespace
}  // namespace kiln::replay
