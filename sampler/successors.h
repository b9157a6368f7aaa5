// Successor generation (§3.2): the search schedules Funcs consumers first, one decision at a time.
// A Func's first decision picks its compute site (inline, root, or a tiling level of a consumer
// stage that sees all its readers) together with its pure stage's tiling; each update stage
// then gets a decision of its own (until then it keeps a plain tiling: untiled, vectorized).
//
// Tilings: for root Funcs an outer level of parallel tasks (the task-count window of
// PruningRules), optionally with an inner cache or register tile; for Funcs inside a consumer,
// untiled or one level of tiles. Tile extents are powers of two plus the full extent, with small
// odd factors (3, 5, 7) for the innermost tiles that make register blocks; the vector loop is
// the loop over the Func's innermost storage dimension where the production holds a vector
// (SpaceRules::vectorize_storage_dense), else any pure loop of the point tile at least a vector
// wide. Reductions run whole, inside the point tile or outside it (register blocking), and inside
// a consumer also outermost around the whole extent (SpaceRules::reductions_outermost).
// Candidates beyond SearchOptions::max_tilings are thinned deterministically: one per equal run,
// at golden-ratio offsets (evenly spaced picks aliased with the candidates' periodic order).
// The kept tilings of a site stay in that order, so that neighbours are alike: the search costs
// them coarse to fine, in runs of SearchOptions::tiling_stride.
//
// What the pruning rules need from features (recompute, inner realization size) is checked by the
// search after featurizing (pruned()); the structural rules are applied here.
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
    // Every child of `nest` for decision `d` (nest has decisions 0 .. d - 1 made). With `runs`,
    // each child's run there: consecutive tilings of one site, tiling_stride at most, numbered
    // from 0 (the coarse-to-fine search costs a run's first child before the others).
    std::vector<featurize::LoopNest> successors(const featurize::LoopNest &nest, int d,
                                                std::vector<uint32_t> *runs = nullptr) const;
    // Whether a Func's pure stage computes (or, inlined, is evaluated) more than max_recompute
    // times what its consumers need (pure copies exempt); false for updates and when the rule is off.
    bool recomputes_too_much(const featurize::LoopNest &nest, const featurize::StageFeatures &s) const;
    // Whether a Func that expands (at root, larger than every Func that reads it, through
    // inlined ones: an operand its consumers reduce, like nl_means's 49 offset planes) is stored
    // inside a consumer's loops in a buffer larger than max_inner_realization_bytes: computed
    // there for locality, it has none once it outgrows the cache (false for updates and when the
    // rule is off; consumers must be scheduled). With expanding_at_root, at root too.
    bool realizes_too_much_inside(const featurize::LoopNest &nest, const featurize::StageFeatures &s) const;
    // Whether a stage of the Func just decided breaks a rule that needs its features (the two above).
    bool pruned(const featurize::LoopNest &nest, const featurize::StageFeatures &s) const;
    // A pure copy of one producer (x, y) -> p(x, y): recomputing it costs nothing.
    bool is_identity(int node) const { return identity_[size_t(node)]; }

private:
    std::vector<featurize::StageTiling> tilings(const featurize::LoopNest &nest, featurize::StageRef s) const;
    // The most bytes at root of a Func reading `node`, looking through inlined readers.
    double largest_reader_bytes(const featurize::LoopNest &nest, int node) const;

    const featurize::FunctionDAG &dag_;
    Halide::Target target_;
    SearchOptions options_;
    int cores_;
    std::vector<Decision> decisions_;
    std::vector<bool> identity_;
    std::vector<double> root_bytes_; // per node: its bytes when computed at root
};

} // namespace schedforge::sampler
