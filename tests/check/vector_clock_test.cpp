// The race detector's clocks: ordering of epochs within the running cluster and across
// clusters, joins, and release/acquire through a location.
#include "vector_clock.h"

#include <gtest/gtest.h>

namespace kiln::check::race {
namespace {

constexpr uint32_t kSlots = 8;

Clock clock_of(std::vector<uint32_t> local) {
  Clock c;
  c.local = std::move(local);
  return c;
}

TEST(VectorClock, EpochIsOrderedOnlyWhenTheClockKnowsIt) {
  Clock c = clock_of({3, 0, 1, 0, 0, 0, 0, 0});
  EXPECT_TRUE(ordered({0, 3}, c, 0, kSlots));
  EXPECT_FALSE(ordered({0, 4}, c, 0, kSlots));
  EXPECT_FALSE(ordered({1, 1}, c, 0, kSlots));
  EXPECT_TRUE(ordered({2, 1}, c, 0, kSlots));
}

TEST(VectorClock, EarlierClustersAreUnorderedUntilAcquired) {
  Clock c = clock_of(std::vector<uint32_t>(kSlots, 5));
  Epoch earlier{kSlots * 0 + 2, 1};  // cluster 0, running cluster 1
  EXPECT_FALSE(ordered(earlier, c, 1, kSlots));
  c.remote[0] = {0, 0, 1};
  EXPECT_TRUE(ordered(earlier, c, 1, kSlots));
}

TEST(VectorClock, JoinTakesTheMaximumOfEachSlot) {
  Clock a = clock_of({1, 4, 0});
  Clock b = clock_of({2, 3, 7});
  b.remote[3] = {9};
  a.join(b);
  EXPECT_EQ(a.local, (std::vector<uint32_t>{2, 4, 7}));
  EXPECT_EQ(a.remote.at(3), std::vector<uint32_t>{9});
}

TEST(VectorClock, LocationCarriesAReleaseIntoALaterCluster) {
  LocationClock flag;
  Clock producer = clock_of({6, 0, 0, 0});
  flag.release(producer, 0);
  Clock consumer = clock_of({0, 1, 0, 0});
  flag.acquire_into(consumer, 1);  // the consumer runs in cluster 1
  EXPECT_TRUE(ordered({0, 6}, consumer, 1, 4));
  EXPECT_EQ(consumer.local[0], 0u);  // slot 0 of cluster 1 learned nothing
}

// A release of .cta scope reaches only acquires of its own CTA; .cluster ones its cluster; .gpu
// ones every CTA, but only acquires whose own scope reaches back to the releaser.
TEST(VectorClock, ScopedReleaseReachesOnlyTheThreadsItsScopeIncludes) {
  LocationClock flag;
  flag.release(clock_of({6, 0, 0, 0}), 0, {0, 0}, Scope::Cta);
  Clock same_cta = clock_of({0, 1, 0, 0});
  EXPECT_TRUE(flag.acquire_into(same_cta, 0, {0, 0}, Scope::Cta));
  EXPECT_EQ(same_cta.local[0], 6u);
  Clock other_cta = clock_of({0, 1, 0, 0});
  EXPECT_FALSE(flag.acquire_into(other_cta, 0, {0, 1}, Scope::Gpu));  // the release is .cta
  EXPECT_EQ(other_cta.local[0], 0u);

  LocationClock wide;
  wide.release(clock_of({6, 0, 0, 0}), 0, {0, 0}, Scope::Gpu);
  Clock narrow_reader = clock_of({0, 1, 0, 0});
  EXPECT_FALSE(wide.acquire_into(narrow_reader, 1, {1, 1}, Scope::Cta));  // .cta acquire
  EXPECT_FALSE(ordered({0, 6}, narrow_reader, 1, 4));
  Clock reader = clock_of({0, 1, 0, 0});
  EXPECT_TRUE(wide.acquire_into(reader, 1, {1, 1}, Scope::Gpu));
  EXPECT_TRUE(ordered({0, 6}, reader, 1, 4));
}

TEST(VectorClock, ClusterScopeIncludesTheCtasOfItsClusterOnly) {
  LocationClock flag;
  flag.release(clock_of({3, 0, 0, 0}), 2, {2, 4}, Scope::Cluster);
  Clock sibling = clock_of({0, 0, 1, 0});
  EXPECT_TRUE(flag.acquire_into(sibling, 2, {2, 5}, Scope::Cluster));
  EXPECT_EQ(sibling.local[0], 3u);
  Clock later = clock_of({0, 0, 1, 0});
  EXPECT_FALSE(flag.acquire_into(later, 3, {3, 6}, Scope::Gpu));
}

}  // namespace
}  // namespace kiln::check::race
