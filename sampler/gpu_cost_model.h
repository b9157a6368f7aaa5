// The GPU cost model: a kernel-by-kernel roofline over the GPU features (featurize/gpu_features.h)
// with the device's own figures (featurize::GpuDevice), not fitted to measurements yet (no GPU
// corpus exists; issue 25). Each kernel costs a launch plus the slowest of its arithmetic, its
// memory traffic and its shared-memory traffic, each at the throughput the kernel can reach:
//   - occupancy: blocks per SM = the fewest that the SM's threads, blocks, shared memory and
//     registers allow; a kernel whose block needs more shared memory than a block may have, or
//     more threads than an SM holds, cannot run (infinite cost);
//   - latency hiding: a warp keeps up to kIndependentPoints of its thread's points in flight, and
//     an SM reaches its full memory bandwidth with kWarpsForMemory such warps, its full arithmetic
//     with kWarpsForCompute; fewer reach a proportional share;
//   - spread: a kernel of fewer blocks than SMs uses that share of the SMs, and of DRAM up to
//     kDramShareOfOneSm (kL2ShareOfOneSm) times more: one SM cannot pull the whole bandwidth; blocks past whole
//     waves cost a whole wave (the tail);
//   - memory: L1 serves every sector the loads and stores request (coalescing); L2 each block's
//     footprint once (what its threads read again hits L1) and the stores; DRAM the kernel's
//     footprint, or its distinct bytes once where they fit in L2, and the stores;
//   - idle threads issue as busy ones: arithmetic counts the launched points, not the computed.
// Stages on the host cost their arithmetic at kHostSecondsPerOp and their copies over the host link.
#pragma once

#include "featurize/gpu_features.h"

#include <vector>

namespace schedforge::sampler {

inline constexpr double kLaunchSeconds = 3e-6;      // a kernel launch and its drain
inline constexpr double kIndependentPoints = 4;     // a thread's points whose loads overlap
inline constexpr double kWarpsForMemory = 32;       // resident warps that saturate an SM's memory pipe
inline constexpr double kWarpsForCompute = 8;       // resident warps that saturate its FP32 lanes
inline constexpr double kDramShareOfOneSm = 4;      // one SM's reach beyond its fair share of DRAM
inline constexpr double kL2ShareOfOneSm = 2;        // and of L2
inline constexpr double kL1BytesPerClock = 128;     // an SM's L1 (the global loads' sectors), per clock
inline constexpr double kBarrierCycles = 40;        // a block-wide barrier
inline constexpr double kSharedBytesPerClock = 128; // an SM's shared memory, per clock
// A host stage's operation: its loops run scalar on one core, which retires about three such
// operations a clock at 3 GHz (hist_equalize's scatter on the H200 machine's host: 23.6 M
// operations in about 2.5 ms).
inline constexpr double kHostSecondsPerOp = 0.1e-9;
inline constexpr double kHostSyncSeconds = 10e-6; // the device synchronization around a host stage

struct KernelCost {
    int row = -1; // the kernel stage's index in the features
    double blocks_per_sm = 0, occupancy = 0, waves = 0;
    double compute = 0, dram = 0, l2 = 0, l1 = 0, shared = 0, barriers = 0; // seconds, each at its throughput
    double seconds = 0;                                                     // launch + the slowest + barriers
};

struct GpuCost {
    std::vector<KernelCost> kernels;
    double host_seconds = 0;
    double seconds = 0; // everything; infinite where a kernel cannot run
};

GpuCost gpu_cost(const std::vector<featurize::GpuStageFeatures> &features, const featurize::GpuDevice &device);

} // namespace schedforge::sampler
