// FunctionDAG: the algorithm of a Halide pipeline as the search and the featurizer see it.
//
// Key types:
//   FunctionDAG  build(pipeline) extracts it; nodes are listed consumers first (the output is
//                node 0, inputs last), the order the search schedules them in.
//   Node         one Func, or one input image (is_input); its stages and its region at root.
//   Stage        the pure definition (index 0) or an update; its loops, innermost first.
//   Edge         producer node -> consumer stage: the region of the producer that the stage
//                needs, as a function of the stage's loop bounds (SymbolicBound, from Halide's
//                bounds inference, evaluated in nanoseconds for concrete bounds), and the
//                Jacobian of every call site (how each producer coordinate moves per step of
//                each consumer loop; exact rationals where the access is affine).
//
// Estimates: the output's estimates and the input images' and scalar params' estimates are
// required (as for Halide's own autoschedulers); a missing one is an UnsupportedPipeline error.
// Where bounds inference leaves an access unbounded, or bounded by an expression the evaluator
// cannot evaluate per tile, the access is taken at its bound over the consumer's whole region
// at root (a constant), else at the producer's estimates: conservative, never a refusal. Extern
// stages read their producers over the extern Func's own region (matching dimensions), or their
// producers' estimates. A Func the output does not read is realized over its estimates, or one
// point.
#pragma once

#include <Halide.h>

#include "common/small_vector.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace schedforge::featurize {

// The pipeline cannot be modelled (missing estimates, extern stages, tuples of mixed shape...).
class UnsupportedPipeline : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A closed integer interval [min, max].
struct Span {
    int64_t min = 0, max = -1;
    int64_t extent() const { return max - min + 1; }
    bool operator==(const Span &o) const { return min == o.min && max == o.max; }
};
// A region, or a stage's loop bounds: one Span per dimension or loop (innermost first). Held in
// place up to four, as the featurizer makes millions of them per search.
using Region = SmallVector<Span, 4>;

// Grows `acc` (empty: nothing yet) to cover the region `r`.
void unite(Region &acc, const Region &r);
// The points of a region: the product of its extents (1 for no dimensions).
int64_t region_points(const Region &r);

// An integer expression over a stage's loop bounds: symbol 2*i is loop i's min, 2*i+1 its max.
// Affine bounds (the common case) evaluate as a dot product; the rest by walking the simplified
// Halide expression.
class SymbolicBound {
public:
    SymbolicBound() = default;
    SymbolicBound(const Halide::Expr &e, const std::vector<std::string> &symbols);
    // For concrete loop bounds of the stage, innermost first (one Span per loop).
    int64_t eval(const Region &loop_bounds) const;
    bool is_affine() const { return affine_; }
    // Bit l set where the bound reads loop l's min or max.
    uint64_t loops_read() const { return loops_read_; }
    // Whether Halide's bound reads values known only at run time (the pipeline's parameters, an
    // input's extent, or none: an index read from data), which the estimates stand in for here.
    bool reads_run_time_values() const { return run_time_; }
    void set_reads_run_time_values(bool v) { run_time_ = v; }
    const Halide::Expr &expr() const { return expr_; }

private:
    Halide::Expr expr_;
    std::vector<std::string> symbols_;
    bool affine_ = false;
    std::vector<int64_t> coeffs_; // per symbol, when affine
    int64_t constant_ = 0;
    uint64_t loops_read_ = 0;
    bool run_time_ = false;
};

// d(producer coordinate) / d(consumer loop variable): an exact rational, or unknown (the
// access is not affine in that loop, e.g. a data-dependent gather).
struct Rational {
    int64_t num = 0, den = 1;
    bool operator==(const Rational &o) const { return num * o.den == o.num * den; }
    double value() const { return double(num) / double(den); }
};
using JacobianEntry = std::optional<Rational>;

// One call site: jacobian[p][l] for producer dimension p and consumer loop l.
struct Jacobian {
    std::vector<std::vector<JacobianEntry>> entries;
    // The same call as an earlier site of its expression (same value, same simplified
    // coordinates): Halide's common-subexpression elimination loads it once, so the schedule
    // features count it once (the pipeline features count every site).
    bool repeat = false;
    // The same with clamps (min/max against bounds that do not move with the loop) and likely()
    // looked through: the slope of the steady state, which Halide 14 loads as a dense vector,
    // not a gather (a clamped 64-lane uint8 copy of 2048 x 1024 runs in 0.043 ms, unclamped
    // 0.041, a true gather 0.67). Schedule features count loads by it; pipeline features and
    // storage layouts keep `entries`. Empty: the same as `entries`.
    std::vector<std::vector<JacobianEntry>> steady_entries;
    const std::vector<std::vector<JacobianEntry>> &steady() const {
        return steady_entries.empty() ? entries : steady_entries;
    }
    size_t producer_dims() const { return entries.size(); }
    size_t consumer_loops() const { return entries.empty() ? 0 : entries[0].size(); }
};

