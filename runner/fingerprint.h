// HardwareFingerprint: what a timing was measured on, recorded beside every benchmark.
#pragma once

#include "common/host_caches.h"
#include "common/host_kind.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace schedforge::runner {

using CacheInfo = common::HostCache; // the fingerprint records level, type and size

struct HardwareFingerprint {
    std::string cpu_model;                 // /proc/cpuinfo "model name"
    common::HostKind kind;                 // vendor, family and model numbers; freed pages returned to a host
    int physical_cores = 0;                // distinct (package, core) pairs
    int logical_cpus = 0;                  // hardware threads online
    std::vector<CacheInfo> caches;         // of cpu0, one entry per level and type
    std::vector<std::string> isa_features; // the x86 SIMD flags that matter to codegen
    int64_t memory_bytes = 0;              // MemTotal
    std::string gpu_name, gpu_driver;      // empty where no NVIDIA GPU is visible (runner/cuda_device.h)
    std::string gpu_compute_capability;    // "9.0"; empty without a GPU
    int64_t gpu_memory_bytes = 0;          // 0 without a GPU
    std::string gpu_cuda_version;          // the newest CUDA its driver runs ("13.0")
    std::string halide_version;            // of the Halide this build links
    std::string target;                    // Halide's host target string

    // key = value lines, stable order, for logs and file attributes.
    std::vector<std::pair<std::string, std::string>> fields() const;
};

HardwareFingerprint fingerprint_this_machine();

} // namespace schedforge::runner
