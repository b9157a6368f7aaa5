// The 27 hand-designed cost terms of the source paper's Appendix B and three of ours (term 27, the
// capacity misses of bytes_read_past_cache; term 28, the reads from memory of
// bytes_read_from_memory and the page-table walks of tlb_pages_rewalked; term 29, the math library calls of
// library_calls; term 30, the accumulator traffic of accumulator_bytes_spilled), written once for every cost model: per
// stage, cost = sum_i c_i * term_i, where the manual model (sampler/) takes the coefficients c_i from a config file and
// the learned model (trainer/) predicts them per stage with its network. The terms are linear in the coefficients, so
// each one below is the factor that multiplies its c_i in the paper's formula.
//
// The definition is a template over the number type: `double` for the manual model here, and a
// Halide `Expr` for the trainer's pipelines, which supplies its own `select_value`, `max_value`,
// `min_value` and `ceil_value` overloads found by argument-dependent lookup.
//
// Deviations from the paper's text: our features give an inlined stage no vectors or scalars
// of its own (its work happens in its consumers), so the inlined branch of the compute cost
// counts its evaluations, inlined_calls, as its lanes (terms 0 and 1); otherwise inlining would
// look free. The page-fault term (22) counts the bytes of an intermediate's allocation that
// glibc's malloc faults in each run (heap_bytes_refaulted), not the paper's product of
// production bytes and parallelism: on a machine where fresh pages cost 3 ns a byte,
// intermediates of a few MB that the allocator returns and takes back at each run cost more
// than all their arithmetic, and only a term proportional to those bytes sees it. And three corrections for Funcs
// computed many times inside a task (a small block per iteration of a consumer, where register blocking puts
// reductions): lines written per realization are the realization's, not the whole task's (terms 15-17); reads that fit
// in cache are cold once per task, not once per realization (terms 4 and 5); and only realizations Halide allocates
// with halide_malloc cost a malloc (23: heap_realizations, which also counts small ones sized at run time). Without
// them such blocks cost 10-100x their lines, and the search never chose them.
#pragma once

#include "featurize/pipeline_features.h"
#include "featurize/schedule_features.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace schedforge::featurize {

inline constexpr int kNumCostTerms = 31;

inline double select_value(bool c, double t, double f) { return c ? t : f; }
inline double max_value(double a, double b) { return std::max(a, b); }
inline double min_value(double a, double b) { return std::min(a, b); }
inline double ceil_value(double a) { return std::ceil(a); }

// Short names of the terms, in coefficient order (for configs, weights files and reports).
inline const std::array<const char *, kNumCostTerms> &cost_term_names() {
    static const std::array<const char *, kNumCostTerms> names = {"inlined_vector_compute",
                                                                  "inlined_scalar_compute",
                                                                  "vector_compute",
                                                                  "scalar_compute",
                                                                  "lines_read_per_realization",
                                                                  "bytes_read_per_realization",
                                                                  "vector_loads",
                                                                  "scalar_loads_per_scalar",
                                                                  "scalar_loads_per_vector",
                                                                  "scalar_bytes_read",
                                                                  "vector_bytes_read",
                                                                  "scalar_lines_read",
                                                                  "vector_lines_read",
                                                                  "task_bytes_read",
                                                                  "task_lines_read",
                                                                  "parallel_lines_written",
                                                                  "output_lines_written",
                                                                  "serial_lines_written",
                                                                  "parallel_bytes_stored",
                                                                  "output_bytes_stored",
                                                                  "serial_bytes_stored",
                                                                  "false_sharing",
                                                                  "page_faults",
                                                                  "mallocs",
                                                                  "parallel_launches",
                                                                  "parallel_tasks",
                                                                  "working_set",
                                                                  "bytes_read_past_cache",
                                                                  "bytes_read_from_memory",
                                                                  "library_calls",
                                                                  "accumulator_bytes_spilled"};
    return names;
}

// The features a term reads, as the number type T (double, or the trainer's Halide Expr).
template<typename T>
struct CostTermInputs {
    // Schedule features, by Appendix A name.
    T num_realizations, num_productions, inner_parallelism, outer_parallelism, bytes_at_realization,
        bytes_at_production, inlined_calls, unique_bytes_read_per_realization, unique_lines_read_per_realization,
        vector_size, num_vectors, num_scalars, scalar_loads_per_vector, vector_loads_per_vector,
        scalar_loads_per_scalar, unique_bytes_read_per_vector, unique_lines_read_per_vector, unique_bytes_read_per_task,
        unique_lines_read_per_task, bytes_at_task, innermost_bytes_at_task, working_set, bytes_read_past_cache,
        bytes_read_from_memory, library_calls, accumulator_bytes_spilled, heap_realizations, heap_bytes_refaulted,
        tlb_pages_rewalked;
    T is_output; // 1 for the pipeline's outputs, else 0
    T num_cores;
};

