// The first GPU schedules: a CPU search's decisions carried onto a CUDA device by fixed rules.
//
// There is no GPU cost model yet (issue 25, part B), so nothing ranks GPU schedules against each
// other. What carries over from the CPU search is which Funcs it inlines: that trades recomputing
// a producer against storing and reloading it, which a GPU trades the same way, only more cheaply
// (its memory is further and its arithmetic closer). Every other Func is computed at root and each
// of its stages tiled onto the GPU: its pure loops as a grid of blocks of up to 256 threads, 32
// along the innermost loop where another loop can take the rest (a warp reads consecutive
// addresses: coalesced loads), reduction loops serial inside a thread. A stage without a pure loop
// wider than one (a histogram's scatter) stays on the host, where Halide copies its data.
#pragma once

#include "featurize/function_dag.h"
#include "featurize/loop_nest.h"

#include <Halide.h>

namespace schedforge::sampler {

// Threads a GPU tiling aims for per block, and along the innermost loop when there are others.
constexpr int64_t kGpuBlockThreads = 256;
constexpr int64_t kGpuWarpThreads = 32;

// The largest power of two at most `v` (1 for v < 2): thread extents that tile evenly.
int64_t floor_pow2(int64_t v);

// The GPU schedule for a complete CPU nest of `dag`, by the rules above.
featurize::LoopNest gpu_nest(const featurize::FunctionDAG &dag, const featurize::LoopNest &cpu);

// The GPU tiling of one stage computed at root, by the rules above (not `gpu` where no pure loop
// is wider than one).
featurize::StageTiling gpu_tiling(const featurize::Stage &stage, const featurize::Region &bounds);

} // namespace schedforge::sampler
