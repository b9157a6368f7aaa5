// Random legal complete LoopNests, for tests, validation and baselines.
//
// Funcs are scheduled consumers first, as the search does. Each decision is drawn uniformly
// from its legal options (after the inline coin flip below): the compute site among all
// legal ones (root and every tiling level of a consumer's loops that sees all of its readers),
// the number of tiling levels, each tile extent among powers of two and the full extent, the
// level of each reduction loop, and the vectorized loop among those wide enough. As in the
// search, only point tiles that divide the loops around them evenly (point_tile_divides) are
// unrolled: Halide 14 miscompiles the rest.
#pragma once

#include "featurize/loop_nest.h"

#include <cstdint>

namespace schedforge::featurize {

struct RandomLoopNestOptions {
    double inline_probability = 0.3; // for Funcs that can be inlined
    int max_tiling_levels = 2;       // per stage, beyond the point level
    double vectorize_probability = 0.8;
    double parallel_probability = 0.8; // Funcs at root
    double unroll_probability = 0.3;   // point levels of at most 16 iterations
};

LoopNest random_loop_nest(const FunctionDAG &dag, const Halide::Target &target, uint64_t seed,
                          const RandomLoopNestOptions &options = {});

} // namespace schedforge::featurize
