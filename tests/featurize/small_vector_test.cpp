// SmallVector (common/small_vector.h), the storage of every Region: the same contents as a
// std::vector through the operations the featurizer uses, in place and spilled to the heap.
#include "common/small_vector.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace {

using schedforge::SmallVector;
struct Pair {
    long a = 0, b = -1;
    bool operator==(const Pair &o) const { return a == o.a && b == o.b; }
};
using Small = SmallVector<Pair, 3>;

std::vector<Pair> as_vector(const Small &s) { return {s.begin(), s.end()}; }
std::vector<Pair> pairs(int n, int offset = 0) {
    std::vector<Pair> out;
    for (int i = 0; i < n; i++) out.push_back({i + offset, 10 * i});
    return out;
}

TEST(SmallVector, GrowsPastItsInPlaceStorageKeepingEveryElement) {
    Small s;
    EXPECT_TRUE(s.empty());
    for (const Pair &p : pairs(7)) s.push_back(p);
    EXPECT_EQ(s.size(), 7u);
    EXPECT_GE(s.capacity(), 7u);
    EXPECT_EQ(as_vector(s), pairs(7));
    EXPECT_EQ(s.front(), (Pair{0, 0}));
    EXPECT_EQ(s.back(), (Pair{6, 60}));
    s.pop_back();
    EXPECT_EQ(as_vector(s), pairs(6));
}

TEST(SmallVector, PushingAnOwnElementWhileSpillingCopiesItFirst) {
    const std::vector<Pair> three = pairs(3);
    Small s(three.begin(), three.end()); // full in place: the next push moves the storage
    s.push_back(s[1]);
    EXPECT_EQ(s.size(), 4u);
    EXPECT_EQ(s[3], (Pair{1, 10}));
}

TEST(SmallVector, CopiesAndMovesInPlaceAndSpilledAlike) {
    for (int n : {0, 2, 3, 4, 9}) {
        const std::vector<Pair> expected = pairs(n), other = pairs(8, 100), five = pairs(5);
        Small a(expected.begin(), expected.end());
        ASSERT_EQ(as_vector(a), expected);
        Small copy(a);
        EXPECT_EQ(as_vector(copy), expected) << n;
        EXPECT_TRUE(copy == a);
        Small moved(std::move(copy));
        EXPECT_EQ(as_vector(moved), expected) << n;
        EXPECT_TRUE(copy.empty());
        // Assignment over storage of the other kind (spilled over in place, and back).
        Small big(other.begin(), other.end()), small{Pair{1, 1}};
        big = a;
        small = a;
        EXPECT_EQ(as_vector(big), expected) << n;
        EXPECT_EQ(as_vector(small), expected) << n;
        Small target(five.begin(), five.end());
        target = std::move(moved);
        EXPECT_EQ(as_vector(target), expected) << n;
        EXPECT_TRUE(moved.empty());
    }
}

TEST(SmallVector, ResizesAssignsAndErasesAsStdVector) {
    Small s{Pair{1, 2}};
    s.resize(5, Pair{7, 7});
    std::vector<Pair> v{{1, 2}};
    v.resize(5, Pair{7, 7});
    EXPECT_EQ(as_vector(s), v);
    s.erase(s.begin() + 1, s.begin() + 3);
    v.erase(v.begin() + 1, v.begin() + 3);
    EXPECT_EQ(as_vector(s), v);
    s.erase(s.begin());
    v.erase(v.begin());
    EXPECT_EQ(as_vector(s), v);
    const std::vector<Pair> five = pairs(5, 1);
    Small grown(five.begin(), five.end()); // spilled: growing frees the block grown[0] is in
    grown.resize(12, grown[0]);
    EXPECT_EQ(as_vector(grown).back(), (Pair{1, 0}));
    s.assign(4, Pair{3, 3});
    EXPECT_EQ(as_vector(s), std::vector<Pair>(4, Pair{3, 3}));
    s.clear();
    EXPECT_TRUE(s.empty());
    EXPECT_TRUE(s != (Small{Pair{3, 3}}));
}

} // namespace
