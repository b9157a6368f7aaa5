// Schedule features: the 39 per-stage features of Adams et al. 2019 (Appendix A) and ours
// (bytes_read_past_cache, bytes_read_from_memory, library_calls, accumulator_bytes_spilled,
// heap_realizations, heap_bytes_refaulted, tlb_pages_rewalked),
// computed symbolically from a LoopNest and the FunctionDAG, without lowering.
//
// Conventions (the definitions below say per feature):
//   - counts are over one run of the whole pipeline on its estimated sizes;
//   - "region" = the points of a Func realized at a site: what its consumers need there, from
//     Halide's bounds inference (FunctionDAG edges), plus what its updates read and write of
//     it; per-tile sizes come from the middle tile (LoopNestBounds::tile_bounds), totals and
//     allocations from every tile class (LoopNestBounds::run_totals); bytes = points x
//     bytes per point; "lines" = contiguous rows of memory = the product of all extents but the
//     innermost; where the two cache features below read part of a wider buffer, each row
//     narrower than the buffer's moves whole cache lines: (W - b) / 64 + 1 of them on average
//     for W bytes of b-byte points at an offset not known (a column tile 8 floats wide moves
//     64 bytes a row, not 32);
//   - reads look through inlined Funcs to what they read, composing Jacobians; identical calls
//     in one expression count once (Halide's common-subexpression elimination loads them once;
//     Jacobian::repeat);
//   - an inlined Func runs in its readers' loops: its parallelism (inner 1, outer the tasks
//     around the reader that evaluates it most) is theirs, so its compute divides by their cores;
//   - a task is one iteration of the parallel loop of the root-level stage whose loops contain
//     the stage (or of its own parallel loop); without parallelism, one production;
//   - working sets sum the allocations made within one iteration of a site (storage at or
//     inside it), each counted once;
//   - bytes_read_past_cache (not in the paper) follows the stage's loops outward, as apply() nests
//     them, from one vector through each loop to the production, then through its consumers'
//     loops to its parallel task (or the whole run): while a block of loops reads at most a
//     core's cache (CacheSizes::core_bytes), what its iterations share stays cached; the first
//     block that reads more is read whole, once per iteration. The per-realization and per-task
//     reads count each byte once; this counts the re-reads a loop order causes (a matrix operand
//     streamed once per row of blocks instead of once per panel). Around the compute site, the
//     loops of the level of a consumer that reads the stage count one by one, not as one block:
//     nl_means' patch distances computed per vector and search offset, inside its weighted
//     sums' loops, re-read their 49 offsets' rows once per output row (842 KB a row, past a
//     512 KiB L2), not once per task.
//   - bytes_read_from_memory (not in the paper): the bytes a stage reads from each producer whose
//     data is evicted from the last-level cache before the stage reads it, over the whole run:
//     its reads per realization times the realizations, or, where consecutive realizations of a
//     task share what they read, its unique reads per task times the tasks (the smaller). A producer's reuse distance
//     is what is written between its production and the read: at least its own allocation when stored at root (all of
//     it is written before any consumer runs), the whole working set of one iteration of its store site when stored
//     inside a consumer's loops (every Func realized there); an input image's is its size. Reads past
//     a core's share of the last level (CacheSizes::shared_bytes_per_core) come from memory, and all past twice
//     that, linearly between (the cache is not LRU, and the other cores' shares are no walls). Fusing a chain of
//     stencils into strips whose intermediates fit in the cache is what it prices; without it, the model prefers tall
//     strips (less recomputation) whose intermediates stream through memory. A producer stored inside a consumer's
//     loops has, besides the allocations of its store site's iteration, what the stage owning those loops writes
//     of its own Func there (an output tile is no allocation, but it passes through the same cache); and a
//     producer's data that another Func computed earlier in the same iteration of the stage's loops read (unsharp
//     mask's gray per strip reads the strip's input rows before the sharpening reads them again) is still cached
//     as far as that read and what the iteration writes fit: that share of the reads does not come from memory.
//   - library_calls (not in the paper): the stage's calls into the C math library
//     (Stage::library_calls), its own and those of the Funcs inlined into it (0 for an inlined
//     Func: its calls run in its readers' loops, on their cores, and are divided by their
//     parallelism, not counted once serially). Halide 14 computes exp, log, pow and sqrt with
//     vector code of its own, but calls sinf, tanhf, atan2f, ... once per lane: 1-8 ns a point
//     against hundredths for an add, which the op counts of the compute terms price alike. An
//     integer division or modulo by a run-time value (a mirror boundary's `% (2 * extent)`) runs
//     lane by lane too, 0.4-0.8 of a sinf alone, and so does one of 64-bit lanes by a constant other than a
//     power of two (0.2-0.4): each counts as kRuntimeDivisionCost calls. Each
//     call counts once per iteration of the loops it depends on and of the loops around the
//     innermost of them: Halide hoists it out of the loops inside that one (a mirrored x
//     coordinate's modulo runs once per column of a tile whose rows run inside its columns, once
//     per point where x is the inner loop: 0.58 against 2.91 ms for one held-out boundary), and
//     once per vector where it does not depend on the vectorized loop. A guarded tail's
//     predicated vector makes its calls on every lane, those past the bound too (the lanes of
//     num_vectors and num_scalars, not the points computed).
//   - accumulator_bytes_spilled (not in the paper): an update whose innermost reduction loop
//     encloses pure loops sweeps their block of its Func once per iteration of that reduction
//     loop. Where the block is larger than kL1Bytes, every point's update loads its
//     accumulator and stores it again from beyond L1: twice the bytes of its points over the
//     whole run. A block that fits in L1 costs nothing where the loop is no accumulation (a
//     scan, whose calls to its own Func move with it, writes a new point at each step) or is
//     short (fewer than kMinExposedChain steps: LLVM unrolls it and forwards the accumulators
//     from step to step, and out-of-order execution overlaps the next block), unless another
//     Func is computed inside the loop: then every step stores its accumulators and loads them
//     again (kL1RoundTripWeight), however short the loop (nl_means' weighted sums over a 7x7
//     search window, one vector at a time with its patch distances computed per step, ran
//     173 ms against 89 with the distances computed per vector for the 49 steps before them). Over a longer
//     loop, a block that fits in L1 stays in registers only where it is the unrolled point tile
//     and the Func's whole realization (a small stack allocation with constant indices, which
//     LLVM promotes to registers) and the target has the vector registers for it: its
//     accumulators, the operand vectors it reuses (one load's copies across the unrolled loops
//     it moves with), all but the largest such group, and two scratch. Otherwise every update
//     step loads and stores its accumulators from L1: the same bytes at kL1RoundTripWeight. A
//     block in registers still waits on the floating-point pipes' latency where it holds fewer
//     than kFloatAccumulatorChains vectors: the same bytes at kL1RoundTripWeight x the missing
//     fraction of chains. A matrix product whose reduction runs outside a 48 KiB tile of its
//     output ran 3.6x slower than the same product accumulating in a tile of registers. On an
//     AVX2 core (16 vector registers), a 3x3x120 convolution's block of 12 accumulators (3
//     vectors of output channels x 4 rows, with 3 filter vectors and 4 inputs reused) ran 1.9x
//     slower than 8 (1 x 4 x 2), a block of 4 that is not the whole realization (one of 3 in a
//     24 x 4 allocation) 2.3x slower, and one vector of accumulators 3.8x slower.
//   - heap_realizations (not in the paper): the realizations Halide 14 allocates with
//     halide_malloc (and frees) rather than on the stack: those over kStackAllocationBytes, and
//     those whose size it computes at run time (LoopNestBounds::allocation_size: a Func
//     computed inside a guarded tile, or inside a loop left whole over the pipeline's run-time
//     size, or one whose region changes from tile to tile, as where a reader clamps at an edge)
//     over kBoundedAllocationBytes; the output's buffer is the caller's. A 48 x 3 float
//     block of a channel mix computed per 16 pixels of a pooling update's guarded loop was
//     allocated 4,560 times a run, each a malloc and a free (about 11 ns a pair alone, and such
//     a block stays in memory where a constant-size one can live in registers).
//   - heap_bytes_refaulted (not in the paper): the bytes of the Func's allocations that glibc's
//     malloc faults in per run, once the process has run the pipeline a few times: pages it
//     returned to the system (a trim of its arena's top, or a block past its mmap threshold
//     unmapped) and takes back when the buffer is next allocated, at each iteration of a site
//     or once a run. glibc's arena is simulated over the run (glibc_heap.h: its thresholds, its
//     top pad, and the holes Halide's early frees leave; pinned page for page against glibc on
//     patterns of sites), each parallel task with its own sizes, in task order, and every block
//     from halide_malloc (those Halide sizes at run time too, however small: one freed to the
//     thread's cache above large blocks keeps them from any trim). A buffer that stays in the arena faults
//     in no page after the first run: one large intermediate at root costs nothing per run, where three of them
//     together pass twice the largest at each run's end and fault in again. Measured: unsharp_mask's four intermediates
//     per 128-row strip, 4.88 MB against twice 2.48, ran 10.5 ms on 2 threads trimmed, 6.4 with trimming off; harris
//     with its gray, Ix and Iy (530 KB each) per 512 x 256 tile 24.9 ms, 15.2 with trimming off (each return is a TLB
//     shootdown on the other cores too). A partial schedule counts with the allocations placed so far (the Funcs still
//     to place may raise the thresholds as well as the sums, so this is no bound; counting none until the schedule is
//     complete misled the beam more: heap_bytes_refaulted in schedule_features.cpp).
//   - tlb_pages_rewalked (not in the paper): the 4 KiB pages the stage's loop order touches again
//     after the TLB has lost them, over the whole run. The blocks of loops are
//     bytes_read_past_cache's; a block's pages are those of its reads and of its own writes
//     (rows a page or more apart span a page each, closer ones share); the first block that
//     touches more than kTlbPages is walked afresh at each iteration, less the first touch of
//     each page once per iteration of the outermost block (streaming through a buffer walks
//     each page once anyway). interpolate's output in 8 x 512 column tiles of a 6 KiB-pitched
//     image (3,584 pages a column with its 4 input channels) ran 3x slower than in 32 x 128
//     tiles; a standalone 8 x 128 column copy of the same shape ran 58 ms with 4 KiB pages and
//     18.5 with 2 MiB ones (16 x 256: 45 against 14). Priced in the memory term at
//     kPageWalkBytes a walk (cost_terms.h).
// Partial states (§3.2): only scheduled stages get features. Unscheduled producers are read like
// inputs, optimistically: their allocation is what one innermost tile needs, and every vector
// load from them is dense.
#pragma once

