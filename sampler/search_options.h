// Everything that steers the schedule search: beam size, passes, dropout, seed, the pruning rules
// of the source paper's §3.2 (each switchable), the tile-size generator and the manual cost
// model's coefficients. Built-in defaults < YAML config (configs/search/default.yaml documents
// every key) < command-line flags / plugin parameters.
#pragma once

#include "featurize/cost_terms.h"
#include "featurize/schedule_features.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace schedforge::sampler {

struct PruningRules {
    // Root Funcs that are tiled run their outer level in parallel (never serially).
    bool parallel_outer_only = true;
    // Vectorize at the native width of the narrowest type only (else also at half of it, or not).
    bool native_vector_width_only = true;
    // Parallel tasks of a root Func between min and max times the core count, where reachable.
    bool limit_tasks = true;
    double min_tasks_per_core = 1, max_tasks_per_core = 16;
    // No Func computes (or, inlined, is evaluated) more than this many times the points its
    // consumers need; pure copies (identity stages) are exempt. 0 switches the rule off.
    double max_recompute = 10;
    // A Func that expands (at root, over `expansion` times every Func that reads it: an operand
    // its consumers reduce) allocates at most this many bytes per iteration where it is stored
    // inside a consumer's loops: it is placed there for locality, and a buffer that outgrows the
    // core's L2 cache has none (it goes to root or into smaller tiles). 0 = off.
    double max_inner_realization_bytes = 1 << 20;
    // The same limit for such a Func at root (where its whole buffer is allocated once): it
    // goes into tiles of its readers instead. Off: measured 0.98x on the apps (ablations/).
    bool expanding_at_root = false;
    // A Func "expands" when it is more than this many times larger at root than every Func that
    // reads it (not a stencil's producer, larger by its halo only).
    double expansion = 2;
    // A stage at root with more points than this (reduction steps included) runs in parallel:
    // untiled, it would run serially on one core. 0 = off.
    double max_serial_root_points = 16384;
};

// The shape of the search space: every cap and choice of SuccessorGenerator::tilings, named so
// that each can be switched and measured (compare-schedulers SchedForge:FILE).
struct SpaceRules {
    int64_t max_tile_shapes = 4096; // tile shapes enumerated per level before thinning
    int max_inner_tilings = 16;     // inner (cache or register) tiles tried per outer tiling of a root Func
    int max_unroll_points = 16;     // point tiles of at most this many iterations (vectors) are unrolled
    int vector_loops = 2;           // vectorize along at most this many loops (innermost first)
    // Vectorize only along the Func's innermost storage dimension (dense vector stores and loads)
    // where that loop holds a vector; other loops only where it does not.
    bool vectorize_storage_dense = true;
    // With it, tiles along that loop are at least one vector wide (narrower ones would leave the
    // Func scalar), so the tilings kept after thinning are ones that can vectorize.
    bool tiles_hold_a_vector = true;
    // A reduction computed inside a consumer may run its reduction loops outermost, around its
    // whole (untiled) pure loops, so producers can be computed per reduction step.
    bool reductions_outermost = true;
    // A reduction's point tile is unrolled (a register block, the reduction outside) only where
    // it is the Func's whole realization: a small constant-size buffer that LLVM keeps in
    // registers. Anywhere else its accumulators go to memory and back every reduction step.
    bool register_blocks_in_place = false;
    // A Func placed inside a root consumer tiled once may also split that consumer into register
    // blocks (one vector by 2-4 x 2-4 points) and be computed per block: the consumer's tiles
    // were chosen before its producers' needs were known.
    bool consumer_register_blocks = true;
};

// The machines a search config is the default for (its `machine:` section;
// sampler/machine_calibration.h): every key given must match the host (common/host_kind.h).
struct MachineMatch {
    std::string cpu_vendor; // empty: any
    int cpu_family = -1;    // -1: any
    int cpu_model = -1;
    int free_page_reporting = -1; // 0 or 1; -1: any
};

