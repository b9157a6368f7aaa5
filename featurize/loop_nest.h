// LoopNest: a schedule for a FunctionDAG, the state the search builds and the featurizer reads.
//
// A schedule says, per Func, where it is computed and stored, and per stage how its loops are
// tiled. Every stage's loops are a recursive n-dimensional tiling:
//
//   extents at the compute site  B            (the region its consumers need per production)
//   level 0                      ceil(B / T0) tiles of size T0
//   level 1                      ceil(T0 / T1) tiles of size T1, per tile of level 0
//   ...
//   point level (last)           the points of the innermost tile, one vector at a time along
//                                the vectorized loop, optionally unrolled
//
// so `tiles` = {T0, T1, ...}; an empty list means one level over the whole region. A Func is
// computed (and stored) inline, at root, or inside level k of a consumer stage's loops: once per
// iteration of that level. Reduction loops (RVars) are never split; they run at the level where
// their tile extent drops from the full extent to 1, in their original order.
//
// Partial states are first-class: Funcs not yet scheduled are Site::Unscheduled. The search
// schedules consumers before producers (the DAG's node order), so an unscheduled Func's
// consumers are always scheduled, and every scheduled Func's region is known.
//
// GPUs: a stage of a Func at root can be tiled onto a GPU (StageTiling::gpu): its levels are then
// the grid of thread blocks, the threads of one block and, with a second tile level, each
// thread's own points (serial, or unrolled). A Func computed at such a stage's block level (level
// 0) is computed by the block's threads into its shared memory: its GPU tiling has one tile level,
// serial rounds of threads (level 0) and the threads (its point tile). A Func computed per thread
// (level 1 of a two-level GPU tiling) is computed serially by each thread, in its registers.
#pragma once

#include "featurize/function_dag.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace schedforge::featurize {

// A stage of the DAG: dag.nodes[node].stages[stage].
struct StageRef {
    int node = -1, stage = 0;
    bool operator==(const StageRef &o) const { return node == o.node && stage == o.stage; }
};

// Where a Func is computed or stored.
struct Site {
    enum Kind : uint8_t { Unscheduled, Inline, Root, At };
    Kind kind = Unscheduled;
    StageRef stage; // At: the consumer stage whose loops contain the site
    int level = -1; // At: once per iteration of this tiling level of that stage (0 = outermost)

    static Site root() { return {Root, {}, -1}; }
    static Site inlined() { return {Inline, {}, -1}; }
    static Site at(StageRef s, int level) { return {At, s, level}; }
    bool operator==(const Site &o) const {
        return kind == o.kind && (kind != At || (stage == o.stage && level == o.level));
    }
    bool operator!=(const Site &o) const { return !(*this == o); }
};

struct StageTiling {
    std::vector<std::vector<int64_t>> tiles; // tiles[k][l]: extent of loop l (innermost first) per tile of level k
    int vector_loop = -1;                    // the point level's vectorized loop (pure), or -1
    int vector_width = 1;
    bool parallel = false; // Funcs at root only: level 0's pure loops fused into one parallel loop
    bool unroll = false;   // the point level's pure loops are unrolled (the tiled only: constant extents)
    // Funcs at root: level 0's pure loops are GPU blocks and level 1's the threads of a block (at
    // most kMaxGpuThreads); with two tile levels the point level is each thread's own points.
    // Funcs at a GPU stage's block level: one tile level, serial at level 0, the point level's
    // pure loops threads. Reduction loops run serially inside a thread (whole) or around the
    // threads (one wide).
    bool gpu = false;

    int levels() const { return int(tiles.size()) + 1; } // tiling levels, the point level included
    bool operator==(const StageTiling &o) const {
        return tiles == o.tiles && vector_loop == o.vector_loop && vector_width == o.vector_width &&
               parallel == o.parallel && unroll == o.unroll && gpu == o.gpu;
    }
};

// Threads per GPU block: CUDA's limit on every device since compute capability 2.0.
constexpr int64_t kMaxGpuThreads = 1024;
// A GPU tiling's threads along each loop of `st` (innermost first; 1 along reduction loops): its
// point tile at a block's level (one tile level), or its level-0 tile over each thread's points (two).
std::vector<int64_t> gpu_thread_extents(const Stage &st, const StageTiling &t);
// The threads per block a GPU tiling of `st` asks for (the product of its thread extents).
int64_t gpu_threads_per_block(const Stage &st, const StageTiling &t);