// The inputs from a stage's features: feature(ScheduleFeatureIndex::name) gives each as a T.
template<typename T, typename Feature>
CostTermInputs<T> cost_term_inputs(Feature feature, T is_output, T num_cores) {
    using I = ScheduleFeatureIndex;
    return {feature(I::num_realizations),
            feature(I::num_productions),
            feature(I::inner_parallelism),
            feature(I::outer_parallelism),
            feature(I::bytes_at_realization),
            feature(I::bytes_at_production),
            feature(I::inlined_calls),
            feature(I::unique_bytes_read_per_realization),
            feature(I::unique_lines_read_per_realization),
            feature(I::vector_size),
            feature(I::num_vectors),
            feature(I::num_scalars),
            feature(I::scalar_loads_per_vector),
            feature(I::vector_loads_per_vector),
            feature(I::scalar_loads_per_scalar),
            feature(I::unique_bytes_read_per_vector),
            feature(I::unique_lines_read_per_vector),
            feature(I::unique_bytes_read_per_task),
            feature(I::unique_lines_read_per_task),
            feature(I::bytes_at_task),
            feature(I::innermost_bytes_at_task),
            feature(I::working_set),
            feature(I::bytes_read_past_cache),
            feature(I::bytes_read_from_memory),
            feature(I::library_calls),
            feature(I::accumulator_bytes_spilled),
            feature(I::heap_realizations),
            feature(I::heap_bytes_refaulted),
            feature(I::tlb_pages_rewalked),
            is_output,
            num_cores};
}

inline CostTermInputs<double> cost_term_inputs(const ScheduleFeatures &f, bool is_output, int num_cores) {
    return cost_term_inputs<double>([&](int i) { return f[i]; }, is_output ? 1.0 : 0.0, double(num_cores));
}

// Terms 0-14 and 27-30 (compute and loads) count the stage's total work; both models divide them
// by the parallel speedup the stage can get: its tasks, up to the cores. Memory bandwidth scales
// with the cores too on the machines measured (two cores streaming from memory each read at 0.068
// ns/byte, one alone at 0.061).
inline constexpr int kCacheTrafficTerm = 27, kMemoryTrafficTerm = 28, kLibraryCallTerm = 29, kAccumulatorTerm = 30;
// The page-fault term: heap bytes faulted in each run (what `calibrate` can hold at a probe's price).
inline constexpr int kPageFaultTerm = 22;
inline constexpr bool is_parallel_cost_term(int i) { return i < 15 || i >= kCacheTrafficTerm; }
static_assert(kNumCostTerms == kAccumulatorTerm + 1, "a new term: say whether it is parallel above");
// Terms 0-3 (compute) count points; both models multiply them by the stage's operations per point
// (the learned one unless its weights were trained without: trainer/weights.h).
inline constexpr int kNumComputeCostTerms = 4;

// The operations that take an instruction in one evaluation of a stage: its op histogram (the
// first PipelineFeatures::kNumOps x kNumTypes entries of the flat pipeline features) less
// constants, names and parameters; at least 1. `feature(i)` gives flat feature i as a T.
template<typename T, typename Feature>
T ops_per_point(const Feature &feature) {
    using Op = PipelineFeatures::OpType;
    constexpr int kTypes = PipelineFeatures::kNumTypes;
    T ops = T(0.0f);
    for (int op = 0; op < PipelineFeatures::kNumOps; op++) {
        if (op == int(Op::Const) || op == int(Op::Variable) || op == int(Op::Param)) continue;
        for (int t = 0; t < kTypes; t++) ops += feature(op * kTypes + t);
    }
    return max_value(ops, T(1.0f));
}

// A realization whose reads fit in this much cache (a core's L2 on current x86 servers) leaves
// them there for the next realization in the same task.
inline constexpr float kReuseCacheBytes = 1024 * 1024;
template<typename T>
T parallel_speedup(const CostTermInputs<T> &x) {
    return min_value(max_value(x.inner_parallelism * x.outer_parallelism, x.num_cores * 0 + 1), x.num_cores);
}

