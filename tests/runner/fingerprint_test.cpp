// The hardware fingerprint is filled in on this machine.
#include "runner/cuda_device.h"
#include "runner/fingerprint.h"

#include <gtest/gtest.h>

#include <algorithm>

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
    // The machine's kind, as the search matches calibrations by it (sampler/machine_calibration.h).
    EXPECT_EQ(fp.kind.cpu_vendor, common::host_kind().cpu_vendor);
    EXPECT_EQ(fp.kind.free_page_reporting, common::host_kind().free_page_reporting);
    const auto fields = fp.fields();
    const auto value_of = [&](const std::string &key) {
        const auto f = std::find_if(fields.begin(), fields.end(), [&](const auto &kv) { return kv.first == key; });
        return f == fields.end() ? std::string("(absent)") : f->second;
    };
    EXPECT_EQ(value_of("free_page_reporting"), fp.kind.free_page_reporting ? "yes" : "no");
    EXPECT_EQ(value_of("transparent_hugepages"), common::host_kind().transparent_hugepages);
    EXPECT_EQ(value_of("page_reporting_order"), common::host_kind().page_reporting_order >= 0
                                                    ? std::to_string(common::host_kind().page_reporting_order)
                                                    : "");
    // Every field appears in the key = value listing.
    EXPECT_EQ(fp.fields().front().first, "cpu_model");
    EXPECT_EQ(fp.fields().back(), std::make_pair(std::string("target"), fp.target));
}

// nvidia-smi's answers on an NVIDIA H200 machine (2026-11-30), and the fields they give.
TEST(CudaDevice, ReadsNvidiaSmi) {
    const CudaDevice d = parse_nvidia_smi("NVIDIA H200, 9.0, 143771, 580.159.04\n",
                                          "| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     "
                                          "CUDA Version: 13.0     |\n");
    ASSERT_TRUE(d.present) << d.absent_reason;
    EXPECT_EQ(d.name, "NVIDIA H200");
    EXPECT_EQ(d.capability_major, 9);
    EXPECT_EQ(d.capability_minor, 0);
    EXPECT_EQ(d.memory_bytes, int64_t(143771) << 20);
    EXPECT_EQ(d.driver, "580.159.04");
    EXPECT_EQ(d.cuda_version, "13.0");
}

TEST(CudaDevice, AbsentWithTheReason) {
    EXPECT_NE(parse_nvidia_smi("", "").absent_reason.find("no NVIDIA GPU"), std::string::npos);
    const CudaDevice garbled = parse_nvidia_smi("NVIDIA H200, nine, 143771, 580", "");
    EXPECT_FALSE(garbled.present);
    EXPECT_NE(garbled.absent_reason.find("unreadable"), std::string::npos);
    // This machine's: present or not, and said why not.
    const CudaDevice &here = cuda_device();
    EXPECT_TRUE(here.present || !here.absent_reason.empty());
    const HardwareFingerprint fp = fingerprint_this_machine();
    EXPECT_EQ(fp.gpu_name, here.name);
    EXPECT_EQ(fp.gpu_compute_capability.empty(), !here.present);
}

} // namespace
} // namespace schedforge::runner
