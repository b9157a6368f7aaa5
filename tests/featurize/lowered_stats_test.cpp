// The lowering oracle on hand-scheduled small pipelines whose counts are derived by hand in the
// comments, and on hand-built Stmts for the interpreter's corner cases (intrinsics, unknowns).
#include "featurize/lowered_stats.h"
#include "runner/host_target.h"
#include "tests/featurize/fixtures.h"

#include <gtest/gtest.h>

namespace schedforge::featurize {
namespace {

using namespace Halide;
using namespace Halide::Internal;

// Halide makes Func names unique per process ("in_im$2"): the DAG's name for what the test wrote.
std::string name_of(const FunctionDAG &dag, const std::string &base) {
    for (const Node &n : dag.nodes) {
        if (n.name.substr(0, n.name.find('$')) == base) return n.name;
    }
    ADD_FAILURE() << "no node " << base << "\n" << dag.describe();
    return base;
}

// The DAG is built before scheduling: FunctionDAG models the algorithm, with its default loops.
FunctionDAG dag_of(const Func &out) { return FunctionDAG::build(Pipeline(out)); }

// The host target keeps its vector features: every vector width below comes from the schedule.
LoweredStats measure(const Func &out, const FunctionDAG &dag, const LoweredStatsOptions &options = {}) {
    return measure_lowered(Pipeline(out), dag, runner::host_target(), options);
}

// A separable 3x3 blur: in (100x80 uint16) -> blur_x -> blur_y (estimated 64x48). blur_y needs
// blur_x over 64 x [-1, 48], i.e. 64x50 points.
struct Blur : testing::BlurPipeline {
    Var yo{"yo"}, yi{"yi"};
    FunctionDAG dag = dag_of(by);
};

TEST(LoweredStats, SymbolsComeFromTheEstimates) {
    Blur b;
    Pipeline p(b.by);
    const auto symbols = estimate_symbols(p, FunctionDAG::build(p));
    // Inputs: their own estimates (100x80), as FunctionDAG substitutes them, with dense strides.
    EXPECT_EQ(symbols.at("in.min.0"), 0);
    EXPECT_EQ(symbols.at("in.extent.0"), 100);
    EXPECT_EQ(symbols.at("in.stride.1"), 100);
    EXPECT_EQ(symbols.at("in.extent.1"), 80);
    // The output: its estimated region.
    EXPECT_EQ(symbols.at(b.by.name() + ".extent.0"), 64);
    EXPECT_EQ(symbols.at(b.by.name() + ".extent.1"), 48);
    EXPECT_EQ(symbols.at(b.by.name() + ".stride.1"), 64);
}

TEST(LoweredStats, ComputeRootIsRealizedAndProducedOnce) {
    Blur b;
    b.bx.compute_root();
    const LoweredStats s = measure(b.by, b.dag);
    const LoweredFuncStats &bx = s.func(b.bx.name());
    EXPECT_EQ(bx.num_realizations, 1) << s.describe();
    EXPECT_EQ(bx.num_productions, 1);
    EXPECT_EQ(bx.bytes_at_realization, 64 * 50 * 2); // 64x50 uint16
    EXPECT_EQ(bx.outer_parallelism, 1);
    EXPECT_TRUE(bx.unknown.empty()) << s.describe();
    EXPECT_EQ(s.stage(b.bx.name(), 0).points_computed_total, 64 * 50);
    EXPECT_EQ(s.stage(b.bx.name(), 0).vector_size, 1);
    EXPECT_EQ(s.stage(b.bx.name(), 0).inner_parallelism, 1);
    // The output: one buffer of 64x48 uint16, given by the caller.
    const LoweredFuncStats &by = s.func(b.by.name());
    EXPECT_TRUE(by.is_output);
    EXPECT_EQ(by.num_realizations, 1);
    EXPECT_EQ(by.num_productions, 1);
    EXPECT_EQ(by.bytes_at_realization, 64 * 48 * 2);
    EXPECT_EQ(s.stage(b.by.name(), 0).points_computed_total, 64 * 48);
    // The input's wrapper Func is inlined: never realized nor produced.
    const LoweredFuncStats &in_im = s.func(name_of(b.dag, "in_im"));
    EXPECT_EQ(in_im.num_realizations, 0);
    EXPECT_EQ(in_im.num_productions, 0);
    EXPECT_EQ(in_im.outer_parallelism, 0);
    // Loops: blur_x's rows run once over 50 rows, 64 columns each.
    const LoweredLoopStats &rows = s.loops.at(b.bx.name() + ".s0.y");
    EXPECT_EQ(rows.instances, 1);
    EXPECT_EQ(rows.iterations, 50);
    EXPECT_EQ(s.loops.at(b.bx.name() + ".s0.x").iterations, 64 * 50);
    EXPECT_TRUE(s.approximated_loops.empty());
}

TEST(LoweredStats, ComputeAtATileRealizesOncePerTile) {
    Blur b;
    b.by.split(b.y, b.yo, b.yi, 8);
    b.bx.compute_at(b.by, b.yo);
    const LoweredStats s = measure(b.by, b.dag);
    // 48 rows in tiles of 8: 6 tiles, each needing blur_x over 64 x (8 + 2) points.
    const LoweredFuncStats &bx = s.func(b.bx.name());
    EXPECT_EQ(bx.num_realizations, 6) << s.describe();
    EXPECT_EQ(bx.num_productions, 6);
    EXPECT_EQ(bx.bytes_at_realization, 64 * 10 * 2);
    EXPECT_EQ(s.stage(b.bx.name(), 0).points_computed_total, 6 * 64 * 10);
    EXPECT_EQ(s.stage(b.by.name(), 0).points_computed_total, 64 * 48);
    EXPECT_EQ(s.loops.at(b.by.name() + ".s0.y.yo").iterations, 6);
    EXPECT_EQ(s.loops.at(b.bx.name() + ".s0.y").instances, 6);
    EXPECT_EQ(s.loops.at(b.bx.name() + ".s0.y").max_extent, 10);
}

TEST(LoweredStats, StoreRootComputeAtSlidesTheWindow) {
    Blur b;
    b.by.split(b.y, b.yo, b.yi, 8);
    b.bx.store_root().compute_at(b.by, b.yo);
    const LoweredStats s = measure(b.by, b.dag);
    // One allocation, six productions. Halide's sliding window computes each of the 50 rows once:
    // 10 rows in the first tile, then the 8 new ones in each of the other five.
    const LoweredFuncStats &bx = s.func(b.bx.name());
    EXPECT_EQ(bx.num_realizations, 1) << s.describe();
    EXPECT_EQ(bx.num_productions, 6);
    EXPECT_EQ(s.stage(b.bx.name(), 0).points_computed_total, 64 * 50) << s.stmt;
    // Halide 14 does not fold this storage: all 64x50 rows stay allocated.
    EXPECT_EQ(bx.bytes_at_realization, 64 * 50 * 2) << s.stmt;
    // The row loop's extent changes after the first tile, so the tile loop was iterated exactly.
    EXPECT_EQ(s.loops.at(b.bx.name() + ".s0.y").iterations, 50);
    EXPECT_EQ(s.loops.at(b.bx.name() + ".s0.y").max_extent, 10);
    EXPECT_TRUE(s.approximated_loops.empty());
}

TEST(LoweredStats, SpentIterationBudgetFallsBackToTheFirstIteration) {
    Blur b;
    b.by.split(b.y, b.yo, b.yi, 8);
    b.bx.store_root().compute_at(b.by, b.yo);
    LoweredStatsOptions options;
    options.max_exact_iterations = 1;
    const LoweredStats s = measure(b.by, b.dag, options);
    // Measured on the first tile only (10 rows) and taken 6 times: 60 rows instead of 50.
    EXPECT_EQ(s.stage(b.bx.name(), 0).points_computed_total, 64 * 60) << s.describe();
    EXPECT_EQ(s.approximated_loops, std::vector<std::string>{b.by.name() + ".s0.y.yo"});
}

TEST(LoweredStats, VectorWidthComesFromTheSchedule) {
    Blur b;
    b.by.split(b.y, b.yo, b.yi, 8).vectorize(b.x, 8);
    b.bx.compute_at(b.by, b.yo).vectorize(b.x, 16);
    const LoweredStats s = measure(b.by, b.dag);
    EXPECT_EQ(s.stage(b.by.name(), 0).vector_size, 8) << s.describe();
    EXPECT_EQ(s.stage(b.bx.name(), 0).vector_size, 16);
    // Lanes count as points: 64/8 vectors of 8 per row.
    EXPECT_EQ(s.stage(b.by.name(), 0).points_computed_total, 64 * 48);
    EXPECT_EQ(s.stage(b.bx.name(), 0).points_computed_total, 6 * 64 * 10);
    // The vectorized loop is gone from the lowered code; its outer part remains.
    EXPECT_EQ(s.loops.count(b.by.name() + ".s0.x.v"), 0u);
    EXPECT_EQ(s.loops.at(b.by.name() + ".s0.x.x").max_extent, 64 / 8);
}

TEST(LoweredStats, ParallelTilesGiveOuterAndInnerParallelism) {
    Blur b;
    b.by.split(b.y, b.yo, b.yi, 8).parallel(b.yo);
    b.bx.compute_at(b.by, b.yo);
    const LoweredStats s = measure(b.by, b.dag);
    // blur_x is produced inside the 6 parallel tiles of blur_y.
    EXPECT_EQ(s.func(b.bx.name()).outer_parallelism, 6) << s.describe();
    EXPECT_EQ(s.stage(b.bx.name(), 0).inner_parallelism, 1);
    // blur_y's production encloses its own parallel loop.
    EXPECT_EQ(s.func(b.by.name()).outer_parallelism, 1);
    EXPECT_EQ(s.stage(b.by.name(), 0).inner_parallelism, 6);
    EXPECT_EQ(s.loops.at(b.by.name() + ".s0.y.yo").type, ForType::Parallel);
    EXPECT_EQ(s.func(b.bx.name()).num_realizations, 6);
}

TEST(LoweredStats, NestedParallelLoopsMultiply) {
    Blur b;
    Var xo("xo"), xi("xi");
    // 48/8 row tiles x 64/16 column tiles, both parallel: 24-way inside blur_y's production.
    b.by.split(b.y, b.yo, b.yi, 8).split(b.x, xo, xi, 16).reorder(xi, b.yi, xo, b.yo).parallel(b.yo).parallel(xo);
    b.bx.compute_at(b.by, xo);
    const LoweredStats s = measure(b.by, b.dag);
    EXPECT_EQ(s.stage(b.by.name(), 0).inner_parallelism, 6 * 4) << s.describe();
    EXPECT_EQ(s.func(b.bx.name()).outer_parallelism, 6 * 4);
    EXPECT_EQ(s.func(b.bx.name()).num_realizations, 24);
    EXPECT_EQ(s.func(b.bx.name()).bytes_at_realization, 16 * 10 * 2);
}

TEST(LoweredStats, UnrolledLoopsAreExpandedInTheLoweredCode) {
    Blur b;
    Var xo("xo"), xi("xi");
    b.bx.compute_root().split(b.x, xo, xi, 4).unroll(xi);
    const LoweredStats s = measure(b.by, b.dag);
    // 64 columns as 16 steps of 4 unrolled stores, on each of 50 rows.
    EXPECT_EQ(s.loops.count(b.bx.name() + ".s0.x.xi"), 0u) << s.describe();
    EXPECT_EQ(s.loops.at(b.bx.name() + ".s0.x.xo").max_extent, 16);
    EXPECT_EQ(s.loops.at(b.bx.name() + ".s0.x.xo").iterations, 16 * 50);
    EXPECT_EQ(s.stage(b.bx.name(), 0).points_computed_total, 64 * 50);
    EXPECT_EQ(s.stage(b.bx.name(), 0).vector_size, 1);
}

// matmul: prod(x, y) = sum_k a(k, y) * b(x, k) over k in [0, 16), output 32x32.
struct Matmul : testing::MatmulPipeline {
    Var xi{"xi"}, yi{"yi"};
    FunctionDAG dag = dag_of(out);
};

TEST(LoweredStats, MatmulUpdateStageCountsItsReductionDomain) {
    Matmul m;
    m.prod.compute_root();
    const LoweredStats s = measure(m.out, m.dag);
    const LoweredFuncStats &prod = s.func(m.prod.name());
    EXPECT_EQ(prod.num_realizations, 1) << s.describe();
    EXPECT_EQ(prod.num_productions, 1);
    EXPECT_EQ(prod.bytes_at_realization, 32 * 32 * 4);
    EXPECT_EQ(s.stage(m.prod.name(), 0).points_computed_total, 32 * 32);
    // The update stores every (x, y) once per k: 32 * 32 * 16, its k loop (a.extent.0 = 16 from
    // the estimate) starting once per (x, y).
    EXPECT_EQ(s.stage(m.prod.name(), 1).points_computed_total, 32 * 32 * 16);
    const LoweredLoopStats &k = s.loops.at(m.prod.name() + ".s1.k$x");
    EXPECT_EQ(k.instances, 32 * 32);
    EXPECT_EQ(k.iterations, 32 * 32 * 16);
    EXPECT_EQ(s.stages.at(m.prod.name() + ".update(0)").index, 1);
}

TEST(LoweredStats, MatmulTiledWithVectorizedAndUnrolledStages) {
    Matmul m;
    m.out.tile(m.x, m.y, m.xi, m.yi, 8, 4).vectorize(m.xi).parallel(m.y);
    // In each 8x4 tile: the pure stage becomes 4 loop-less vector stores (x vectorized, y
    // unrolled); the update keeps its k loop around 8-wide stores, unrolled over y.
    m.prod.compute_at(m.out, m.x).vectorize(m.x).unroll(m.y);
    m.prod.update().vectorize(m.x).unroll(m.y);
    const LoweredStats s = measure(m.out, m.dag);
    const LoweredFuncStats &prod = s.func(m.prod.name());
    // 32x32 in 8x4 tiles: 4 x 8 = 32 realizations of 8x4 floats.
    EXPECT_EQ(prod.num_realizations, 32) << s.describe();
    EXPECT_EQ(prod.num_productions, 32);
    EXPECT_EQ(prod.bytes_at_realization, 8 * 4 * 4);
    // Inside the 8 parallel rows of tiles.
    EXPECT_EQ(prod.outer_parallelism, 8);
    EXPECT_EQ(s.stage(m.prod.name(), 0).points_computed_total, 32 * 32);
    EXPECT_EQ(s.stage(m.prod.name(), 0).vector_size, 8);
    EXPECT_EQ(s.stage(m.prod.name(), 1).points_computed_total, 32 * 32 * 16);
    EXPECT_EQ(s.stage(m.prod.name(), 1).vector_size, 8);
    EXPECT_EQ(s.stage(m.out.name(), 0).inner_parallelism, 8);
    EXPECT_EQ(s.stage(m.out.name(), 0).vector_size, 8);
}

// Halide allocates blur_x with halide_malloc per tile when its size follows the output's
// run-time width (x left whole), on the stack when each tile's is the same constant.
TEST(LoweredStats, AllocationsSizedAtRunTimeComeFromTheHeap) {
    {
        Blur b;
        b.by.split(b.y, b.yo, b.yi, 8);
        b.bx.compute_at(b.by, b.yo);
        const LoweredStats s = measure(b.by, b.dag);
        EXPECT_EQ(s.func(b.bx.name()).num_realizations, 6) << s.describe();
        EXPECT_EQ(s.func(b.bx.name()).heap_realizations, 6) << s.stmt;
        EXPECT_EQ(s.func(b.by.name()).heap_realizations, 0); // the output: the caller's buffer
    }
    {
        Blur b;
        Var xo("xo"), xi("xi");
        b.by.tile(b.x, b.y, xo, b.yo, xi, b.yi, 16, 8, TailStrategy::ShiftInwards);
        b.bx.compute_at(b.by, xo);
        const LoweredStats s = measure(b.by, b.dag);
        EXPECT_EQ(s.func(b.bx.name()).num_realizations, 4 * 6) << s.describe();
        EXPECT_EQ(s.func(b.bx.name()).bytes_at_realization, 16 * 10 * 2);
        EXPECT_EQ(s.func(b.bx.name()).heap_realizations, 0) << s.stmt;
    }
}

TEST(LoweredStats, GuardWithIfTailsAreCountedExactly) {
    ImageParam in(Int(32), 1, "in");
    Var x("x"), xo("xo"), xi("xi");
    Func f("f"), h("h");
    f(x) = in(x)*2;
    h(x) = f(x) + 1;
    in.set_estimates({{0, 100}});
    h.set_estimates({{0, 30}});
    const FunctionDAG dag = dag_of(h);
    // 30 points in steps of 8: 3 whole steps, then a tail of 6. Halide peels the tail off as a
    // loop of 6 (scalar) or as one store predicated to 6 of its 8 lanes (vectorized).
    f.compute_root().split(x, xo, xi, 8, TailStrategy::GuardWithIf);
    h.split(x, xo, xi, 8, TailStrategy::GuardWithIf).vectorize(xi);
    const LoweredStats s = measure(h, dag);
    EXPECT_EQ(s.stage(f.name(), 0).points_computed_total, 30) << s.describe() << s.stmt;
    EXPECT_EQ(s.stage(h.name(), 0).points_computed_total, 30);
    EXPECT_EQ(s.stage(h.name(), 0).vector_size, 8);
    EXPECT_EQ(s.loops.at(f.name() + ".s0.x.xi").iterations, 30);
    EXPECT_EQ(s.loops.at(f.name() + ".s0.x.xi").instances, 3 + 1);
    EXPECT_TRUE(s.approximated_loops.empty());
}

TEST(LoweredStats, ScalarParamsBindToTheirEstimates) {
    ImageParam in(Float(32), 1, "in");
    Param<int> taps("taps");
    taps.set_estimate(5);
    Var x("x");
    RDom r(0, taps, "r");
    Func acc("acc"), out("out");
    acc(x) = 0.0f;
    acc(x) += in(x + r);
    out(x) = acc(x);
    in.set_estimates({{0, 64}});
    out.set_estimates({{0, 40}});
    const FunctionDAG dag = dag_of(out);
    acc.compute_root();
    const LoweredStats s = measure(out, dag);
    // 40 points, 5 taps each.
    EXPECT_EQ(s.stage(acc.name(), 1).points_computed_total, 40 * 5) << s.describe();
    EXPECT_EQ(s.loops.at(acc.name() + ".s1.r$x").max_extent, 5);
}

TEST(LoweredStats, TupleFuncsCountPointsOnceAndBytesPerElement) {
    ImageParam in(Int(16), 1, "in");
    Var x("x");
    Func f("f"), out("out");
    f(x) = {in(x), cast<float>(in(x))};
    out(x) = f(x)[0] + cast<int16_t>(f(x)[1]);
    in.set_estimates({{0, 50}});
    out.set_estimates({{0, 50}});
    const FunctionDAG dag = dag_of(out);
    f.compute_root();
    const LoweredStats s = measure(out, dag);
    const LoweredFuncStats &ff = s.func(f.name());
    EXPECT_EQ(ff.num_realizations, 1) << s.describe();
    EXPECT_EQ(ff.bytes_at_realization, 50 * (2 + 4)); // int16 and float32 side by side
    EXPECT_EQ(s.stage(f.name(), 0).points_computed_total, 50);
}

// ---- hand-built Stmts ----

// A one-Func DAG to name things by: f(x) = in(x), estimated over 100 points.
struct OneFunc {
    ImageParam in{Int(32), 1, "in"};
    Var x{"x"};
    Func f{"f"};
    FunctionDAG dag;
    OneFunc() {
        f(x) = in(x);
        in.set_estimates({{0, 100}});
        f.set_estimates({{0, 100}});
        dag = dag_of(f);
    }
    Stmt store(int lanes = 1) const {
        return Store::make(f.name(), make_const(Int(32, lanes), 1), lanes == 1 ? Expr(0) : Ramp::make(0, 1, lanes),
                           Parameter(), const_true(lanes), ModulusRemainder());
    }
    Stmt loop(const Expr &extent, const Stmt &body) const {
        return For::make(f.name() + ".s0.x", 0, extent, ForType::Serial, DeviceAPI::None, body);
    }
    Stmt produce(const Stmt &body) const { return ProducerConsumer::make_produce(f.name(), body); }
};

TEST(LoweredStats, InterpreterHandlesHalideIntrinsics) {
    OneFunc t;
    const Expr n = Variable::make(Int(32), "n");
    // likely(min(n, 9)) = 9; promise_clamped(17 / 4) = 4 (Euclidean); -7 % 4 = 1 (Euclidean);
    // select(n > 5, 2, 3) = 2; with n = 12: 9 + 4 + 1 + 2 = 16.
    const Expr extent = Call::make(Int(32), Call::likely, {min(n, 9)}, Call::PureIntrinsic) +
                        Call::make(Int(32), Call::promise_clamped, {Expr(17) / Expr(4), 0, 10}, Call::PureIntrinsic) +
                        Expr(-7) % Expr(4) + select(n > 5, 2, 3);
    const Stmt s = t.produce(t.loop(extent, t.store()));
    const LoweredStats r = measure_stmt(s, t.dag, {{"n", 12}});
    EXPECT_EQ(r.loops.at(t.f.name() + ".s0.x").max_extent, 16) << r.describe();
    EXPECT_EQ(r.stage(t.f.name(), 0).points_computed_total, 16);
    EXPECT_EQ(r.func(t.f.name()).num_productions, 1);
    EXPECT_TRUE(r.stage(t.f.name(), 0).unknown.empty());
}

TEST(LoweredStats, LetsAndBufferQueriesAreBound) {
    OneFunc t;
    // let e = _halide_buffer_get_extent(f.buffer, 0) in a loop of e / 2 iterations, in a branch
    // taken unless this is a bounds query.
    const Expr buf = Variable::make(type_of<struct halide_buffer_t *>(), t.f.name() + ".buffer");
    const Expr e = Variable::make(Int(32), "e");
    const Expr query = Call::make(Bool(), Call::buffer_is_bounds_query, {buf}, Call::Extern);
    const Stmt body = LetStmt::make("e", Call::make(Int(32), Call::buffer_get_extent, {buf, 0}, Call::Extern),
                                    IfThenElse::make(!query, t.produce(t.loop(e / 2, t.store(4)))));
    const LoweredStats r = measure_stmt(body, t.dag, {{t.f.name() + ".extent.0", 100}});
    // 50 iterations of a 4-lane store.
    EXPECT_EQ(r.stage(t.f.name(), 0).points_computed_total, 200) << r.describe();
    EXPECT_EQ(r.stage(t.f.name(), 0).vector_size, 4);
}

TEST(LoweredStats, BufferQueriesReadBakedInBuffers) {
    OneFunc t;
    // A Buffer baked into the pipeline answers queries on itself: extent 12, min 3.
    Buffer<int> lut(12, "lut");
    lut.set_min(3);
    const Expr buf = Variable::make(type_of<struct halide_buffer_t *>(), "lut.buffer", lut);
    const Expr extent = Call::make(Int(32), Call::buffer_get_extent, {buf, 0}, Call::Extern) +
                        Call::make(Int(32), Call::buffer_get_max, {buf, 0}, Call::Extern);
    const LoweredStats r = measure_stmt(t.produce(t.loop(extent, t.store())), t.dag, {});
    // 12 + (3 + 12 - 1) = 26.
    EXPECT_EQ(r.stage(t.f.name(), 0).points_computed_total, 26) << r.describe();
}

TEST(LoweredStats, DataDependentBoundsMarkMeasurementsUnknown) {
    OneFunc t;
    // A loop whose extent reads memory: its points cannot be counted, and say why.
    const Expr loaded = Load::make(Int(32), "in", 0, Buffer<>(), Parameter(), const_true(), ModulusRemainder());
    const Stmt s = t.produce(t.loop(loaded, t.store()));
    const LoweredStats r = measure_stmt(s, t.dag, {});
    const LoweredStageStats &st = r.stage(t.f.name(), 0);
    EXPECT_FALSE(st.known("points_computed_total")) << r.describe();
    EXPECT_NE(st.unknown.at("points_computed_total").find("reads memory"), std::string::npos);
    EXPECT_FALSE(r.loops.at(t.f.name() + ".s0.x").unknown.empty());
    // The production itself is outside the loop: still counted.
    EXPECT_TRUE(r.func(t.f.name()).known("num_productions"));
    EXPECT_EQ(r.func(t.f.name()).num_productions, 1);
}

TEST(LoweredStats, UnboundSymbolsInConditionsMarkBothBranchesUnknown) {
    OneFunc t;
    const Expr mystery = Variable::make(Int(32), "mystery");
    const Stmt alloc =
        Allocate::make(t.f.name(), Int(32), MemoryType::Auto, {Expr(10)}, const_true(), t.produce(t.store()));
    const Stmt s = IfThenElse::make(mystery > 0, alloc, t.produce(t.store()));
    const LoweredStats r = measure_stmt(s, t.dag, {});
    const LoweredFuncStats &f = r.func(t.f.name());
    EXPECT_FALSE(f.known("num_productions")) << r.describe();
    EXPECT_FALSE(f.known("num_realizations"));
    EXPECT_NE(f.unknown.at("num_realizations").find("'mystery' has no binding"), std::string::npos);
    EXPECT_FALSE(r.stage(t.f.name(), 0).known("points_computed_total"));
}

TEST(LoweredStats, LookupsOfMissingNamesThrow) {
    OneFunc t;
    const LoweredStats r = measure_stmt(t.produce(t.store()), t.dag, {});
    EXPECT_THROW(r.func("nope"), std::out_of_range);
    EXPECT_THROW(r.stage(t.f.name(), 1), std::out_of_range);
    EXPECT_EQ(r.stage(t.f.name(), 0).points_computed_total, 1);
}

} // namespace
} // namespace schedforge::featurize