struct Loop {
    std::string var;                    // the loop variable's name in the definition
    bool is_rvar = false;               // from a reduction domain
    bool is_pure = true;                // iterations may run in any order
    int dim = -1;                       // pure loops: the Func dimension they iterate over
    Halide::Expr rvar_min, rvar_extent; // RVars only, estimates substituted
};

struct Edge;

// Calls per point of a stage that depend on the same set of its loops: bit l of `loops` is set
// where the operands use loops[l]'s variable, directly or through a Let binding.
struct DependentCalls {
    uint64_t loops = 0;
    double per_point = 0;
};

// Per dimension of a Func, the [min, max] of an access as functions of a stage's loop bounds.
using SymbolicRegion = std::vector<std::pair<SymbolicBound, SymbolicBound>>;
// Evaluates `region` for concrete loop bounds (innermost first) into `out`, reusing its storage.
void eval_region(const SymbolicRegion &region, const Region &loop_bounds, Region &out);

struct Stage {
    int node = -1, index = 0; // index 0: pure definition; k: update k - 1
    std::string name;         // "f" or "f.update(0)"
    std::vector<Loop> loops;  // innermost first
    std::vector<int> incoming_edges;
    Region loop_bounds_at_root; // per loop, when the node is computed at root
    Halide::Internal::Definition definition;
    std::vector<Jacobian> self_calls; // an update reading its own Func, per call site
    // Updates: the region of its own Func the stage reads (self-calls; empty if none) and writes
    // (its left-hand side). Halide realizes them wherever the Func is realized, whatever the
    // consumers need: a scan along y computed inside a tile of 8 rows still covers every row of
    // its reduction.
    SymbolicRegion self_reads, writes;
    // Calls per point into the C math library, which Halide 14 makes once per vector lane (sin,
    // tanh, ...; exp, log, pow and sqrt it vectorizes itself), each weighted by its cost relative
    // to sinf (library_call_cost); and the integer divisions x86 also makes one lane at a time
    // (kRuntimeDivisionCost). Grouped by the loops they depend on: Halide computes an operation
    // once per iteration of the innermost loop it depends on (loop-invariant code motion), so how
    // often a schedule makes them depends on its loop order.
    std::vector<DependentCalls> library_calls;
    double library_calls_per_point() const; // all groups: as if no loop hoisted any

    // The stage's loop bounds (innermost first) when its Func computes `region`: pure loops
    // span their dimension of it, reduction loops their whole domain.
    Region loops_over(const Region &region) const;
};

struct Node {
    std::string name;
    bool is_input = false, is_output = false;
    // A stage defined by a C function (Func::define_extern): one stage over the Func's pure
    // variables, no Halide definition (`stages[0].definition` is undefined). It is computed at
    // root, untiled; the Funcs it reads are realized at root for it.
    bool is_extern = false;
    int dimensions = 0;
    std::vector<Halide::Type> types; // one per tuple element
    std::vector<Stage> stages;       // empty for inputs
    std::vector<int> outgoing_edges;
    Region region_at_root; // per dimension: what the consumers need (estimates)
    // Per dimension, the region the user's estimates give (input images' estimates or bounds, a
    // Func's set_estimates); empty where there are none. The fallback for a consumer's access
    // that bounds inference cannot bound, and the region of a Func nothing reads.
    Region estimated_region;
    Halide::Internal::Function func; // undefined for inputs
    // Elements to which a schedule pads the innermost dimension of this Func's storage where it
    // is stored inside another Func's loops (apply.h says why: Halide 14's strided loads); 1 for
    // none. Set for a Func some consumer reads at a stride of two or more along that dimension,
    // directly or through consumers that may be inlined.
    int64_t storage_alignment = 1;
    int64_t bytes_per_point() const;
    // Elements to which a schedule pads the innermost dimension of `region` stored inside a loop
    // nest (1: none): storage_alignment, or 64 bytes for a narrow region, one where stepping along
    // an outer dimension moves 2 to 4 elements (rows of 2 to 4 points). Halide 14 loads vectors
    // at a constant stride of 2 to 4 as dense vectors it marks aligned when they are not, and a
    // consumer vectorized along that outer dimension with an unrolled row offset segfaulted.
    int64_t storage_padding(const Region &region) const;
    // What is allocated for `region` stored inside a loop nest: its innermost extent padded to
    // storage_padding(region).
    Region stored_region(Region region) const;
    // Grows `region`, the part of the Func its consumers need, by what its update stages read of
    // it (the pure definition computes that too) and, with `writes`, what they write (Halide
    // allocates that as well). Updates loop over `region` as given.
    void add_update_footprints(Region &region, bool writes) const;
};