struct FuncSchedule {
    Site compute, store; // store encloses compute; hoisting it further out is not legal yet (storage_error)
    std::vector<StageTiling> stages;
    bool operator==(const FuncSchedule &o) const {
        return compute == o.compute && store == o.store && stages == o.stages;
    }
};

class LoopNest {
public:
    LoopNest() = default;
    explicit LoopNest(const FunctionDAG &dag) : funcs(dag.nodes.size()) {} // nothing scheduled

    std::vector<FuncSchedule> funcs; // per DAG node; input images stay Unscheduled
    bool operator==(const LoopNest &o) const { return funcs == o.funcs; }

    bool scheduled(int node) const { return funcs[size_t(node)].compute.kind != Site::Unscheduled; }
    bool inlined(int node) const { return funcs[size_t(node)].compute.kind == Site::Inline; }
    bool complete(const FunctionDAG &dag) const; // every Func scheduled

    // Whether `inner` lies within one iteration of `outer` (a site contains itself; root contains
    // everything).
    bool contains(const Site &outer, const Site &inner) const;
    // The site a stage's own loops hang from: its Func's compute site.
    const Site &compute_site(StageRef s) const { return funcs[size_t(s.node)].compute; }

    // Empty when the schedule is legal for `dag` (partial states included); otherwise why not.
    std::string validate(const FunctionDAG &dag) const;
    // One line per Func: its sites and its stages' tilings.
    std::string describe(const FunctionDAG &dag) const;
};

// A site as text: "root", "inline", "unscheduled", "at f.update(0) level 1".
std::string site_text(const FunctionDAG &dag, const Site &s);
// The sites where the consumers of a producer can all see it: every stage that reads `node`
// (through inlined Funcs) must lie within the site. Sites are listed outermost first, root first.
std::vector<Site> legal_compute_sites(const FunctionDAG &dag, const LoopNest &nest, int node);
bool can_inline(const FunctionDAG &dag, int node);
// Whether stage `r`'s loops run within `site` (its own loops, for a site of `r`).
bool stage_within(const LoopNest &nest, StageRef r, const Site &site);
// The non-inlined stages that read `node`, looking through inlined consumers, added to `out`
// (once each). Unscheduled consumers are listed too (validate() rejects them).
void reading_stages(const FunctionDAG &dag, const LoopNest &nest, int node, std::vector<StageRef> &out);
// A Func whose value is a float-to-integer cast (`f(x) = cast<int8>(clamp(v, -128, 127))`).
// Never inlined: Halide 14's simplifier folds an integer cast of it that does not widen
// (`cast<uint8>(f(x))`) into a direct float-to-uint8 cast, dropping the int8 step, which computes
// wrong values for negative inputs (README, "Known upstream issues").
bool converts_float_to_integer(const FunctionDAG &dag, int node);
// The Func of an ImageParam itself ("in0_im": its definition is the call to the buffer). Halide 14
// corrupted the heap when such a Func was computed at root under nested GuardWithIf splits, so the
// search only ever inlines it (as Halide's own autoschedulers do). That was the dropped guard
// apply() now avoids by renaming such loops (README, "Known upstream issues"); the rule stays
// until computing an input's wrapper at root is measured to pay.
bool is_input_wrapper(const FunctionDAG &dag, int node);
// Whether a stage's split tails are guarded (GuardWithIf: each point once) rather than shifted
// inwards (ShiftInwards: whole tiles that overlap). Updates must not compute a point twice, and
// stages that read input images (directly or through inlined Funcs) must not step outside
// regions that can be smaller than a tile (clamped edges). In a partial state, unscheduled
// producers count as not inlined.
bool guards_tails(const FunctionDAG &dag, const LoopNest &nest, StageRef s);
// Whether the point tile (tiles.back()) divides the tiles around it (the level before, or the
// production's `extents`) evenly along every pure loop: the search unrolls only such tiles
// (LoopNestBounds::unrolls checks again, on the final regions). Halide 14 miscompiles unrolled
// tiles whose tile loop has a shifted tail when a producer is computed inside the stage (it
// writes past an allocation).
bool point_tile_divides(const Stage &st, const std::vector<std::vector<int64_t>> &tiles,
                        const std::vector<int64_t> &extents);
