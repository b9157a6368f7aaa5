// Rng: the same seed gives the same stream; draws stay in range and are roughly uniform.
#include "common/rng.h"

#include <gtest/gtest.h>

#include <set>

namespace schedforge::common {
namespace {

TEST(Rng, SameSeedGivesSameStream) {
    Rng a(42), b(42);
    for (int i = 0; i < 1000; i++) ASSERT_EQ(a.next_u64(), b.next_u64());
}

TEST(Rng, StreamIsPinnedAcrossPlatforms) {
    // The generator's determinism rests on this exact stream: a change here changes every
    // pipeline, and must come with a generator version bump.
    Rng r(0);
    EXPECT_EQ(r.next_u64(), 0xe220a8397b1dcdafULL);
}

TEST(Rng, UniformIntStaysInRangeAndHitsEveryValue) {
    Rng r(7);
    std::set<int64_t> seen;
    for (int i = 0; i < 10000; i++) {
        const int64_t v = r.uniform_int(-3, 5);
        ASSERT_GE(v, -3);
        ASSERT_LE(v, 5);
        seen.insert(v);
    }
    EXPECT_EQ(seen.size(), 9u);
}

TEST(Rng, WeightedIndexFollowsWeightsAndSkipsZero) {
    Rng r(9);
    int counts[3] = {0, 0, 0};
    for (int i = 0; i < 30000; i++) counts[r.weighted_index({1.0, 0.0, 3.0})]++;
    EXPECT_EQ(counts[1], 0);
    EXPECT_NEAR(double(counts[2]) / counts[0], 3.0, 0.3);
}

TEST(Rng, DerivedSeedsDiffer) {
    std::set<uint64_t> seeds;
    for (uint64_t s = 0; s < 1000; s++) seeds.insert(derive_seed(5, s));
    EXPECT_EQ(seeds.size(), 1000u);
}

} // namespace
} // namespace schedforge::common
