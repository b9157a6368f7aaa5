// The caches a file's features assume, read from its hardware fingerprint (datagen/stored.h).
#include "datagen/stored.h"

#include <gtest/gtest.h>

namespace schedforge::datagen {
namespace {

TEST(RecordedCacheSizes, AreTheRecordedL2AndTheL3OverThePhysicalCores) {
    const featurize::CacheSizes c = recorded_cache_sizes("cpu_model = AMD EPYC\nphysical_cores = 2\n"
                                                         "logical_cpus = 4\ncache_L1_Data = 32768\n"
                                                         "cache_L2_Unified = 524288\ncache_L3_Unified = 8388608\n");
    EXPECT_EQ(c.core_bytes, 524288);
    EXPECT_EQ(c.shared_bytes_per_core, 4194304);
    EXPECT_EQ(c.threads, 4); // the runner timed on a thread a CPU
}

TEST(RecordedCacheSizes, AreTheBuiltInOnesWhereTheRecordSaysNothing) {
    EXPECT_EQ(recorded_cache_sizes(""), featurize::CacheSizes{});
    EXPECT_EQ(recorded_cache_sizes("cache_L2_Unified = \nphysical_cores = 0\ncache_L3_Unified = garbage\n"),
              featurize::CacheSizes{});
    // No core count: the whole L3 is the core's share.
    EXPECT_EQ(recorded_cache_sizes("cache_L3_Unified = 8388608\n").shared_bytes_per_core, 8388608);
}

} // namespace
} // namespace schedforge::datagen