class LoopNestBounds;
// The pure loops that run at tiling level 0 (split there, or one wide), innermost first: the
// loops apply() fuses into one parallel loop.
std::vector<int> level0_pure_loops(const FunctionDAG &dag, const LoopNest &nest, LoopNestBounds &bounds, StageRef s);
// The padding (elements) of the innermost dimension of `region` of `node` stored at `store`:
// Node::storage_padding inside a loop nest, none at root (its strides are symbolic).
inline int64_t storage_padding_at(const Node &node, const Site &store, const Region &region) {
    return store.kind == Site::At ? node.storage_padding(region) : 1;
}
// What is allocated for `region` of `node` stored at `store` (padded as storage_padding_at says).
inline Region allocated_region(const Node &node, const Site &store, const Region &region) {
    return store.kind == Site::At ? node.stored_region(region) : region;
}
// Why a Func's storage site is illegal given its compute site, or empty.
std::string storage_error(const LoopNest &nest, int node);
// The GPU stage level whose threads (or, at level 0, whose block) `site` lies in: the innermost
// site on its chain of hosts that is a level of a GPU-tiled stage; root where none is (the host).
Site gpu_site_around(const LoopNest &nest, const Site &site);
// `target` without its GPU features: the host CPU's part of it (what the CPU search schedules for).
Halide::Target host_part(const Halide::Target &target);
// The native SIMD width of the narrowest type a stage reads or writes (the paper's vector width).
int native_vector_width(const FunctionDAG &dag, StageRef s, const Halide::Target &target);

// Concrete sizes of a (possibly partial) schedule: regions, loop extents and trip counts. Cheap
// to build; results are cached per Func and site.
class LoopNestBounds {
public:
    LoopNestBounds(const FunctionDAG &dag, const LoopNest &nest);
    LoopNestBounds(const LoopNestBounds &) = delete; // children point at their root
    LoopNestBounds &operator=(const LoopNestBounds &) = delete;

