// Reading Linux's cache description: sizes ("32K"), CPU lists ("0-3,8"), and this machine's caches.
#include "common/host_caches.h"

#include <gtest/gtest.h>

namespace schedforge::common {
namespace {

TEST(HostCaches, ParsesSysfsSizes) {
    EXPECT_EQ(parse_cache_size("32K\n"), 32768);
    EXPECT_EQ(parse_cache_size("8M"), 8 << 20);
    EXPECT_EQ(parse_cache_size("1G"), int64_t(1) << 30);
    EXPECT_EQ(parse_cache_size("4096"), 4096);
    EXPECT_EQ(parse_cache_size(""), 0);
}

TEST(HostCaches, CountsCpuLists) {
    EXPECT_EQ(count_cpu_list("0\n"), 1);
    EXPECT_EQ(count_cpu_list("0-1"), 2);
    EXPECT_EQ(count_cpu_list("0-3,8,10-11"), 7);
    EXPECT_EQ(count_cpu_list(""), 0);
    EXPECT_EQ(count_cpu_list("garbage"), 0);
    EXPECT_EQ(count_cpu_list("3-1"), 0);
}

// Every x86 or ARM server Linux runs on describes at least a data cache per core.
TEST(HostCaches, DescribesThisMachine) {
    const std::vector<HostCache> caches = host_caches();
    ASSERT_FALSE(caches.empty());
    for (const HostCache &c : caches) {
        EXPECT_GE(c.level, 1);
        EXPECT_GT(c.size_bytes, 0) << "L" << c.level << " " << c.type;
        EXPECT_GE(c.shared_cpus, 0);
    }
}

} // namespace
} // namespace schedforge::common
