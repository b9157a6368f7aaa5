// The hardware fingerprint is filled in on this machine.
#include "runner/fingerprint.h"

#include <gtest/gtest.h>

namespace schedforge::runner {
namespace {

TEST(Fingerprint, FieldsAreFilledOnThisMachine) {
    const HardwareFingerprint fp = fingerprint_this_machine();
    EXPECT_FALSE(fp.cpu_model.empty());
    EXPECT_GE(fp.logical_cpus, 1);
    EXPECT_GE(fp.physical_cores, 1);
    EXPECT_LE(fp.physical_cores, fp.logical_cpus);
    EXPECT_GT(fp.memory_bytes, int64_t(1) << 28);
    EXPECT_FALSE(fp.caches.empty());
    for (const CacheInfo &c : fp.caches) {
        EXPECT_GE(c.level, 1);
        EXPECT_GT(c.size_bytes, 0);
    }
    EXPECT_FALSE(fp.isa_features.empty());
    EXPECT_EQ(fp.halide_version.rfind("14.", 0), 0u) << fp.halide_version;
    EXPECT_FALSE(fp.target.empty());
    // Every field appears in the key = value listing.
    EXPECT_EQ(fp.fields().front().first, "cpu_model");
    EXPECT_EQ(fp.fields().back(), std::make_pair(std::string("target"), fp.target));
}

} // namespace
} // namespace schedforge::runner