    // The region of `node` Halide realizes per iteration of `site`: what its consumers need there,
    // and what its update stages read and write of it (Node::add_update_footprints).
    const Region &region(int node, const Site &site);
    // `node` realized per iteration of `site`, in one lookup: its region (as region()), whether it
    // is allocated there (some consumer that is produced there loads it; a select loads both
    // branches, so only skipped consumers' loads are skipped), and whether it is produced there
    // (some consumer reads it: UseCondition; Halide skips the production, not the allocation,
    // otherwise).
    struct Realization {
        const Region &region;
        bool allocated, produced;
    };
    Realization realization(int node, const Site &site);
    // Only what its consumers need per iteration of `site` (at root: the realized region).
    const Region &required(int node, const Site &site);
    // A stage's loop bounds (innermost first) when its Func computes `region`.
    Region loop_bounds(StageRef s, const Region &region) const;
    // A stage's loop bounds when its Func is realized per iteration of `site`: the pure
    // definition covers what consumers and updates read, updates what the consumers need.
    Region loop_bounds_at(StageRef s, const Site &site);
    // The stage's loop bounds per production (at its Func's compute site); cached, as trip
    // counts and tiles all start from them.
    const Region &production_bounds(StageRef s);
    // Whether the stage's point loops are unrolled (apply(), the features): as the nest asks, but
    // only where the point tile divides what runs around it (the production's extent narrowed by
    // the levels above, in the root bounds), never in pure stages with guarded tails (Halide 14
    // miscompiles unrolled guarded loops over regions smaller than a tile), and in guarded
    // updates only where every point tile along the vector loop reaches into its last vector
    // (an unrolled vector wholly past its guard made Halide 14 drop a pipeline's body).
    bool unrolls(StageRef s);
    // The stage's loop bounds per iteration of tiling level `level`: its middle tile at every
    // level down to it (an interior tile, never a partial tail).
    Region tile_bounds(StageRef s, int level);
    // The tiles of one loop at some tiling level, grouped: at every level a loop's tiles are the
    // two at each end, each on its own (the last partial where tails are guarded, shifted
    // inwards otherwise), and the interior ones, represented by the middle one. `count` is how
    // many tiles per production the class stands for.
    struct TileClass {
        Span span;
        int64_t count = 0;
    };
    // Per loop (innermost first), the classes of the stage's tiles at `level`; the counts of a
    // loop sum to its trips down to that level. With a `window` over 1, the interior is up to
    // that many consecutive tiles around the middle one, each standing for an equal share.
    std::vector<std::vector<TileClass>> tile_classes(StageRef s, int level, int64_t window = 1);
    // Iterations of loop l at tiling level `level` (the point level counts vectors). A loop
    // apply() leaves unsplit at a level (splits, decided from the middle production) has
    // one iteration there and runs whole further in, in every production.
    int64_t trips(StageRef s, int level, int loop);
    // The same if loop l were split at tiling level `level` (< levels() - 1) whatever its trips:
    // what apply() decides from, in the unpinned bounds.
    int64_t trips_if_split(StageRef s, int level, int loop);
    // Whether Halide gets a split of pure loop l at tiling level k (below the point level, tile
    // wider than one): where the loop has more than one tile there in the middle production, or
    // to give unrolled point loops a constant extent. Decided once, in the root bounds, for
    // apply() and every pinned child alike.
    bool splits(StageRef s, int k, int l);
    // Iterations of all of the stage's loops at `level`.
    int64_t level_trips(StageRef s, int level);
    // Total iterations of the site's level over the whole pipeline run (root: 1).
    int64_t iterations(const Site &site);
    // Points the stage computes per production: whole tiles where tails shift inwards (they
    // overlap and recompute), each point once where tails are guarded (guards_tails).
    int64_t points_per_production(StageRef s);
    // Along the vectorized loop of a stage with guarded tails, in one production: the whole
    // vectors, and the predicated ones (a partial vector at each tile's bound, and the slots
    // past it that a tail tile keeps from a whole tile's trips: Halide 14 runs them all lanes off).
    struct GuardedVectors {
        int64_t whole = 0, partial = 0, empty = 0;
    };
    GuardedVectors guarded_vectors(StageRef s);

    // How Halide 14 sizes the allocation of `node` at `site`: a constant, or at run time where
    // its region follows a span of the host's loops that changes from one iteration to the
    // next: a tile cut short by a guarded tail or a division's rounding (Bounded: Halide can
    // bound it by a constant), or a loop left whole over a production sized by the pipeline's
    // own run-time size, or a bound on other run-time values (an input's extent, an index read
    // from data: Unbounded). Root allocations that read a loop of their readers are Unbounded.
    // Halide keeps Bounded ones up to 128 bytes on the stack; the others come from halide_malloc
    // in every realization, however small. (A region that changes size from tile to tile, as
    // where a reader clamps at an edge, is sized at run time too: the featurizer sees it in
    // RunTotals::smallest_realized_points.)
    enum class Size : uint8_t { Constant, Bounded, Unbounded };
    Size allocation_size(int node, const Site &site);

    // What a stage computes and a Func allocates over the whole run. Regions inside a loop nest
    // vary from tile to tile (partial tails, clamped edges), so one representative tile does
    // not give them: every compute site is evaluated per class of its host's tiles
    // (tile_classes), one loop's classes at a time with the other loops at their middle tile,
    // and the per-loop variations are combined as independent factors. That is exact when each
    // dimension of a region follows one loop of the host (pointwise, stencils, transposes,
    // resampling), the common case. Interiors are probed (the middle tile's neighbours, and
    // tiles a quarter of the way in): where they differ (resampling periods, clamps wider than
    // the end tiles), a window of interior tiles stands for the interior instead of the middle.
    struct RunTotals {
        std::vector<std::vector<double>> points; // per node and stage: points computed in all
        std::vector<double> productions;         // per node: times it is computed
        std::vector<double> realizations;        // per node: times it is allocated (productions or skipped)
        std::vector<double> realized_points;     // per node: points of its largest realization
        // Per node: points of its smallest realization (infinite where none). Where it is less
        // than the largest, the allocation's size follows the tile: Halide computes it at run time.
        std::vector<double> smallest_realized_points;
    };
    // Only Funcs marked in `wanted` (all when null) are exact; others may be left at zero.
    RunTotals run_totals(const std::vector<bool> *wanted = nullptr);
    // The points each of `nodes` allocates at its store site where the tile of `host` at `level`
    // is `tile` (deeper levels at their middle tiles): one iteration's own sizes, as Halide
    // computes them (0 where that iteration does not allocate it).
    std::vector<int64_t> allocated_points_in_tile(StageRef host, int level, const Region &tile,
                                                  const std::vector<int> &nodes) const;