// Whether a consumer stage reads a producer at all, for concrete loop bounds. A stage that reads
// it only under select conditions (a concat reads each input for some channels) may not read it
// in a given iteration of a loop nest, and Halide 14's skip-stages pass then skips the
// producer's production there (not its allocation). Like that pass, a select's condition picks
// a branch only where it cannot vary: every loop it reads has one iteration, and it reads no
// Func; otherwise either branch may run. Default-constructed: read unconditionally.
class UseCondition {
public:
    UseCondition() = default;
    // The condition under which `exprs` (a stage's values, arguments and predicate, estimates
    // substituted) call `producer`; `loops` are the stage's, innermost first.
    static UseCondition of(const std::vector<Halide::Expr> &exprs, const std::string &producer,
                           const std::vector<Loop> &loops);
    // For concrete loop bounds of the stage, innermost first.
    bool eval(const Region &loop_bounds) const;
    bool unconditional() const { return !root_; }

    struct Node;

private:
    std::shared_ptr<const Node> root_; // null: always read
};

struct Edge {
    int producer = -1, consumer_node = -1, consumer_stage = -1;
    int calls = 0;    // call sites in the consumer stage, less repeats (Jacobian::repeat)
    UseCondition use; // whether the stage reads the producer at all (select conditions)
    // Per producer dimension, the required [min, max] over all call sites.
    SymbolicRegion region;
    std::vector<Jacobian> jacobians; // per call site, repeats included
    // The producer region needed for concrete consumer loop bounds (innermost first). The
    // second form reuses `out`'s storage: no allocation in the search's hot loop once it is sized.
    Region required(const Region &consumer_loop_bounds) const;
    void required(const Region &consumer_loop_bounds, Region &out) const;
};

// An expression as Halide prints it (for error messages and dumps).
std::string expr_text(const Halide::Expr &e);

class FunctionDAG {
public:
    // Throws UnsupportedPipeline where the pipeline cannot be modelled.
    static FunctionDAG build(const Halide::Pipeline &pipeline);

    std::vector<Node> nodes; // consumers before producers: outputs first, inputs last
    std::vector<Edge> edges;
    Halide::Pipeline pipeline; // the one it was built from (apply() guards its code generation)

    int node_index(const std::string &name) const; // -1 if absent
    std::string describe() const;                  // a readable dump, for debugging and golden tests
};

// A Func or stage name without the counters Halide adds to keep names unique within a process:
// "$N" suffixes ("s1_boundary$10.update(0)" -> "s1_boundary.update(0)") and the number of the
// anonymous Funcs it names "lambda_N" (BoundaryConditions makes them). The same pipeline built
// in another process, or after other pipelines, gets other counters.
std::string stable_name(const std::string &name);

// The cost of one call of the pure extern math function `name` ("tanh_f32", "sin_f64", ...)
// relative to sinf, where Halide 14 leaves it to the C math library, once per lane; 0 for the
// functions it computes with vector code of its own (exp, log, pow, erf, sqrt, floor, ...) and
// for names it does not know. Measured by bench-math-calls.
double library_call_cost(const std::string &name);
// An integer division or modulo by a value known only at run time (a mirrored coordinate's
// `% (2 * extent)`), or of 64-bit lanes by a constant other than a power of two (an int64
// interpolation's rounding `/ 3`), in sinf-equivalents: x86 has no vector integer division, nor
// a 64-bit vector multiply-high to divide by a constant, so LLVM divides lane by lane (int64 / 3:
// 0.21-0.36 of a sinf). bench-math-calls on an AMD EPYC (AVX-512), three runs: 1.0-1.7 ns a point
// (uint8 0.42-0.54 of sin's, int32 0.53-0.82), where a division by a constant (a multiply and
// shifts) costs 0.08 ns. In a Func it overlaps with the lanes' other work (a mirrored read is a
// gather too), so it counts 0.25: of 0, 0.25, 0.5 and 1, the value under which the manual model
// ranks the two training corpora calibrate-2000 and train-3000 better (pairwise, regret) and
// keeps their R² (0.773 -> 0.795, 0.863 -> 0.860; at 0.5 train-3000's fell to 0.844).
inline constexpr double kRuntimeDivisionCost = 0.25;

} // namespace schedforge::featurize
