// LoweredStats: an oracle for schedule features, measured on the code Halide itself generates.
//
// Key types and entry points:
//   measure_lowered(pipeline, dag, target)  lowers an already-scheduled pipeline with Halide 14
//                and measures, per Func and per stage, what the symbolic featurizer predicts:
//                realizations, productions, points computed, parallelism, vector width, bytes.
//   measure_stmt(stmt, dag, symbols)        the same measurement on any lowered Stmt (tests,
//                debugging), with the symbol bindings given explicitly.
//   estimate_symbols(pipeline, dag)         the bindings measure_lowered uses: buffer mins,
//                extents and dense strides, and scalar params, all from the estimates.
//   LoweredStats  funcs by Halide's Func name, stages by the FunctionDAG's Stage::name ("f",
//                "f.update(0)"), loops by Halide's loop name ("f.s1.r$x"; without ".rebased").
//
// How it measures. Halide 14's compile_to_module turns every parallel loop into a closure (a
// separate LoweredFunc called through halide_do_par_for), which loses the loop's name and nesting.
// So the Stmt is captured with a custom lowering pass instead: Halide 14 runs those after the final
// simplification and before parallel tasks are lowered, so every optimisation (bounds inference,
// sliding window, storage folding, loop partitioning, unrolling, vectorization) is applied and
// parallel loops are still For nodes of type Parallel. The Stmt is then interpreted on integers:
// loop bounds, if conditions and allocation sizes are evaluated over the symbols (buffer fields,
// params), Let/LetStmt bindings and enclosing loop variables. A loop is not iterated when nothing
// that decides counts inside it (inner loop bounds, conditions, allocation sizes, store predicates)
// depends on its variable: its body is measured once at the loop's min and multiplied by the trip
// count. Otherwise (loop-partition tails, GuardWithIf) it is iterated exactly, within a budget
// (LoweredStatsOptions), beyond which it falls back to the first iteration and says so.
//
// Limitations:
//   - A Store is attributed to a stage by the innermost enclosing loop of that Func ("f.s1.*").
//     Stages with no loop left (every loop unrolled, vectorized or of extent one) are attributed by
//     their order in the production: the first such run of stores after stage k's loops is taken
//     as stage k + 1, and two consecutive loop-less stages cannot be told apart (the second is
//     counted with the first).
//   - compute_with (fused stages), extern stages, GPU and Hexagon offload are not modelled.
//   - Vector lets are not tracked: a store predicate that reads one leaves the points unknown.
//   - The output buffer is not allocated by the pipeline: an output Func counts one realization
//     of the size of its estimated region (FunctionDAG::region_at_root).
#pragma once

#include "featurize/function_dag.h"

#include <Halide.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace schedforge::featurize {

// Measurements that could not be taken (a bound reads memory, a symbol has no binding...), by
// measurement name ("num_realizations", "points_computed_total", ...) -> why. Counts of an unknown
// measurement are partial and must not be compared.
using UnknownMeasures = std::map<std::string, std::string>;

struct LoweredStageStats {
    std::string func; // Halide's unique Func name
    int index = 0;    // as Stage::index: 0 is the pure definition, k is update k - 1
    // Scalar points stored over the whole run: a vector store counts its active lanes (a
    // predicated store only the lanes whose predicate holds); for a Tuple, the most of any element.
    int64_t points_computed_total = 0;
    // Executions of its unpredicated vector stores, and the lanes of its predicated vector stores
    // (all of them, on or off: the vector runs whole) and of its scalar stores; for a Tuple, the
    // most of any element.
    int64_t num_vectors = 0, num_scalars = 0;
    // Product of the extents of this stage's parallel loops nested inside one production (the
    // largest over productions); 1 for a produced stage with no parallel loop, 0 if never produced.
    int64_t inner_parallelism = 0;
    int vector_size = 0; // most lanes of any store of this stage; 0 if it stores nothing
    UnknownMeasures unknown;
    bool known(const std::string &measure) const { return unknown.count(measure) == 0; }
};