// term[i] multiplies coefficient c_i of Appendix B.
template<typename T>
std::array<T, kNumCostTerms> cost_terms(const CostTermInputs<T> &x) {
    const T zero = x.num_cores * 0, one = zero + 1;
    auto m = [&](const T &v) { return max_value(v, one); };
    const auto inlined = x.inlined_calls > zero;
    const auto parallel = x.inner_parallelism > one;
    const auto output = x.is_output > zero;

    // Compute, penalized when the tasks do not divide evenly among the cores.
    const T num_tasks = m(x.inner_parallelism * x.outer_parallelism);
    const T tasks_per_core = num_tasks / x.num_cores;
    const T imbalance = ceil_value(tasks_per_core) / m(tasks_per_core);
    const T lanes = x.vector_size * x.num_vectors;
    // Lines a realization writes: its tasks' lines. A Func computed inside a task, many
    // realizations per task, writes only its own realization's lines each time (not the task's).
    const T bytes_per_task = min_value(x.bytes_at_task, x.bytes_at_realization / m(x.inner_parallelism));
    const T lines_written = x.inner_parallelism * bytes_per_task / m(x.innermost_bytes_at_task);

    std::array<T, kNumCostTerms> t;
    t[0] = select_value(inlined, x.inlined_calls, zero) * imbalance;
    t[1] = zero;
    t[2] = select_value(inlined, zero, lanes) * imbalance;
    t[3] = select_value(inlined, zero, x.num_scalars) * imbalance;
    // Loads.
    // Reads that start cold in each realization. A Func computed many times inside a task (a
    // small block per iteration of its consumer) re-reads much of what the previous realization
    // read (a filter, an overlapping window): while one realization's reads fit in cache, only
    // the task's unique lines come from memory.
    const auto reads_stay_cached = x.unique_bytes_read_per_realization <= kReuseCacheBytes;
    const T lines_read = x.num_realizations * x.unique_lines_read_per_realization,
            bytes_read = x.num_realizations * x.unique_bytes_read_per_realization;
    t[4] = select_value(reads_stay_cached, min_value(lines_read, num_tasks * x.unique_lines_read_per_task), lines_read);
    t[5] = select_value(reads_stay_cached, min_value(bytes_read, num_tasks * x.unique_bytes_read_per_task), bytes_read);
    t[6] = x.num_vectors * x.vector_loads_per_vector;
    t[7] = x.num_scalars * x.scalar_loads_per_scalar;
    t[8] = x.num_vectors * x.scalar_loads_per_vector;
    t[9] = x.num_scalars * x.unique_bytes_read_per_vector;
    t[10] = x.num_vectors * x.unique_bytes_read_per_vector;
    t[11] = x.num_scalars * x.unique_lines_read_per_vector;
    t[12] = x.num_vectors * x.unique_lines_read_per_vector;
    t[13] = num_tasks * x.unique_bytes_read_per_task;
    t[14] = num_tasks * x.unique_lines_read_per_task;
    // Stores: alpha and beta pick one of three coefficients each.
    const T lines_stored = x.num_realizations * lines_written,
            bytes_stored = x.num_realizations * x.bytes_at_realization;
    t[15] = select_value(parallel, lines_stored, zero);
    t[16] = select_value(parallel, zero, select_value(output, lines_stored, zero));
    t[17] = select_value(parallel, zero, select_value(output, zero, lines_stored));
    t[18] = select_value(parallel, bytes_stored, zero);
    t[19] = select_value(parallel, zero, select_value(output, bytes_stored, zero));
    t[20] = select_value(parallel, zero, select_value(output, zero, bytes_stored));
    // Threads, memory and parallel overheads.
    t[21] = select_value(parallel, (x.num_vectors + x.num_scalars) / m(x.innermost_bytes_at_task), zero);
    // Fresh memory: the pages of an intermediate's allocations that glibc's malloc returns to the
    // system and faults in again, per run (heap_bytes_refaulted: its arena simulated); the output's
    // buffer is the caller's. The cost per byte varies from machine to machine by two orders
    // (calibrate measures it).
    t[22] = x.heap_bytes_refaulted;
    t[23] = x.heap_realizations;
    t[24] = select_value(parallel, x.num_productions, zero);
    t[25] = x.num_productions * (x.inner_parallelism - 1);
    t[26] = x.working_set;
    // Re-reads from beyond the cache that the loop order causes (schedule_features.h).
    t[kCacheTrafficTerm] = x.bytes_read_past_cache;
    // Reads of producers evicted from the last-level cache before they are read, and the
    // page-table walks of pages the TLB lost, a line from memory each (same header).
    t[kMemoryTrafficTerm] = x.bytes_read_from_memory + x.tlb_pages_rewalked * kPageWalkBytes;
    // Calls into the C math library, one per lane, in sinf-equivalents (schedule_features.h).
    t[kLibraryCallTerm] = x.library_calls * imbalance;
    // Accumulators that do not stay in L1 across a reduction loop (same header).
    t[kAccumulatorTerm] = x.accumulator_bytes_spilled;
    return t;
}

} // namespace schedforge::featurize
