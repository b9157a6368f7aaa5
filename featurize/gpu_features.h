// GPU schedule features: what a CUDA schedule (loop_nest.h's GPU tilings) does on the device,
// per stage, computed symbolically from a LoopNest and the FunctionDAG, versioned apart from the
// CPU features (GpuFeatures::version()).
//
// Anderson et al. (OOPSLA 2021) list what decides a GPU schedule's speed: the blocks and warps it
// launches, the occupancy they allow (threads, shared memory and registers per block against an
// SM's), global memory coalescing (bytes moved per transaction against bytes used), register
// pressure, and threads left idle. These features count those quantities for one run of the
// pipeline on its estimated sizes; sampler/gpu_cost_model.h turns them into a time.
//
// Where a stage runs (loop_nest.h): a kernel is a stage of a Func at root with a GPU tiling (its
// level 0 the blocks, level 1 the threads); a Func computed at a kernel's block level runs on the
// block's threads into shared memory, one computed per thread serially in the thread's
// registers; a Func at root without a GPU tiling runs on the host, its data copied to and from
// the device. Kernel-wide quantities (blocks, the block's threads and shared memory, register
// estimates, the DRAM footprint) are on the kernel stage's row, zero on the rows of the stages
// that run inside it.
//
// Global memory: a warp's load instruction fetches whole 32-byte sectors; `global_load_sectors`
// counts them from the load's Jacobian along the block's thread loops (the innermost thread
// loop's 32 threads, or fewer and the next thread loop's rows where that loop is narrower): a unit
// stride of 4-byte points touches 4 or 5 sectors per 32 threads, a stride of a row one sector per
// thread, an index read from data (a gather) one per thread. What reaches DRAM is the kernel's
// footprint: per block, the sectors of each global buffer's region it reads, over every block; a
// buffer that L2 holds whole (GpuDevice::l2_bytes) is read from DRAM once.
#pragma once

#include "featurize/feature_list.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace Halide {
struct Target;
}

