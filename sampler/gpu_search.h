// The GPU search: a beam search over GPU schedules ranked by the GPU cost model
// (sampler/gpu_cost_model.h).
//
// It starts from a CPU search's inlining decisions (as the rules of gpu_schedule.h do: inlining
// trades recomputing a producer against storing and reloading it, on a GPU as on a CPU) and
// decides every other Func, consumers first, one decision per Func:
//   - at root, as kernels: each stage's pure loops as blocks of threads, `kernel_tilings` (every
//     shape of 32 to 1024 threads that fits the stage, the innermost loop given a warp's 32
//     threads or its whole extent first, and up to 4 points per thread along the outer loops or
//     2 along the innermost: tried on the kRefinedShapes cheapest shapes at one point per thread);
//     a stage with no pure loop wider than one on the host;
//   - per block of the one kernel that reads it (shared memory), on the block's threads;
//   - per thread of such a kernel that gives each thread several points (registers), serially,
//     where it holds at most kMaxRegisterPoints points a thread.
// A state's cost is the model's over its GPU features, unscheduled producers read as global
// buffers. The rules' schedule is in the space (256 threads, 32 along the innermost loop, one
// point each), and where the beam loses it the search returns it if the model prices it lower
// than the beam's best: never worse than the rules by the model's own measure.
#pragma once

#include "featurize/gpu_features.h"
#include "featurize/loop_nest.h"

#include <cstdint>
#include <vector>

namespace schedforge::sampler {

inline constexpr int64_t kMaxRegisterPoints = 32;
// A kernel's thread shapes are costed at one point per thread first; the cheapest this many are
// then tried with several points per thread.
inline constexpr size_t kRefinedShapes = 3;

struct GpuSearchResult {
    featurize::LoopNest nest;
    double seconds = 0; // the model's
    std::vector<featurize::GpuStageFeatures> features;
    int64_t states = 0; // costed
};

// The GPU schedule for `dag` from the complete CPU nest `cpu` (its inlining), on `device`,
// keeping `beam_size` states per decision, on `threads` TBB threads (0: TBB's default). The
// result does not depend on the threads.
GpuSearchResult gpu_search(const featurize::FunctionDAG &dag, const featurize::LoopNest &cpu,
                           const featurize::GpuDevice &device, int beam_size, int threads = 0);

// A schedule from the GPU search's space with every decision taken at random (a seed's, the same
// on every machine): the compile and run sweeps' random GPU schedules.
featurize::LoopNest random_gpu_nest(const featurize::FunctionDAG &dag, const featurize::LoopNest &cpu, uint64_t seed);

// The kernel tilings of one stage at root whose production is `bounds` (the search's choices; the
// first is the rules' gpu_tiling() where it is a GPU tiling).
std::vector<featurize::StageTiling> kernel_tilings(const featurize::Stage &stage, const featurize::Region &bounds);
// The tilings of a stage computed per block, on at most `threads` threads, over its `bounds` per block.
std::vector<featurize::StageTiling> block_tilings(const featurize::Stage &stage, const featurize::Region &bounds,
                                                  int64_t threads);

} // namespace schedforge::sampler
