// Successor generation (§3.2): the search schedules Funcs consumers first, one decision at a time.
// A Func's first decision picks its compute site (inline, root, or a tiling level of a consumer
// stage that sees all its readers) together with its pure stage's tiling; each update stage
// then gets a decision of its own (until then it keeps a plain tiling: untiled, vectorized).
//
// Tilings: for root Funcs an outer level of parallel tasks (the task-count window of
// PruningRules), optionally with an inner cache or register tile; for Funcs inside a consumer,
// untiled or one level of tiles. Tile extents are powers of two plus the full extent, with small
// odd factors (3, 5, 7) for the innermost tiles that make register blocks; the vector loop is
// any pure loop of the point tile at least a vector wide. Reductions run whole, inside the point
// tile or outside it (register blocking). Candidates beyond SearchOptions::max_tilings are thinned
// evenly, deterministically.
//
// What the pruning rules need from features (recompute) is checked by the search after
// featurizing; the structural rules are applied here.
#pragma once

#include "featurize/loop_nest.h"
#include "featurize/schedule_features.h"
#include "sampler/search_options.h"

#include <Halide.h>

#include <vector>

namespace schedforge::sampler {

struct Decision {
    int node = -1, stage = 0; // stage 0: site + pure tiling; k > 0: tiling of update k - 1
};

class SuccessorGenerator {
public:
    SuccessorGenerator(const featurize::FunctionDAG &dag, const Halide::Target &target, const SearchOptions &options);

    const std::vector<Decision> &decisions() const { return decisions_; }
    // Every child of `nest` for decision `d` (nest has decisions 0 .. d - 1 made).
    std::vector<featurize::LoopNest> successors(const featurize::LoopNest &nest, int d) const;
    // Whether a Func's pure stage computes (or, inlined, is evaluated) more than max_recompute
    // times what its consumers need (pure copies exempt); false for updates and when the rule is off.
    bool recomputes_too_much(const featurize::LoopNest &nest, const featurize::StageFeatures &s) const;
    // A pure copy of one producer (x, y) -> p(x, y): recomputing it costs nothing.
    bool is_identity(int node) const { return identity_[size_t(node)]; }

private:
    std::vector<featurize::StageTiling> tilings(const featurize::LoopNest &nest, featurize::StageRef s) const;

    const featurize::FunctionDAG &dag_;
    Halide::Target target_;
    SearchOptions options_;
    int cores_;
    std::vector<Decision> decisions_;
    std::vector<bool> identity_;
};

} // namespace schedforge::sampler
