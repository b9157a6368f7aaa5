// Beam search over LoopNest states with coarse-to-fine passes and random dropout (§3.2, §4.3).
//
// Each pass walks the decisions of SuccessorGenerator from the empty schedule. At each step
// every beam state is expanded, the children are featurized (reusing the parent's features of
// every stage the decision cannot affect) and costed in parallel (TBB), children
// that break a pruning rule are dropped, and the next beam is chosen from the rest, cheapest
// first, where:
//   - a child whose structural hash (compute sites and the tilings down to the pass's depth) a
//     cheaper child already has is penalized (cost x hash_penalty per such child), so the beam
//     keeps structurally different states (coarse in early passes, finer later) for the later
//     passes to refine; with a single pass there are none, and no penalty unless
//     single_pass_hash_penalty (it only dropped the cheaper tilings of a structure: lens_blur
//     ran 2.6x slower with it);
//   - from the second pass on, only children whose hash at the previous pass's depth appeared
//     along the paths of that pass's final beam are permitted (the coarse pass narrows where
//     the finer one looks);
//   - a child is skipped when max_cost_twins states already kept have its cost (within
//     cost_resolution, a fraction): the model cannot tell such twins apart (tilings of a Func
//     too cheap to matter), and unlimited they crowd out every alternative to the earlier
//     decisions;
//   - with dropout < 1, each child considered is kept with that probability, else discarded
//     and the next one considered; the beam is never left empty.
// The best complete state over all passes is the result. Results depend only on the DAG, the
// target and the options (seed included), not on the thread count.
#pragma once

#include "featurize/loop_nest.h"
#include "featurize/schedule_features.h"
#include "sampler/cost_model.h"
#include "sampler/search_options.h"

#include <Halide.h>

#include <cstdint>
#include <vector>

namespace schedforge::sampler {

struct SearchStats {
    int64_t states_generated = 0;                   // children of beam states featurized (coarse and refined)
    int64_t states_pruned = 0;                      // dropped by a pruning rule after featurizing
    int64_t lookahead_states = 0;                   // of those, children of twins (SearchOptions::twin_lookahead)
    int64_t cost_evaluations = 0;                   // states costed
    int64_t stages_featurized = 0;                  // stage features computed for the children
    int64_t feature_cache_hits = 0;                 // stage features kept from the parent instead
    double featurize_seconds = 0, cost_seconds = 0; // summed over passes (wall time)
    std::vector<double> pass_seconds;
    std::vector<double> pass_best_cost;
};

struct SearchResult {
    featurize::LoopNest nest;
    double cost = 0;
    std::vector<featurize::StageFeatures> features;
    SearchStats stats;
    // The last pass's final beam, cheapest first: the runners-up schedule-report times beside
    // the best.
    struct Finalist {
        featurize::LoopNest nest;
        double cost = 0;
    };
    std::vector<Finalist> finalists;
};

// A complete schedule followed through a search (autoschedule --follow), to see where the beam
// loses it: at each decision, the predicted cost of its prefix (its choices for the decisions
// made so far, the rest unscheduled) beside the states the beam kept.
struct FollowStep {
    int node = -1, stage = 0; // the decision: a Func's site and pure tiling (stage 0) or an update's tiling
    bool generated = false;   // the generator offers the goal's choice here (else it is spliced in to go on)
    bool pruned = false;      // a pruning rule that needs features drops the prefix
    double cost = 0;          // the prefix's predicted cost
    // The last pass at this step: the cheapest and the dearest state it kept, its candidates, and
    // the prefix's place among them, cheapest first (-1: not a candidate: an earlier prefix left
    // the beam, or this one is not generated or is pruned).
    double beam_best = 0, beam_cutoff = 0;
    int64_t candidates = 0, rank = -1;
    bool kept = false;
};
struct FollowPath {
    featurize::LoopNest goal; // complete, for the searched DAG
    std::vector<FollowStep> steps;
};

// Throws std::invalid_argument for a pipeline with nothing to schedule. With `follow`, fills its
// steps (one per decision).
SearchResult beam_search(const featurize::FunctionDAG &dag, const Halide::Target &target, CostModel &model,
                         const SearchOptions &options, FollowPath *follow = nullptr);

// SearchOptions::spread_cost_twins: the order in which the beam considers candidates of ascending
// `costs`: in each run of twins (costs within `resolution` of the run's first) longer than
// max_twins, the max_twins that are kept come first: the first half of them in order, the others
// from the middles of equal parts of the rest of the run.
std::vector<size_t> twin_order(const std::vector<double> &costs, int max_twins, double resolution);

// SearchOptions::twin_lookahead: the runs of twins in ascending `costs` (as twin_order has them)
// that hold more than max_twins and that a beam of beam_size reaches (each run gives the beam at
// most max_twins states), as [begin, end) index ranges.
std::vector<std::pair<size_t, size_t>> crowded_twin_runs(const std::vector<double> &costs, int max_twins, int beam_size,
                                                         double resolution);

// SearchOptions::twin_lookahead: the order of looked-at twins whose cheapest children cost
// `ahead`: ascending, but a twin whose children cost as one before it (within `resolution`) comes
// after all that do not, as its future is one the beam holds already.
std::vector<size_t> lookahead_order(const std::vector<double> &ahead, double resolution);

// The structural hash the passes compare: compute sites, tiling levels, vector loops, and the tile
// extents of levels shallower than `depth`.
uint64_t structure_hash(const featurize::LoopNest &nest, int depth);

} // namespace schedforge::sampler