namespace schedforge::featurize {

class FunctionDAG;
class LoopNest;

// What the GPU features and cost model assume of a device. Figures from NVIDIA's published
// specifications; sustained bandwidths are what streaming kernels reach, about 90% of peak.
struct GpuDevice {
    std::string name; // "h100"
    int sms = 0;      // streaming multiprocessors
    int max_threads_per_sm = 2048, max_blocks_per_sm = 32;
    int64_t shared_bytes_per_sm = 0;
    int64_t shared_bytes_per_block = 48 * 1024; // Halide 14 launches without CUDA's opt-in to more
    int64_t registers_per_sm = 65536;
    int fp32_lanes_per_sm = 0;             // FP32 operations per SM per clock
    double clock_hz = 0;                   // sustained SM clock
    double dram_bytes_per_second = 0;      // sustained
    double l2_bytes_per_second = 0;        // sustained L2 read bandwidth
    double l2_bytes = 0;                   // L2 capacity
    double host_link_bytes_per_second = 0; // host <-> device copies (PCIe or NVLink-C2C)
};

// The devices the model knows: "v100", "t4", "a100", "rtx3090", "h100", "h200". Throws
// std::invalid_argument for another name, listing them.
const GpuDevice &gpu_device_named(const std::string &name);
std::vector<std::string> gpu_device_names();
// The device a CUDA name from nvidia-smi ("NVIDIA H100 80GB HBM3") is, or "" where none matches.
std::string gpu_device_matching(const std::string &cuda_name);
// The device a target's compute capability stands for where no name is given: 7.0 V100, 7.5 T4,
// 8.0 A100, 8.6 H100 (Halide 14 knows no capability above 8.6, so this project compiles for 8.6
// on Hopper GPUs: runner/cuda_device.h), none or another: the A100.
const GpuDevice &gpu_device_for(const Halide::Target &target);

// name, description
#define SCHEDFORGE_GPU_FEATURES(X)                                                                                     \
    X(kernel_launches, "1 for a kernel (a stage of a Func at root tiled onto the GPU), else 0")                        \
    X(blocks, "thread blocks the kernel launches (kernels only)")                                                      \
    X(block_threads, "threads a block of the kernel runs: the most any stage in it uses (kernels only)")               \
    X(stage_threads, "threads this stage runs per block (kernels and stages computed per block)")                      \
    X(points_per_thread, "points of this stage each thread computes per round (its own tile)")                         \
    X(serial_rounds, "rounds of the block's threads a stage computed per block takes (its level-0 tiles)")             \
    X(shared_bytes_per_block, "shared memory a block of the kernel allocates (kernels only)")                          \
    X(registers_per_thread, "32-bit registers a thread of the kernel is estimated to hold (kernels only)")             \
    X(points, "points of this stage computed over the run, recomputed ones included")                                  \
    X(ops, "arithmetic operations over the run (the pipeline features' per point, times points)")                      \
    X(idle_thread_fraction, "of the thread slots the kernel launches for this stage, those that compute nothing")      \
    X(global_loads, "load instructions from global memory over the run, one per point and call")                       \
    X(global_load_sectors, "32-byte sectors those loads request, warp by warp (coalescing)")                           \
    X(global_footprint_bytes,                                                                                          \
      "bytes of global buffers the kernel's blocks read, each block its region (kernels only)")                        \
    X(global_unique_bytes, "bytes of the distinct global data the kernel reads (kernels only)")                        \
    X(shared_loads, "loads from Funcs computed per block (shared memory) over the run")                                \
    X(register_loads, "loads from Funcs computed per thread (registers) over the run")                                 \
    X(global_store_sectors, "32-byte sectors this stage writes to global memory over the run")                         \
    X(shared_stores, "points this stage writes to shared memory over the run")                                         \
    X(barriers, "block-wide barriers over the run (one after each round of a stage computed per block)")               \
    X(host_points, "points a stage at root without a GPU tiling computes on the host")                                 \
    X(host_copy_bytes, "bytes a host stage copies between host and device (what it reads and writes)")

inline constexpr int kNumGpuFeatures = 0 SCHEDFORGE_GPU_FEATURES(SCHEDFORGE_FEATURE_COUNT);

struct GpuFeatures {
    SCHEDFORGE_GPU_FEATURES(SCHEDFORGE_FEATURE_DECLARE)

    // 1: the first GPU features.
    static int version() { return 1; }
    static const std::vector<std::string> &names();
    static const std::vector<std::string> &descriptions();
    std::array<double, kNumGpuFeatures> values() const;
};

// Per stage, in node order then stage order. `kernel` is the index (into the same vector) of the
// kernel stage a stage runs in, itself for a kernel, -1 for host stages and unscheduled ones.
struct GpuStageFeatures {
    int node = -1, stage = 0;
    bool scheduled = false;
    int kernel = -1;
    GpuFeatures features;
};

// Per node and stage, the arithmetic operations of one point (the pipeline features',
// cost_terms.h's ops_per_point): computed once per pipeline, as the search does.
using StageOps = std::vector<std::vector<double>>;
StageOps stage_ops(const FunctionDAG &dag);

// Features of every stage of `nest` (legal: LoopNest::validate; partial states too, whose
// unscheduled producers count as global buffers). They do not depend on the device.
std::vector<GpuStageFeatures> compute_gpu_features(const FunctionDAG &dag, const LoopNest &nest, const StageOps &ops);
std::vector<GpuStageFeatures> compute_gpu_features(const FunctionDAG &dag, const LoopNest &nest);
// The same for a state made from the one `parent` describes by deciding the `changed` Funcs (the
// search's children): equal to compute_gpu_features() (tested), computing only the stages those
// decisions can affect.
std::vector<GpuStageFeatures> update_gpu_features(const FunctionDAG &dag, const LoopNest &nest, const StageOps &ops,
                                                  const std::vector<GpuStageFeatures> &parent,
                                                  const std::vector<int> &changed);

} // namespace schedforge::featurize