#include "featurize/feature_list.h"

#include <array>
#include <string>
#include <vector>

namespace Halide {
struct Target;
}

namespace schedforge::featurize {

class FunctionDAG;
class LoopNest;

// X(name, description): the features in storage order. Changing the list bumps version().
#define SCHEDFORGE_SCHEDULE_FEATURES(X)                                                                                \
    X(num_realizations, "times the Func's storage is allocated: iterations of the loops around its store site")        \
    X(num_productions, "times a region of the Func is computed: iterations of the loops around its compute site")      \
    X(points_computed_per_realization, "points of this stage computed per allocation (mean)")                          \
    X(points_computed_per_production, "points of this stage computed per production (mean)")                           \
    X(points_computed_total, "points of this stage computed in all, summed over every tile")                           \
    X(points_computed_minimum, "points a correct output needs (schedule-invariant)")                                   \
    X(innermost_loop_extent, "points per iteration of the stage's innermost tile level")                               \
    X(innermost_pure_loop_extent, "as innermost_loop_extent, without reduction loops")                                 \
    X(unrolled_loop_extent, "innermost_pure_loop_extent if the point loops are unrolled, else 1")                      \
    X(inner_parallelism, "parallel tasks launched per production")                                                     \
    X(outer_parallelism, "iterations of the parallel loops enclosing the production")                                  \
    X(bytes_at_realization, "bytes of the Func's largest allocation")                                                  \
    X(bytes_at_production, "bytes of the Func written per production")                                                 \
    X(bytes_at_root, "bytes of the Func if computed at root (schedule-invariant)")                                     \
    X(innermost_bytes_at_realization, "bytes along the innermost storage dimension of the allocation")                 \
    X(innermost_bytes_at_production, "bytes along the innermost dimension written per production")                     \
    X(innermost_bytes_at_root, "bytes along the innermost dimension at root (schedule-invariant)")                     \
    X(inlined_calls, "inlined Funcs: times it is evaluated in all; otherwise 0")                                       \
    X(unique_bytes_read_per_realization, "bytes read from all producers per realization")                              \
    X(unique_lines_read_per_realization, "contiguous lines read from all producers per realization")                   \
    X(allocation_bytes_read_per_realization, "bytes of the allocations of the producers read")                         \
    X(vector_size, "SIMD width the stage is computed at (1: scalar)")                                                  \
    X(native_vector_size, "native SIMD width of the narrowest type the stage uses (schedule-invariant)")               \
    X(num_vectors, "whole SIMD vectors computed")                                                                      \
    X(num_scalars, "scalar points (unvectorized stages) and lanes of predicated vectors (guarded tails)")              \
    X(scalar_loads_per_vector, "scalar loads per vector: broadcasts, gathers, strides over 4")                         \
    X(vector_loads_per_vector, "dense vector loads per vector; stride-s loads (s <= 4) count s")                       \
    X(scalar_loads_per_scalar, "loads per scalar point")                                                               \
    X(unique_bytes_read_per_vector, "bytes read from producers per vector step (per producer: its box or its calls')") \
    X(unique_lines_read_per_vector, "contiguous lines read from producers per vector step (the same)")                 \
    X(unique_bytes_read_per_task, "bytes read from producers per parallel task")                                       \
    X(unique_lines_read_per_task, "contiguous lines read from producers per parallel task")                            \
    X(bytes_at_task, "bytes of the Func written per parallel task")                                                    \
    X(innermost_bytes_at_task, "as bytes_at_task, innermost dimension only")                                           \
    X(working_set, "allocations made inside the stage's own loops")                                                    \
    X(working_set_at_task, "allocations made within one parallel task")                                                \
    X(working_set_at_production, "allocations made within one production of the Func")                                 \
    X(working_set_at_realization, "allocations made within one realization of the Func")                               \
    X(working_set_at_root, "all allocations of the pipeline (the same for every stage)")                               \
    X(bytes_read_past_cache, "bytes read from beyond a core's cache: capacity misses of the loop order (below)")       \
    X(bytes_read_from_memory, "bytes read from producers evicted from the last-level cache before the read (below)")   \
    X(library_calls, "per-lane calls into the C math library and integer divisions made lane by lane, weighted by "    \
                     "their cost relative to sinf (below)")                                                            \
    X(accumulator_bytes_spilled, "an update's accumulator bytes loaded and stored past L1 (below)")                    \
    X(heap_realizations, "realizations allocated with halide_malloc: over 16 KiB, or sized at run time (below)")       \
    X(heap_bytes_refaulted, "heap bytes the allocator returns to the system and faults in again, per run (below)")     \
    X(tlb_pages_rewalked, "pages the loop order walks again past the TLB: page-table walks beyond the first (below)")

// The cache a core reuses data from between iterations of its loops: the L2 of current x86 servers.
inline constexpr double kCoreCacheBytes = 1024 * 1024;
// A core's L1 data cache on current x86 servers (32-48 KiB): a block of accumulators larger than
// this goes back and forth to L2 (accumulator_bytes_spilled).
inline constexpr double kL1Bytes = 32 * 1024;
// An accumulator reloaded from L1 at each step costs this fraction of one reloaded from L2
// (accumulator_bytes_spilled): 0.58 of the L2 coefficient for the AVX2 convolution above.
inline constexpr double kL1RoundTripWeight = 0.5;
// Independent floating-point accumulations that keep an x86 core's FMA pipes busy (two pipes of
// 4-5 cycles' latency), and the steps of a reduction loop from which its accumulators' traffic
// and latency show (shorter loops LLVM unrolls, and out-of-order execution overlaps).
inline constexpr double kFloatAccumulatorChains = 8;
inline constexpr double kMinExposedChain = 16;
// A core's share of the last-level cache: data written further back than this is read from
// memory. Servers have 1.5-4 MiB of L3 per core; this machine kind's knee (a streaming read by
// one core, measured with the others idle) lies between 12 and 24 MiB of its 32 MiB L3.
inline constexpr double kSharedCacheBytesPerCore = 16 * 1024 * 1024;
// The caches the features assume (bytes_read_past_cache, bytes_read_from_memory): those of the
// machine the schedule runs on. The search sizes them from its options (this machine's caches
// unless its config names others: sampler/search_options.h); the defaults are the Zen 5 kind's
// constants above, which the golden tests and files without a hardware record use.
// With them, the threads the pipeline runs on, among which a parallel loop's tasks are shared
// out, each allocating from an arena of its own (heap_bytes_refaulted: glibc_heap.h).
struct CacheSizes {
    double core_bytes = kCoreCacheBytes;
    double shared_bytes_per_core = kSharedCacheBytesPerCore;
    int threads = 1;
    bool operator==(const CacheSizes &o) const {
        return core_bytes == o.core_bytes && shared_bytes_per_core == o.shared_bytes_per_core && threads == o.threads;
    }
};
// The sizes for a machine with an L2 of `l2_bytes` a core and an L3 of `l3_bytes` shared by
// `cores_sharing_l3` cores (its share a core); a size of 0 (unknown) keeps the default.
CacheSizes machine_cache_sizes(double l2_bytes, double l3_bytes, double cores_sharing_l3);
// The 4 KiB pages a core's TLB holds (the second level of Zen 1 and Skylake cores: 1,536
// entries; 2,048-3,072 on later ones) and what one page-table walk past it costs in the memory
// term, as bytes read from memory (tlb_pages_rewalked): a walk's page-table line.
inline constexpr double kTlbPages = 1536;
inline constexpr float kPageWalkBytes = 64; // float: Halide Exprs multiply by it
// Halide keeps allocations of a constant size up to this on the stack: no malloc.
inline constexpr float kStackAllocationBytes = 16 * 1024; // float: Halide Exprs compare with it
// Halide rounds an allocation sized at run time up to a constant, and keeps it on the stack, only
// when it can bound it by this (Halide 14's bound_small_allocations pass); larger ones are mallocs.
inline constexpr double kBoundedAllocationBytes = 128;

inline constexpr int kNumScheduleFeatures = 0 SCHEDFORGE_SCHEDULE_FEATURES(SCHEDFORGE_FEATURE_COUNT);

// A feature's position in values() and in stored feature rows: ScheduleFeatureIndex::vector_size.
struct ScheduleFeatureIndex {
#define SCHEDFORGE_INDEX(name, doc) name,
    enum : int { SCHEDFORGE_SCHEDULE_FEATURES(SCHEDFORGE_INDEX) };
#undef SCHEDFORGE_INDEX
};

struct ScheduleFeatures {
    SCHEDFORGE_SCHEDULE_FEATURES(SCHEDFORGE_FEATURE_DECLARE)