struct SearchOptions {
    // One pass of a beam of 64: the coarse-to-fine passes after the first (§3.2) never found a
    // cheaper state than the first on the apps or on random pipelines, so their time goes to a
    // wider first pass (configs/search/default.yaml has the figures).
    int beam_size = 64;
    int passes = 1;       // coarse-to-fine (§3.2); 1 = plain beam search
    double dropout = 1.0; // probability of keeping each state considered for the beam (1 = none)
    uint64_t seed = 0;    // dropout's random stream
    int cores = 0;        // the target's parallelism (0: this machine's logical CPUs)
    // The target's caches that the features assume (featurize::CacheSizes): a core's own (its L2)
    // and its share of the last level (that cache over the cores sharing it). 0: this machine's.
    double core_cache_bytes = 0;
    double shared_cache_bytes_per_core = 0;
    int threads = 0;       // TBB threads for successors and costs (0: TBB's default); results do not depend on it
    int max_tilings = 128; // tilings kept per stage decision (evenly thinned, deterministic)
    // Coarse to fine within a decision: each site's tilings, in their order (by tile shape), fall
    // into runs of tiling_stride; the search costs the first of every run, then the rest of the
    // runs of the refined_runs cheapest (tiling_stride 1: every tiling is costed). The beam keeps
    // few of thousands of children, and neighbours in a run cost alike: half the states, 12 of 16
    // apps' schedules unchanged (configs/search/default.yaml has the figures).
    int tiling_stride = 4;
    int refined_runs = 1024;
    double hash_penalty = 2.0; // cost factor for a state whose coarse hash a better state has
    // The hash penalty in a one-pass search too (the rule before issue 23's eighteenth session):
    // off, it applies only with passes > 1, where a finer pass refines the structures it keeps.
    bool single_pass_hash_penalty = false;
    // The beam keeps at most max_cost_twins states of one predicted cost: costs that differ by
    // at most cost_resolution (a fraction) are one to the model (max_cost_twins 0: no limit).
    int max_cost_twins = 4;
    double cost_resolution = 1e-3;
    // Which twins: off, the first max_cost_twins in generation order (a site's smallest tiles of
    // the first parent); on, half of them so and the rest spread over the run (beam_search.h:
    // twin_order). Off by default: the built-in model's apps ran 1.20x and 1.16x Adams2019 with
    // it against 1.25x and 1.24x without (out/cmp-s36a, b); the Zen 4 calibration's 1.15-1.19x
    // against 1.03x (configs/search/default.yaml).
    bool spread_cost_twins = false;
    // Or (when not 0): of each run of twins the beam cannot all keep, twin_lookahead of them
    // (spread as twin_order spreads them) are looked ahead one decision, and the beam takes them
    // in the order of their cheapest coarse child there, a twin whose children tie with an
    // earlier one's last (beam_search.h: lookahead_order). Off: at 8, the built-in model's own
    // predicted costs fell 2.9% (geomean, 16 apps) but the apps ran 0.94x as fast in two runs on
    // an Intel Xeon (configs/search/default.yaml has the figures).
    int twin_lookahead = 0;
    // An update stage whose decision is still ahead is priced with its accumulators in registers
    // (beam_search.cpp: price_pending_updates), not with the placeholder tiling's spills. Off by
    // default: it rescued matmul's register blocks under a trial feature change that was not
    // kept (76-81 ms without it, 28-32 with, Zen 3), and with the current features it finds the
    // same nests on 14 of 16 apps and a slower conv_relu (configs/search/default.yaml).
    bool price_pending_updates = false;
    bool memoize_features = true; // children reuse the parent's features where a decision cannot change them
    PruningRules pruning;
    SpaceRules space;
    std::array<double, featurize::kNumCostTerms> coefficients; // the manual cost model's c_0..c_30
    std::string weights; // the learned cost model's weights file (train-cost-model); empty: the manual model
    // GPU targets: "rules" (sampler/gpu_schedule.h: the CPU search's schedule carried over by
    // fixed rules; measured on an H200: 1.94x Li2018 on the apps) or "search" (sampler/gpu_search.h:
    // a beam search ranked by the GPU cost model, not yet measured on a device). The rules stay
    // the default until a GPU run compares the two.
    std::string gpu_schedules = "rules";
    int gpu_beam_size = 16; // the GPU search's beam (its states cost more to featurize than the CPU's)
    // The device the GPU cost model prices (featurize::gpu_device_named); empty: the one the
    // target's compute capability stands for (featurize::gpu_device_for). autoschedule and
    // compare-schedulers fill it in with this machine's GPU where the model knows it.
    std::string gpu_device;
    std::optional<MachineMatch> machine; // the config's `machine:` section; it steers no search

    SearchOptions();
    // The cache sizes above, this machine's where 0 (the built-in constants where Linux does not
    // say: featurize/schedule_features.h).
    featurize::CacheSizes cache_sizes() const;
    // The target's cores: `cores`, or this machine's logical CPUs where it is 0.
    int target_cores() const;
    // Throws UserError naming the option when a value is out of range.
    void validate(const std::string &source) const;
};

// The paper's dropout for autotuning: a 1-in-`greedy_chance` chance that none of the
// `decisions` steps drops a state (§4.3).
double dropout_for_greedy_chance(double greedy_chance, int decisions);

// Reads a YAML search config over `base` (unknown keys and bad values: UserError naming them).
SearchOptions parse_search_options(const std::string &yaml_text, const std::string &source,
                                   SearchOptions base = SearchOptions());
SearchOptions load_search_options(const std::string &path);

// The plugin's parameters from the environment: SCHEDFORGE_SEARCH_CONFIG (a YAML file over the
// built-in defaults) or else `defaults`, then each variable of search_environment_variables() over its `search:` key.
// Any other SCHEDFORGE_* variable is a UserError (a misspelt parameter must not pass silently).
struct EnvironmentVariable {
    const char *name; // SCHEDFORGE_BEAM_SIZE
    const char *key;  // beam_size, under `search:`; empty for SCHEDFORGE_SEARCH_CONFIG
};
const std::vector<EnvironmentVariable> &search_environment_variables();
SearchOptions search_options_from_environment(const SearchOptions &defaults = SearchOptions());

} // namespace schedforge::sampler