    // Per Func: its region at its store site and each stage's loop bounds per production (at the
    // middle tile of every enclosing site), and the tile classes of every level that hosts Funcs.
    std::string describe();

    const FunctionDAG &dag() const { return dag_; }
    const LoopNest &nest() const { return nest_; }

private:
    // One tile of a stage, fixed: tile_bounds returns it at its level, and deeper levels descend
    // from it.
    struct PinnedTile {
        StageRef stage;
        int level = 0;
        Region bounds;
    };
    // Bounds with `pin` added to the tiles `outer` pins (`outer` must outlive them).
    LoopNestBounds(const LoopNestBounds &outer, PinnedTile pin);
    // Loop l's tile extent at tiling level k, inside a tile of `outer` iterations (the point
    // level steps by vectors along the vectorized loop, by one elsewhere).
    int64_t tile_extent(StageRef s, int k, size_t l, int64_t outer);
    // Loop l's extent inside one tile of tiling level `level` - 1 (the production's at level 0).
    int64_t extent_above(StageRef s, int level, int loop);
    // The bounds tiling descends from down to `level`, and the first level still to descend.
    std::pair<Region, int> tiling_start(StageRef s, int level);
    class RunTotalsWalk;

    const FunctionDAG &dag_;
    const LoopNest &nest_;
    LoopNestBounds *root_;                  // the unpinned bounds, from which apply() splits
    const LoopNestBounds *outer_ = nullptr; // pins further out
    std::optional<PinnedTile> pin_;
    struct Cached {
        int node = -1;
        Site site;
        Region required, realized;
        bool used = true;   // some consumer reads it here (produced)
        bool loaded = true; // some consumer that is produced here loads it (allocated)
    };
    struct Production {
        StageRef stage;
        Region bounds;
    };
    const Cached &cached(int node, const Site &site); // At sites only
    // Per loop of a stage (innermost first), how its span per iteration of tiling level `level`
    // is sized (allocation_size).
    std::vector<Size> span_sizes(StageRef s, int level);
    // Raises the dimensions of `node` whose bounds, in a read by a scheduled stage within
    // `site` (any stage at root), move with a pure loop of the reader so that Halide sizes them
    // at run time: any bound at root (the pipeline's size is a run-time value), a bound on
    // other run-time values, and how a reader realized within the site is itself sized
    // (Unbounded or Bounded); a bound that is not affine (a division, a clamp) and changes with
    // where the tile starts (Bounded).
    void size_reads(int node, const Site &site, std::vector<Size> &dims);
    // Per dimension of `node`'s region at an At site, how its extent is sized.
    const std::vector<Size> &dim_sizes(int node, const Site &site);
    struct Sizes {
        int node = -1;
        Site site;
        std::vector<Size> dims;
    };
    std::vector<std::unique_ptr<Sizes>> sizes_;
    // Few entries are made per object (children made per tile class touch only a site's Funcs),
    // so they are found by a linear search; pointers keep returned references valid.
    std::vector<std::unique_ptr<Cached>> regions_;
    std::vector<std::unique_ptr<Production>> production_;
    std::vector<std::vector<std::vector<signed char>>> splits_; // [node][stage][level * loops + loop]: -1 unknown
    std::vector<std::vector<signed char>> unrolls_;             // [node][stage]: -1 unknown
    bool decide_unroll(StageRef s);
};

} // namespace schedforge::featurize