    // 2: bytes_read_past_cache; 3: bytes_read_from_memory; 4: library_calls, accumulator_bytes_spilled;
    // 5: the same features with the meanings of 18232d8, b369712 and 73c0947 (an inlined Func's
    // library calls and cores are its readers'; identical calls load once; guarded tails run
    // predicated vectors, counted as scalar lanes). Files of version 4 written before those hold
    // the older meanings under the same names, so the version says which: `dataset refeaturize`.
    // Also new in 5: loads through a clamped index count as their argument's (Jacobian::steady_entries).
    // 6: library_calls also counts integer divisions by run-time values (kRuntimeDivisionCost).
    // 7: library_calls counts each call once per iteration of the loops it depends on (hoisted
    // out of the others, as Halide's loop-invariant code motion does), not once per point.
    // 8: library_calls also counts divisions of 64-bit lanes by constants (not powers of two).
    // 9: unique_{bytes,lines}_read_per_vector count a producer read at places far apart (a Func
    // times its own transpose) call by call, not as the box that holds every call, and a call
    // with an unknown slope along the vector (a mirrored index) as a point per lane.
    // 10: heap_realizations (new), which the malloc cost term counts instead of every
    // realization over 16 KiB.
    // 11: library_calls counts a guarded tail's predicated vectors' calls on every lane;
    // heap_realizations counts realizations whose size changes from tile to tile.
    // 12: accumulator_bytes_spilled counts, at kL1RoundTripWeight, a block that fits in L1 over a
    // reduction loop of kMinExposedChain steps or more where registers do not hold it (not the
    // unrolled whole realization, or more than the target's vector registers), and a block in
    // registers of fewer than kFloatAccumulatorChains float vectors (0 before).
    // 13: bytes_read_past_cache follows a reading consumer's loops one by one around the compute
    // site, and takes the cache sizes of the machine (CacheSizes: a file's recorded hardware, or
    // the search's target) instead of constants; accumulator_bytes_spilled counts a Func
    // computed inside an accumulation loop (L1 round trips, whatever the loop's length).
    // 14: heap_bytes_refaulted (new), which the page_faults term counts beside the first touch.
    // 15: tlb_pages_rewalked (new), which the memory term counts beside bytes_read_from_memory;
    // both cache features count rows narrower than their buffer's in whole cache lines;
    // bytes_read_from_memory counts what a stage's own tile writes in a producer's reuse
    // distance, reads another Func of the same iteration made before it as cached, and evicts
    // linearly between one and two cache shares (all at once past one before).
    // 16: heap_bytes_refaulted counts malloc's top pad in what a trimmed site frees, and counts
    // in partial schedules too (with the allocations placed so far).
    // 17: heap_bytes_refaulted follows glibc's arena, simulated (glibc_heap.h): what a trim keeps
    // (the pad) and what early frees' holes take; it counts every fault of a run, a root
    // allocation's too when the arena returns it at the run's end (the page-fault term counted
    // every allocation's first touch, and no longer does).
    // 18: an update's writes are its left-hand side over its loops (a scan's step writes one
    // row): bytes_at_task and innermost_bytes_at_task of updates whose left-hand side an RVar
    // indexes, and the writes that bytes_read_from_memory and tlb_pages_rewalked count (they
    // took every row of the dimension the RVar indexes).
    // 19: heap_bytes_refaulted with a parallel loop's tasks shared among the machine's threads,
    // each other than the launching one allocating from a thread arena, which grows without the
    // pad (iir_blur's nest: 7,648 pages a run on two threads, measured and modelled, where the
    // one arena of version 18 counted 22,944, the figure on one thread).
    // 20: heap_bytes_refaulted with each task of a parallel loop sized by its own region (per
    // class of the tiles along each loop, in task order), not the representative tile's: the
    // largest task's block sets glibc's thresholds for all (a held-out schedule of four tasks
    // whose block grows from 261 to 785 KB: 2.8 MB a run in version 19, none now or measured);
    // and with the blocks Halide sizes at run time however small, which glibc keeps in the
    // thread's cache above the large ones (2,848 pages a run for a schedule measured at none).
    static int version() { return 20; }
    static constexpr int num_features() { return kNumScheduleFeatures; }
    static const std::vector<std::string> &names();
    static const std::vector<std::string> &descriptions();
    std::array<double, kNumScheduleFeatures> values() const;
    // One feature by ScheduleFeatureIndex, without copying the others (the cost models' hot path).
    double operator[](int index) const { return this->*members()[size_t(index)]; }

private:
    static const std::array<double ScheduleFeatures::*, kNumScheduleFeatures> &members();
};

// Per stage of a FunctionDAG, in node order then stage order.
struct StageFeatures {
    int node = -1, stage = 0;
    bool scheduled = false; // false: no features (a partial state's unscheduled stage)
    ScheduleFeatures features;
};

// Features of every stage of `nest` (which must be legal: LoopNest::validate). The target gives
// the native vector widths, `caches` the cache sizes.
std::vector<StageFeatures> compute_schedule_features(const FunctionDAG &dag, const LoopNest &nest,
                                                     const Halide::Target &target, const CacheSizes &caches = {});

// The same features for a state made from another by one decision about `changed_node` (the
// search's children): stages the decision cannot affect keep `parent_features` (the other
// state's), the rest are computed. A decision about a Func can change only its own stages, the
// stages reading it (directly or through inlined Funcs), the stages sharing its root-level loop
// nest when it is computed inside one (working sets), the root-level loop nests of its readers
// when it is inlined and reads an input (they guard their tails: guards_tails), and the
// pipeline-wide working_set_at_root.
// Equal to compute_schedule_features() (tested); `reused` counts the stages kept.
std::vector<StageFeatures> update_schedule_features(const FunctionDAG &dag, const LoopNest &nest,
                                                    const Halide::Target &target,
                                                    const std::vector<StageFeatures> &parent_features, int changed_node,
                                                    int64_t *reused = nullptr, const CacheSizes &caches = {});

} // namespace schedforge::featurize