struct LoweredFuncStats {
    std::string name;
    bool is_output = false;
    // Times its storage is allocated (executions of its Allocate); 1 for an output buffer.
    int64_t num_realizations = 0;
    // Of those, the ones Halide allocates with halide_malloc: a size not constant in the lowered
    // code, or a constant one over 16 KiB (Halide 14's stack limit); never the output's.
    int64_t heap_realizations = 0;
    int64_t num_productions = 0; // times its producer block runs; 0 when inlined
    // Product of the extents of the parallel loops enclosing a production (the largest over
    // productions); 1 at root, 0 if never produced.
    int64_t outer_parallelism = 0;
    // Bytes of one realization (allocation extents product x type bytes, summed over Tuple
    // elements; the largest over realizations, e.g. a loop-partition tail may allocate less).
    int64_t bytes_at_realization = 0;
    UnknownMeasures unknown;
    bool known(const std::string &measure) const { return unknown.count(measure) == 0; }
};

struct LoweredLoopStats {
    Halide::Internal::ForType type = Halide::Internal::ForType::Serial;
    int64_t instances = 0;  // times a loop of this name starts (partitioned loops share a name)
    int64_t iterations = 0; // body executions over all instances
    int64_t max_extent = 0; // largest trip count of one instance
    std::string unknown;    // why the counts are partial; empty when exact
};

struct LoweredStats {
    std::map<std::string, LoweredFuncStats> funcs;   // every Func of the DAG (not input images)
    std::map<std::string, LoweredStageStats> stages; // by Stage::name: "f", "f.update(0)"
    // By Halide's loop name, e.g. "f.s0.y.yo", less the ".rebased" that lowering may append.
    std::map<std::string, LoweredLoopStats> loops;
    // Loops whose inner counts depend on their variable but were measured on their first
    // iteration only, the exact-iteration budget being spent; empty when every count is exact.
    std::vector<std::string> approximated_loops;
    std::string stmt; // the measured Stmt as Halide prints it, for debugging a mismatch

    // Lookups that throw std::out_of_range naming what is missing (a mistyped name is a bug).
    const LoweredFuncStats &func(const std::string &name) const;
    const LoweredStageStats &stage(const std::string &func, int index) const;
    std::string describe() const; // a readable table of every measurement
};

struct LoweredStatsOptions {
    // Loop iterations that may be walked one by one, counted as the product of the trip counts of
    // the exactly iterated loops around a loop; beyond it a loop is measured on its first iteration.
    int64_t max_exact_iterations = int64_t(1) << 16;
};

// Values for the free symbols of a lowered pipeline, converted to each variable's type on use:
// "<buffer>.min.<d>", ".extent.<d>", ".stride.<d>" (dense, dimension 0 innermost) for every input
// (its estimates, as FunctionDAG substitutes them; else the region its consumers need) and output
// (its estimated region; Tuple outputs as "<f>.<i>"), and every scalar param (its estimate).
std::map<std::string, double> estimate_symbols(const Halide::Pipeline &pipeline, const FunctionDAG &dag);

// Lowers `pipeline` for `target` (the caller's Pipeline is left untouched: a fresh Pipeline over
// the same outputs carries the capturing pass) and measures it. `dag` is FunctionDAG::build of the
// same algorithm, built before scheduling (FunctionDAG reads the default loops, so it rejects split
// ones); only its Func names, stages, types and regions are used. Halide errors propagate.
LoweredStats measure_lowered(const Halide::Pipeline &pipeline, const FunctionDAG &dag, const Halide::Target &target,
                             const LoweredStatsOptions &options = {});

// Measures a lowered Stmt whose Funcs are `dag`'s, with the given symbol bindings.
LoweredStats measure_stmt(const Halide::Internal::Stmt &stmt, const FunctionDAG &dag,
                          const std::map<std::string, double> &symbols, const LoweredStatsOptions &options = {});

} // namespace schedforge::featurize
