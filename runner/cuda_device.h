// The NVIDIA GPU of this machine, as nvidia-smi describes it, and the Halide target for it.
//
// Nothing here touches CUDA itself: the benchmark runner forks its workers from the calling
// process, and on an H200 machine (driver 580) every GPU run in workers forked after a probe through
// the driver API (cuInit in a forked child of our own) failed with CUDA error 3 (not initialized),
// while the same runs passed without the probe. nvidia-smi runs in a process of its own (NVML).
// Halide's runtime opens the CUDA driver itself, in the workers.
#pragma once

#include <Halide.h>

#include <cstdint>
#include <string>

namespace schedforge::runner {

struct CudaDevice {
    bool present = false;
    std::string absent_reason; // why not, when absent ("no CUDA driver (libcuda.so.1)", ...)
    std::string name;
    int capability_major = 0, capability_minor = 0;
    int64_t memory_bytes = 0;
    std::string driver;       // the driver's version ("580.159.04")
    std::string cuda_version; // the newest CUDA the driver runs ("13.0"), as nvidia-smi's summary says
};

// GPU 0, probed once per process.
const CudaDevice &cuda_device();

// The device described by `nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version
// --format=csv,noheader,nounits -i 0` (`query`) and plain `nvidia-smi` (`summary`, for the CUDA
// version); absent, with the reason, where `query` is empty or unreadable.
CudaDevice parse_nvidia_smi(const std::string &query, const std::string &summary);

// `target` with a CUDA compute capability where it has CUDA but names none: the device's, or the
// highest Halide 14 knows below it (8.6 for a 9.0 device: its code runs on later devices). Throws
// UserError where no device is present to take it from.
Halide::Target with_cuda_capability(const Halide::Target &target);

} // namespace schedforge::runner
