// LoopNest legality and bounds, and golden schedule features on fixed pipelines: every expected
// value is derived by hand in the comments beside it.
#include "featurize/glibc_heap.h"
#include "featurize/loop_nest.h"
#include "featurize/schedule_features.h"
#include "tests/featurize/fixtures.h"

#include <gtest/gtest.h>

#include <set>

namespace schedforge::featurize {
namespace {

using namespace Halide;

// AVX2: 32-byte vectors, so 16 x uint16 and 8 x float.
const Target kAvx2("x86-64-linux-sse41-avx-avx2-fma-f16c");

using testing::base;

int node_of(const FunctionDAG &dag, const std::string &name) {
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        if (base(dag.nodes[i].name) == name) return int(i);
    }
    ADD_FAILURE() << "no node " << name;
    return 0;
}

const ScheduleFeatures &features(const std::vector<StageFeatures> &all, int node, int stage = 0) {
    for (const StageFeatures &f : all) {
        if (f.node == node && f.stage == stage) return f.features;
    }
    ADD_FAILURE() << "no stage " << node << "." << stage;
    static const ScheduleFeatures none;
    return none;
}

// blur_y(x, y) = sum of blur_x(x, y - 1 .. y + 1); blur_x(x, y) = sum of in(x - 1 .. x + 1, y);
// uint16, blur_y estimated 64 x 48. Nodes: blur_y, blur_x, in_im (the ImageParam's wrapper), in.
struct Blur : testing::BlurPipeline {
    FunctionDAG dag;
    int blur_y, blur_x, in_im;
    Blur() {
        dag = FunctionDAG::build(Pipeline(by));
        blur_y = node_of(dag, "blur_y");
        blur_x = node_of(dag, "blur_x");
        in_im = node_of(dag, "in_im");
    }
    // blur_y at root in parallel 32 x 8 tiles, 16-wide vectors along x; blur_x per tile of
    // blur_y, vectorized the same way; in_im inlined.
    LoopNest tiled() const {
        LoopNest n(dag);
        n.funcs[size_t(blur_y)] = {Site::root(), Site::root(), {{{{32, 8}}, 0, 16, true, false}}};
        n.funcs[size_t(blur_x)] = {Site::at({blur_y, 0}, 0), Site::at({blur_y, 0}, 0), {{{}, 0, 16, false, false}}};
        n.funcs[size_t(in_im)] = {Site::inlined(), Site::inlined(), {}};
        return n;
    }
};

TEST(ScheduleFeatures, NamesAreTheThirtyNineOfTheSourcePaperThenOurs) {
    EXPECT_EQ(ScheduleFeatures::num_features(), 46);
    const std::vector<std::string> &names = ScheduleFeatures::names();
    ASSERT_EQ(names.size(), 46u);
    EXPECT_EQ(ScheduleFeatures::descriptions().size(), 46u);
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), 46u);
    EXPECT_EQ(names.front(), "num_realizations");
    EXPECT_EQ(names[21], "vector_size");
    EXPECT_EQ(names[38], "working_set_at_root");
    EXPECT_EQ(names[39], "bytes_read_past_cache");
    EXPECT_EQ(names[40], "bytes_read_from_memory");
    EXPECT_EQ(names[41], "library_calls");
    EXPECT_EQ(names[42], "accumulator_bytes_spilled");
    EXPECT_EQ(names[43], "heap_realizations");
    EXPECT_EQ(names[44], "heap_bytes_refaulted");
    EXPECT_EQ(names.back(), "tlb_pages_rewalked");
    EXPECT_EQ(ScheduleFeatures::version(), 20);
    ScheduleFeatures f;
    f.vector_size = 8;
    EXPECT_EQ(f.values()[21], 8);
}

TEST(LoopNest, ValidateAcceptsLegalAndExplainsIllegalSchedules) {
    Blur b;
    const LoopNest good = b.tiled();
    EXPECT_EQ(good.validate(b.dag), "");
    EXPECT_TRUE(good.complete(b.dag));

    LoopNest partial(b.dag);
    partial.funcs[size_t(b.blur_y)] = good.funcs[size_t(b.blur_y)];
    EXPECT_EQ(partial.validate(b.dag), "");
    EXPECT_FALSE(partial.complete(b.dag));

    LoopNest producer_first(b.dag);
    producer_first.funcs[size_t(b.blur_x)] = {Site::root(), Site::root(), {{}}};
    EXPECT_NE(producer_first.validate(b.dag).find("before its consumer"), std::string::npos);

    LoopNest bad = good;
    bad.funcs[size_t(b.blur_y)].compute = bad.funcs[size_t(b.blur_y)].store = Site::inlined();
    EXPECT_NE(bad.validate(b.dag).find("cannot be inlined"), std::string::npos); // the output

    bad = good;
    bad.funcs[size_t(b.blur_x)].compute = bad.funcs[size_t(b.blur_x)].store = Site::at({b.blur_y, 0}, 1);
    EXPECT_NE(bad.validate(b.dag).find("tiling level that does not exist"), std::string::npos);

    bad = good;
    bad.funcs[size_t(b.blur_x)].store = Site::at({b.blur_y, 0}, 0);
    bad.funcs[size_t(b.blur_x)].compute = Site::root();
    EXPECT_NE(bad.validate(b.dag).find("stored inside a loop"), std::string::npos);

    bad = good;
    bad.funcs[size_t(b.blur_y)].stages[0].tiles.push_back({64, 4}); // 64 > 32: not nested
    EXPECT_NE(bad.validate(b.dag).find("must nest"), std::string::npos);

    bad = good;
    bad.funcs[size_t(b.blur_x)].stages[0].parallel = true;
    EXPECT_NE(bad.validate(b.dag).find("only Funcs at root"), std::string::npos);
}

TEST(LoopNest, LegalComputeSitesSeeEveryReader) {
    Blur b;
    LoopNest n = b.tiled();
    n.funcs[size_t(b.blur_x)] = {};
    // blur_y has one tiling level: root, or per 32 x 8 tile.
    const std::vector<Site> sites = legal_compute_sites(b.dag, n, b.blur_x);
    ASSERT_EQ(sites.size(), 2u);
    EXPECT_EQ(sites[0], Site::root());
    EXPECT_EQ(sites[1], Site::at({b.blur_y, 0}, 0));
    EXPECT_EQ(legal_compute_sites(b.dag, n, b.blur_y).size(), 1u); // the output: root only
}

TEST(LoopNest, BoundsFollowTheTiling) {
    Blur b;
    const LoopNest n = b.tiled();
    LoopNestBounds bounds(b.dag, n);
    // Per 32 x 8 tile of blur_y, blur_x needs one more row above and below. Sites are sized by
    // their middle tile: of 2 x 6 tiles, column 0 (x 0..31) and row 2 (y 16..23).
    EXPECT_EQ(bounds.region(b.blur_x, Site::at({b.blur_y, 0}, 0)), (Region{{0, 31}, {15, 24}}));
    EXPECT_EQ(bounds.tile_bounds({b.blur_y, 0}, 0), (Region{{0, 31}, {16, 23}}));
    // The point level: the middle vector of that tile's 2 (x 0..15), one row (3 of 8: y 19).
    EXPECT_EQ(bounds.tile_bounds({b.blur_y, 0}, 1), (Region{{0, 15}, {19, 19}}));
    EXPECT_EQ(bounds.trips({b.blur_y, 0}, 0, 0), 2); // 64 / 32
    EXPECT_EQ(bounds.trips({b.blur_y, 0}, 0, 1), 6); // 48 / 8
    EXPECT_EQ(bounds.trips({b.blur_y, 0}, 1, 0), 2); // 32 / 16-wide vectors
    EXPECT_EQ(bounds.iterations(Site::at({b.blur_y, 0}, 0)), 12);
    EXPECT_EQ(bounds.points_per_production({b.blur_x, 0}), 320); // 32 x 10
    // Tile classes: x has a first and a last tile; y's 6 tiles are the two at each end and 2
    // interior ones, which the middle one stands for.
    const auto classes = bounds.tile_classes({b.blur_y, 0}, 0);
    ASSERT_EQ(classes.size(), 2u);
    ASSERT_EQ(classes[0].size(), 2u);
    EXPECT_EQ(classes[0][0].span, (Span{0, 31}));
    EXPECT_EQ(classes[0][1].span, (Span{32, 63}));
    ASSERT_EQ(classes[1].size(), 5u);
    EXPECT_EQ(classes[1][0].span, (Span{0, 7}));
    EXPECT_EQ(classes[1][1].span, (Span{8, 15}));
    EXPECT_EQ(classes[1][2].span, (Span{16, 23}));
    EXPECT_EQ(classes[1][2].count, 2);
    EXPECT_EQ(classes[1][3].span, (Span{32, 39}));
    EXPECT_EQ(classes[1][4].span, (Span{40, 47}));
}

TEST(LoopNest, ShiftedTailsEndAtTheRegionsEdge) {
    Blur b;
    LoopNest n = b.tiled();
    // 64 columns in tiles of 24: blur_y reads no input, so its last tile shifts inwards to end
    // at column 63 (40..63), overlapping the middle one.
    n.funcs[size_t(b.blur_y)].stages[0].tiles = {{24, 8}};
    LoopNestBounds bounds(b.dag, n);
    const auto classes = bounds.tile_classes({b.blur_y, 0}, 0);
    ASSERT_EQ(classes[0].size(), 3u);
    EXPECT_EQ(classes[0][0].span, (Span{0, 23}));
    EXPECT_EQ(classes[0][1].span, (Span{24, 47}));
    EXPECT_EQ(classes[0][2].span, (Span{40, 63}));
    auto tiles = [](const std::vector<LoopNestBounds::TileClass> &loop) {
        int64_t n = 0;
        for (const auto &c : loop) n += c.count;
        return n;
    };
    EXPECT_EQ(tiles(classes[0]), 3);
    EXPECT_EQ(tiles(classes[1]), 6); // 48 rows / 8
}

TEST(ScheduleFeatures, GoldenBlur) {
    Blur b;
    const std::vector<StageFeatures> all = compute_schedule_features(b.dag, b.tiled(), kAvx2);
    {
        SCOPED_TRACE("blur_y: at root, 2 x 6 parallel tiles of 32 x 8");
        const ScheduleFeatures &f = features(all, b.blur_y);
        EXPECT_EQ(f.num_realizations, 1);
        EXPECT_EQ(f.num_productions, 1);
        EXPECT_EQ(f.points_computed_per_production, 64 * 48);
        EXPECT_EQ(f.points_computed_total, 64 * 48);
        EXPECT_EQ(f.points_computed_minimum, 64 * 48);
        EXPECT_EQ(f.innermost_loop_extent, 32 * 8); // one tile
        EXPECT_EQ(f.innermost_pure_loop_extent, 32 * 8);
        EXPECT_EQ(f.unrolled_loop_extent, 1);
        EXPECT_EQ(f.inner_parallelism, 12);
        EXPECT_EQ(f.outer_parallelism, 1);
        EXPECT_EQ(f.bytes_at_realization, 64 * 48 * 2);
        EXPECT_EQ(f.bytes_at_production, 64 * 48 * 2);
        EXPECT_EQ(f.bytes_at_root, 64 * 48 * 2);
        EXPECT_EQ(f.innermost_bytes_at_realization, 64 * 2);
        EXPECT_EQ(f.inlined_calls, 0);
        // All of blur_x: 64 x 50 (a row above and below), 50 lines.
        EXPECT_EQ(f.unique_bytes_read_per_realization, 64 * 50 * 2);
        EXPECT_EQ(f.unique_lines_read_per_realization, 50);
        EXPECT_EQ(f.allocation_bytes_read_per_realization, 32 * 10 * 2); // blur_x's per-tile buffer
        EXPECT_EQ(f.vector_size, 16);
        EXPECT_EQ(f.native_vector_size, 16);
        EXPECT_EQ(f.num_vectors, 64 * 48 / 16);
        EXPECT_EQ(f.num_scalars, 0);
        // Three dense loads of blur_x per vector, nothing scalar.
        EXPECT_EQ(f.vector_loads_per_vector, 3);
        EXPECT_EQ(f.scalar_loads_per_vector, 0);
        EXPECT_EQ(f.scalar_loads_per_scalar, 3);
        EXPECT_EQ(f.unique_bytes_read_per_vector, 16 * 3 * 2); // 16 x 3 of blur_x
        EXPECT_EQ(f.unique_lines_read_per_vector, 3);
        // A task is a 32 x 8 tile: it reads 32 x 10 of blur_x and writes 32 x 8.
        EXPECT_EQ(f.unique_bytes_read_per_task, 32 * 10 * 2);
        EXPECT_EQ(f.unique_lines_read_per_task, 10);
        EXPECT_EQ(f.bytes_at_task, 32 * 8 * 2);
        EXPECT_EQ(f.innermost_bytes_at_task, 32 * 2);
        // The only temporary is blur_x's per-tile buffer.
        EXPECT_EQ(f.working_set, 640);
        EXPECT_EQ(f.working_set_at_task, 640);
        EXPECT_EQ(f.working_set_at_production, 640);
        EXPECT_EQ(f.working_set_at_realization, 640);
        EXPECT_EQ(f.working_set_at_root, 640);
    }
    {
        SCOPED_TRACE("blur_x: per tile of blur_y, 32 x 10 each");
        const ScheduleFeatures &f = features(all, b.blur_x);
        EXPECT_EQ(f.num_realizations, 12);
        EXPECT_EQ(f.num_productions, 12);
        EXPECT_EQ(f.points_computed_per_production, 32 * 10);
        EXPECT_EQ(f.points_computed_total, 12 * 320);  // recomputes 2 rows per tile
        EXPECT_EQ(f.points_computed_minimum, 64 * 50); // what blur_y needs
        EXPECT_EQ(f.innermost_loop_extent, 32 * 10);   // untiled: the whole production
        EXPECT_EQ(f.inner_parallelism, 1);
        EXPECT_EQ(f.outer_parallelism, 12);
        EXPECT_EQ(f.bytes_at_realization, 640);
        EXPECT_EQ(f.heap_realizations, 0); // the same 32 x 10 in every tile: on the stack
        EXPECT_EQ(f.bytes_at_root, 64 * 50 * 2);
        EXPECT_EQ(f.innermost_bytes_at_production, 64);
        // in (through the inlined in_im): 34 x 10 per tile; its whole buffer is 66 x 50.
        EXPECT_EQ(f.unique_bytes_read_per_realization, 34 * 10 * 2);
        EXPECT_EQ(f.unique_lines_read_per_realization, 10);
        EXPECT_EQ(f.allocation_bytes_read_per_realization, 66 * 50 * 2);
        EXPECT_EQ(f.num_vectors, 12 * 320 / 16);
        EXPECT_EQ(f.vector_loads_per_vector, 3);           // in(x - 1), in(x), in(x + 1)
        EXPECT_EQ(f.unique_bytes_read_per_vector, 18 * 2); // 18 x 1 of in
        EXPECT_EQ(f.unique_bytes_read_per_task, 34 * 10 * 2);
        EXPECT_EQ(f.bytes_at_task, 640);
        EXPECT_EQ(f.working_set, 0);
        EXPECT_EQ(f.working_set_at_task, 640);
        EXPECT_EQ(f.working_set_at_production, 640);
        EXPECT_EQ(f.working_set_at_root, 640);
    }
    {
        SCOPED_TRACE("in_im: inlined, 3 calls per point of blur_x");
        const ScheduleFeatures &f = features(all, b.in_im);
        EXPECT_EQ(f.inlined_calls, 3 * 12 * 320);
        EXPECT_EQ(f.num_realizations, 0);
        EXPECT_EQ(f.points_computed_total, 0);
        EXPECT_EQ(f.points_computed_minimum, 66 * 50);
        EXPECT_EQ(f.bytes_at_root, 66 * 50 * 2);
    }
}

TEST(ScheduleFeatures, PartialStatesFeaturizeOnlyScheduledStages) {
    Blur b;
    LoopNest n(b.dag);
    n.funcs[size_t(b.blur_y)] = b.tiled().funcs[size_t(b.blur_y)];
    const std::vector<StageFeatures> all = compute_schedule_features(b.dag, n, kAvx2);
    for (const StageFeatures &s : all) EXPECT_EQ(s.scheduled, s.node == b.blur_y) << s.node;
    const ScheduleFeatures &f = features(all, b.blur_y);
    EXPECT_EQ(f.points_computed_total, 64 * 48);
    // blur_x is unscheduled: read like an input, optimistically dense and tile-sized.
    EXPECT_EQ(f.vector_loads_per_vector, 3);
    EXPECT_EQ(f.unique_bytes_read_per_realization, 64 * 50 * 2);
    EXPECT_EQ(f.allocation_bytes_read_per_realization, 32 * 10 * 2);
    EXPECT_EQ(f.working_set_at_root, 0);
}

// out(x, y) = 0; out(x, y) += A(k, y) * B(x, k) over k in [0, 32); float, 64 x 64.
// out = A B: n x n, k = 0 .. depth - 1.
struct Matmul {
    ImageParam A{Float(32), 2, "A"}, B{Float(32), 2, "B"};
    Var x{"x"}, y{"y"};
    RDom k;
    Func out{"out"};
    FunctionDAG dag;
    int node;
    explicit Matmul(int depth = 32, int n = 64) : k(0, depth, "k") {
        out(x, y) = 0.f;
        out(x, y) += A(k, y) * B(x, k);
        A.set_estimates({{0, depth}, {0, n}});
        B.set_estimates({{0, n}, {0, depth}});
        out.set_estimates({{0, n}, {0, n}});
        dag = FunctionDAG::build(Pipeline(out));
        node = node_of(dag, "out");
    }
    // The update's features with out at root, its update tiled by `tiles` (8-wide vectors along
    // x) and the inputs' wrappers inlined.
    ScheduleFeatures update_features(const std::vector<std::vector<int64_t>> &tiles) const {
        LoopNest n(dag);
        n.funcs[size_t(node)] = {Site::root(), Site::root(), {{{}, 0, 8, false, false}, {tiles, 1, 8, false, false}}};
        for (size_t i = 0; i < dag.nodes.size(); i++) {
            if (can_inline(dag, int(i))) n.funcs[i] = {Site::inlined(), Site::inlined(), {}};
        }
        EXPECT_EQ(n.validate(dag), "");
        return features(compute_schedule_features(dag, n, kAvx2), node, 1);
    }
};

// Which unroll requests apply() and the features honour (LoopNestBounds::unrolls), on the
// matmul's update (guarded tails; 8-wide vectors along x): point tiles must divide what runs
// around them, and every point tile along the vector loop must reach into its last vector.
TEST(LoopNest, UnrollsOnlyTilesHalideCompilesRight) {
    auto unrolls = [](int n, const std::vector<std::vector<int64_t>> &tiles, int width) {
        Matmul m(32, n);
        LoopNest nest(m.dag);
        nest.funcs[size_t(m.node)] = {
            Site::root(), Site::root(), {{{}, 0, width, false, false}, {tiles, 1, width, true, true}}};
        for (size_t i = 0; i < m.dag.nodes.size(); i++) {
            if (can_inline(m.dag, int(i))) nest.funcs[i] = {Site::inlined(), Site::inlined(), {}};
        }
        EXPECT_EQ(nest.validate(m.dag), "");
        return LoopNestBounds(m.dag, nest).unrolls({m.node, 1});
    };
    EXPECT_TRUE(unrolls(64, {{1, 16, 8}}, 8));
    EXPECT_FALSE(unrolls(60, {{1, 16, 8}}, 8)); // 16 does not divide 60
    // 60 in tiles of 32 (the tail 28) in points of 16: the tail's last point tile holds 12 of
    // 16, reaching into its second vector.
    EXPECT_TRUE(unrolls(60, {{1, 32, 8}, {1, 16, 8}}, 8));
    // 66: the tail tile of 2 leaves its second point tile empty and its first 2 wide.
    EXPECT_FALSE(unrolls(66, {{1, 32, 8}, {1, 16, 8}}, 8));
    // Points of 10 in 8-wide vectors start their last vector at 8: a tail of 6 stays short of
    // it (36 = 20 + 16: point tiles of 10 and 6), one of 9 reaches it (39 = 20 + 19).
    EXPECT_FALSE(unrolls(36, {{1, 20, 4}, {1, 10, 4}}, 8));
    EXPECT_TRUE(unrolls(39, {{1, 20, 4}, {1, 10, 4}}, 8));
}

TEST(ScheduleFeatures, GoldenMatmulRegisterBlock) {
    Matmul m;
    const Stage &update = m.dag.nodes[size_t(m.node)].stages[1];
    ASSERT_EQ(update.loops.size(), 3u); // k, x, y: innermost first
    LoopNest n(m.dag);
    // The update: 4 x 8 parallel blocks of 16 x 8, k running whole at level 0 outside each
    // block's points; 8-wide vectors along x and the 2 x 8 remaining point loops unrolled.
    n.funcs[size_t(m.node)] = {
        Site::root(), Site::root(), {{{}, 0, 8, false, false}, {{{1, 16, 8}}, 1, 8, true, true}}};
    for (size_t i = 0; i < m.dag.nodes.size(); i++) {
        if (can_inline(m.dag, int(i))) n.funcs[i] = {Site::inlined(), Site::inlined(), {}}; // A_im, B_im
    }
    ASSERT_EQ(n.validate(m.dag), "");
    const ScheduleFeatures &f = features(compute_schedule_features(m.dag, n, kAvx2), m.node, 1);
    EXPECT_EQ(f.points_computed_total, 32 * 64 * 64); // an update computes each point once
    EXPECT_EQ(f.points_computed_minimum, 32 * 64 * 64);
    EXPECT_EQ(f.innermost_loop_extent, 16 * 8); // k is outside the block
    EXPECT_EQ(f.unrolled_loop_extent, 16 * 8);
    EXPECT_EQ(f.inner_parallelism, 4 * 8);
    EXPECT_EQ(f.vector_size, 8);
    EXPECT_EQ(f.num_vectors, 32 * 64 * 64 / 8);
    EXPECT_EQ(f.num_scalars, 0);
    // Per block of 2 x 8 = 16 unrolled vectors: out(x, y) is 16 distinct dense loads (1 per
    // vector); A(k, y) does not move along x, so 8 scalar loads, one per row (0.5 per vector);
    // B(x, k) does not move along y, so 2 dense loads shared by the 8 rows (0.125 per vector).
    EXPECT_EQ(f.vector_loads_per_vector, 1.125);
    EXPECT_EQ(f.scalar_loads_per_vector, 0.5);
    EXPECT_EQ(f.scalar_loads_per_scalar, 1.625);
    // A task writes a 16 x 8 block of out and reads 32 x 8 of A and 16 x 32 of B.
    EXPECT_EQ(f.bytes_at_task, 16 * 8 * 4);
    EXPECT_EQ(f.unique_bytes_read_per_task, (32 * 8 + 16 * 32) * 4);
    EXPECT_EQ(f.unique_lines_read_per_task, 8 + 32);
    // Every block up to the task fits in the cache: each task reads its operands once, B's rows
    // of 16 floats (narrower than B's 64) in whole cache lines, 64 + 60 bytes on average.
    EXPECT_EQ(f.bytes_read_past_cache, 32 * (32 * 8 * 4 + 32 * (16 * 4 + 64 - 4)));
    // k sweeps a 512-byte block, which fits in L1; but out is realized at root, so the block is
    // not its whole realization and LLVM keeps the accumulators in L1: each of the 32 steps
    // loads and stores them, priced at kL1RoundTripWeight of such traffic past L1.
    EXPECT_EQ(f.accumulator_bytes_spilled, kL1RoundTripWeight * 2 * (32 * 64 * 64) * 4);
}

// Halide allocates a Func computed inside a consumer's loops on the stack when its size is a
// constant; it calls halide_malloc in every realization when the size follows a run-time value
// (a loop left whole over the pipeline's width), and when it follows a guarded tail, unless
// Halide can bound it by 128 bytes.
TEST(ScheduleFeatures, HeapRealizationsAreThoseSizedAtRunTime) {
    Blur b;
    LoopNest whole_rows = b.tiled();
    whole_rows.funcs[size_t(b.blur_y)].stages[0].tiles = {{64, 8}}; // x unsplit: the output's width
    const ScheduleFeatures &rows = features(compute_schedule_features(b.dag, whole_rows, kAvx2), b.blur_x);
    EXPECT_EQ(rows.num_realizations, 6);
    EXPECT_EQ(rows.heap_realizations, 6);
    EXPECT_EQ(features(compute_schedule_features(b.dag, b.tiled(), kAvx2), b.blur_x).heap_realizations, 0);

    // B's wrapper per 8 x 8 block of the matmul's update (guarded tails): k x 8 columns of B.
    auto heap_of_b = [](int depth) {
        Matmul m(depth, 64);
        LoopNest n(m.dag);
        n.funcs[size_t(m.node)] = {
            Site::root(), Site::root(), {{{}, 0, 8, false, false}, {{{depth, 8, 8}}, 1, 8, false, false}}};
        for (size_t i = 0; i < m.dag.nodes.size(); i++) {
            if (can_inline(m.dag, int(i))) n.funcs[i] = {Site::inlined(), Site::inlined(), {}};
        }
        const int b_im = node_of(m.dag, "B_im");
        n.funcs[size_t(b_im)] = {Site::at({m.node, 1}, 0), Site::at({m.node, 1}, 0), {{{}, 0, 8, false, false}}};
        EXPECT_EQ(n.validate(m.dag), "");
        const ScheduleFeatures &f = features(compute_schedule_features(m.dag, n, kAvx2), b_im);
        EXPECT_EQ(f.num_realizations, 8 * 8);
        EXPECT_EQ(f.bytes_at_realization, depth * 8 * 4);
        return f.heap_realizations;
    };
    EXPECT_EQ(heap_of_b(32), 8 * 8); // 1 KiB: malloc'd
    EXPECT_EQ(heap_of_b(4), 0);      // 128 bytes: bounded, on the stack
}

// A 1024 x 1024 matmul whose k loop runs around blocks of out: a block of 128 x 64 floats (32
// KiB) stays in L1 from one k to the next (loaded and stored there at every step: the L1
// weight); one of 256 x 64 (64 KiB) does not, and every point's update loads and stores its
// accumulator from beyond L1.
TEST(ScheduleFeatures, AccumulatorBytesSpilledWhereTheReductionSweepsMoreThanL1) {
    Matmul m(1024, 1024);
    const double points = 1024.0 * 1024 * 1024;
    auto spilled = [&](const std::vector<std::vector<int64_t>> &tiles) {
        return m.update_features(tiles).accumulator_bytes_spilled;
    };
    ASSERT_EQ(128 * 64 * 4, kL1Bytes);
    EXPECT_EQ(spilled({{1, 128, 64}}), kL1RoundTripWeight * 2 * points * 4);
    EXPECT_EQ(spilled({{1, 256, 64}}), 2 * points * 4); // loaded and stored at every (k, x, y)
}

// prod = A B, computed per bx x by block of its copy out (out tiled once at root, 8-wide
// vectors along x), k running around prod's unrolled block: registers hold the accumulators
// only where the block is prod's whole realization and the target has the vector registers for
// the accumulators and the operands they reuse; and eight independent vectors at least keep the
// FMA pipes busy. Otherwise each step's accumulators go to L1 and back.
struct BlockedMatmul {
    ImageParam A{Float(32), 2, "A"}, B{Float(32), 2, "B"};
    Var x{"x"}, y{"y"};
    RDom k;
    Func prod{"prod"}, out{"out"};
    FunctionDAG dag;
    explicit BlockedMatmul(int depth) : k(0, depth, "k") {
        prod(x, y) = 0.f;
        prod(x, y) += A(k, y) * B(x, k);
        out(x, y) = prod(x, y);
        A.set_estimates({{0, depth}, {0, 64}});
        B.set_estimates({{0, 64}, {0, depth}});
        out.set_estimates({{0, 64}, {0, 64}});
        dag = FunctionDAG::build(Pipeline(out));
    }
    // prod's update's accumulator_bytes_spilled: realized per `tile` of out, its update in
    // unrolled point tiles of `block` (x, y).
    double spilled(const std::vector<int64_t> &tile, const std::vector<int64_t> &block, const Target &target) const {
        const int o = node_of(dag, "out"), p = node_of(dag, "prod");
        LoopNest n(dag);
        n.funcs[size_t(o)] = {Site::root(), Site::root(), {{{tile}, 0, 8, false, false}}};
        n.funcs[size_t(p)] = {Site::at({o, 0}, 0),
                              Site::at({o, 0}, 0),
                              {{{}, 0, 8, false, false}, {{{1, block[0], block[1]}}, 1, 8, false, true}}};
        for (size_t i = 0; i < dag.nodes.size(); i++) {
            if (can_inline(dag, int(i))) n.funcs[i] = {Site::inlined(), Site::inlined(), {}};
        }
        EXPECT_EQ(n.validate(dag), "");
        return features(compute_schedule_features(dag, n, target), p, 1).accumulator_bytes_spilled;
    }
};

TEST(ScheduleFeatures, AccumulatorsStayInRegistersOnlyInAWholeRealizationTheRegisterFileHolds) {
    const Target avx512("x86-64-linux-sse41-avx-avx2-fma-f16c-avx512");
    BlockedMatmul m(256);
    const double l1 = kL1RoundTripWeight * 2 * (64.0 * 64 * 256) * 4; // every step, to L1 and back
    // 32 x 2: 8 accumulators, B's 4 vectors reused by both rows and A's 2 broadcasts by the 4
    // columns: 8 + (4 + 2 - 4) + 2 scratch = 12 of AVX2's 16 registers.
    EXPECT_EQ(m.spilled({32, 2}, {32, 2}, kAvx2), 0);
    // 64 x 2: 16 accumulators, more than AVX2's registers; with AVX-512's 64-byte registers
    // they are 8 of 32.
    EXPECT_EQ(m.spilled({64, 2}, {64, 2}, kAvx2), l1);
    EXPECT_EQ(m.spilled({64, 2}, {64, 2}, avx512), 0);
    // The 32 x 2 block, one of two in a 64 x 2 realization: not promoted to registers.
    EXPECT_EQ(m.spilled({64, 2}, {32, 2}, kAvx2), l1);
    // 16 x 2 and 8 x 1: 4 and 1 vectors of accumulators, too few chains for the FMA pipes'
    // latency: the L1 price times the missing fraction of kFloatAccumulatorChains.
    EXPECT_EQ(m.spilled({16, 2}, {16, 2}, kAvx2), l1 * (1 - 4 / kFloatAccumulatorChains));
    EXPECT_EQ(m.spilled({8, 1}, {8, 1}, kAvx2), l1 * (1 - 1 / kFloatAccumulatorChains));
    // A reduction shorter than kMinExposedChain steps: LLVM unrolls it and forwards the
    // accumulators from step to step, whatever the block.
    BlockedMatmul shallow(8);
    EXPECT_EQ(shallow.spilled({64, 2}, {64, 2}, kAvx2), 0);
    EXPECT_EQ(shallow.spilled({64, 2}, {32, 2}, kAvx2), 0);
}

// A 1024 x 1024 matmul in blocks of 128 x 2 accumulators, k running around each block: the
// same work in two loop orders. Row by row, each row of blocks streams all of B (4 MiB, more than
// the 1 MiB cache): B's re-reads come from beyond the cache. Panel by panel (x outside y), a
// 128-wide panel of B (512 KiB) stays cached while every row of A streams past it.
TEST(ScheduleFeatures, BytesReadPastCacheSeesTheLoopOrder) {
    Matmul m(1024, 1024);
    const double points = 1024.0 * 1024 * 1024;
    auto past_cache = [&](const std::vector<std::vector<int64_t>> &tiles) {
        return m.update_features(tiles).bytes_read_past_cache;
    };
    // Rows: loops k, x blocks, y blocks (innermost first) at level 0. Around k, a block reads
    // 1024 x 128 of B and 2 x 1024 of A (520 KiB: fits); around the x blocks, all of B and
    // still 2 rows of A (4 MiB + 8 KiB: does not), once per pair of rows.
    EXPECT_EQ(past_cache({{1, 128, 2}}), points / (1024 * 1024 * 2) * (1024 * 1024 + 2 * 1024) * 4);
    // Panels: x blocks at level 0, then k and y blocks at level 1. Around k the same 520 KiB;
    // around the y blocks, the panel of B (rows of 128 of B's 1024 floats, in whole cache
    // lines: 60 bytes more on average) and all of A (4.5 MiB), once per panel.
    EXPECT_EQ(past_cache({{1024, 128, 1024}, {1, 128, 2}}),
              points / (1024 * 128 * 1024) * ((128 * 4 + 64 - 4) * 1024 + 1024 * 1024 * 4));
}

// nl_means' shape in small: s(x, y) sums p(x, y, r) over `depth` offsets r, and p(x, y, d) sums
// 7 rows of plane d of a 3-D input. With p computed per vector and offset, inside s's update
// loops (r, x, y from the innermost), or at root.
struct PerStepProducer {
    static constexpr int kWidth = 1024, kHeight = 64, kRows = 7;
    ImageParam a{Float(32), 3, "a"};
    Var x{"x"}, y{"y"}, d{"d"};
    RDom r;
    Func p{"p"}, s{"s"};
    FunctionDAG dag;
    explicit PerStepProducer(int depth) : r(0, depth, "r") {
        Expr rows = a(x, y, d);
        for (int j = 1; j < kRows; j++) rows += a(x, y + j, d);
        p(x, y, d) = rows;
        s(x, y) = 0.f;
        s(x, y) += p(x, y, r);
        a.set_estimates({{0, kWidth}, {0, kHeight + kRows - 1}, {0, depth}});
        s.set_estimates({{0, kWidth}, {0, kHeight}});
        dag = FunctionDAG::build(Pipeline(s));
    }
    std::vector<StageFeatures> run(bool per_step, const CacheSizes &caches = {}) const {
        const int sn = node_of(dag, "s"), pn = node_of(dag, "p");
        LoopNest n(dag);
        // s at root, its update one vector of x at a time: level 0 holds r, x's vectors, y.
        n.funcs[size_t(sn)] = {
            Site::root(), Site::root(), {{{}, 0, 8, false, false}, {{{1, 8, 1}}, 1, 8, false, false}}};
        const Site site = per_step ? Site::at({sn, 1}, 0) : Site::root();
        n.funcs[size_t(pn)] = {site, site, {{{}, 0, 8, false, false}}};
        EXPECT_EQ(n.validate(dag), "");
        return compute_schedule_features(dag, n, kAvx2, caches);
    }
};

// Per step, p reads 7 rows of one plane; a row of s's vectors reads 7 rows of all 49 planes (1.4
// MB), all of s 70 rows of them (14 MB). Where the row fits in the core's cache, each byte comes
// from past it once; where it does not, the row's reads are read again for every row of s (7x).
TEST(ScheduleFeatures, BytesReadPastCacheFollowsTheConsumersLoopsAroundAPerStepProducer) {
    PerStepProducer m(49);
    const double row = double(m.kWidth) * m.kRows * 49 * 4, all = double(m.kWidth) * (m.kHeight + m.kRows - 1) * 49 * 4;
    const int pn = node_of(m.dag, "p");
    CacheSizes large, small;
    large.core_bytes = 2 << 20;
    small.core_bytes = 512 << 10;
    EXPECT_EQ(features(m.run(true, large), pn).bytes_read_past_cache, all);
    EXPECT_EQ(features(m.run(true, small), pn).bytes_read_past_cache, m.kHeight * row);
}

// A Func computed in every step of an accumulation sends the accumulators to L1 and back each
// step, even over a reduction LLVM would otherwise unroll (9 steps, fewer than kMinExposedChain).
TEST(ScheduleFeatures, AccumulatorsGoToMemoryAroundAProducerComputedInEveryStep) {
    PerStepProducer m(9);
    const int sn = node_of(m.dag, "s");
    const double points = 9.0 * m.kWidth * m.kHeight;
    EXPECT_EQ(features(m.run(true), sn, 1).accumulator_bytes_spilled, kL1RoundTripWeight * 2 * points * 4);
    EXPECT_EQ(features(m.run(false), sn, 1).accumulator_bytes_spilled, 0);
}

// A boundary condition's clamped index loads as a dense vector in its steady state
// (Jacobian::steady_entries), so it counts as one vector load per vector, as Halide's own
// repeat_edge (a clamp of likely(x)) does; a mirrored index (a wrap by %) stays a gather.
TEST(ScheduleFeatures, AClampedIndexLoadsDenseAMirroredOneGathers) {
    ImageParam in(UInt(8), 2, "in");
    Var x("x"), y("y");
    const int w = 1024, h = 512;
    Func clamped("clamped"), edge("edge"), mirrored("mirrored"), out("out");
    clamped(x, y) = in(clamp(x, 0, w - 1), clamp(y, 0, h - 1));
    edge(x, y) = BoundaryConditions::repeat_edge(in)(x, y);
    mirrored(x, y) = in((x + w) % w, y);
    out(x, y) = clamped(x, y) + edge(x, y) + mirrored(x, y);
    in.set_estimates({{0, w}, {0, h}});
    out.set_estimates({{0, w}, {0, h}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(out));
    LoopNest nest(dag);
    for (const char *name : {"out", "clamped", "edge", "mirrored"}) {
        nest.funcs[size_t(node_of(dag, name))] = {Site::root(), Site::root(), {{{}, 0, 64, false, false}}};
    }
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        if (!nest.scheduled(int(i)) && can_inline(dag, int(i))) nest.funcs[i] = {Site::inlined(), Site::inlined(), {}};
    }
    ASSERT_EQ(nest.validate(dag), "");
    const std::vector<StageFeatures> all = compute_schedule_features(dag, nest, kAvx2);
    for (const char *name : {"clamped", "edge"}) {
        const ScheduleFeatures &f = features(all, node_of(dag, name));
        EXPECT_EQ(f.vector_loads_per_vector, 1) << name;
        EXPECT_EQ(f.scalar_loads_per_vector, 0) << name;
    }
    const ScheduleFeatures &m = features(all, node_of(dag, "mirrored"));
    EXPECT_EQ(m.vector_loads_per_vector, 0);
    EXPECT_EQ(m.scalar_loads_per_vector, 64); // one scalar load per lane
}

// A gather: out(x, y) = table(idx(x, y)) over a 16 MiB table. Each vector's reads span the whole
// table, but a block brings in at most a cache line (64 bytes) per load: 2 loads a point. The
// first block past the cache is the whole output: the table and the indices, once.
TEST(ScheduleFeatures, BytesReadPastCacheOfAGatherIsALinePerLoad) {
    ImageParam table(Float(32), 1, "table"), idx(Int(32), 2, "idx");
    Var x("x"), y("y");
    Func out("out");
    const int n = 4 << 20;
    out(x, y) = table(clamp(idx(x, y), 0, n - 1));
    table.set_estimates({{0, n}});
    idx.set_estimates({{0, 1024}, {0, 1024}});
    out.set_estimates({{0, 1024}, {0, 1024}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(out));
    LoopNest nest(dag);
    const int node = node_of(dag, "out");
    nest.funcs[size_t(node)] = {Site::root(), Site::root(), {{{}, 0, 8, false, false}}};
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        if (can_inline(dag, int(i))) nest.funcs[i] = {Site::inlined(), Site::inlined(), {}};
    }
    ASSERT_EQ(nest.validate(dag), "");
    // Per vector 8 x 128 bytes, per row 1024 x 128 (128 KiB): both fit; the whole output reads
    // 16 MiB of table and 4 MiB of indices.
    EXPECT_EQ(features(compute_schedule_features(dag, nest, kAvx2), node).bytes_read_past_cache,
              (double(n) + 1024 * 1024) * 4);
}

// A blur of 4096 x 1024 floats: blur_x's region (4096 x 1026 floats, 16.0 MiB plus two rows) just
// passes kSharedCacheBytesPerCore. At root, blur_y reads all of it from memory; computed per
// 32-row strip of blur_y (544 KiB), nothing. The input (8.0 MiB of uint16) fits either way.
TEST(ScheduleFeatures, BytesReadFromMemoryAreReadsOfProducersPastTheSharedCache) {
    // blur_y's reads of blur_x over a width x height image: blur_x at root is written whole
    // before blur_y reads it; per strip of blur_y, one strip at a time.
    auto from_memory = [](int width, int height, bool at_root) {
        ImageParam in(UInt(16), 2, "in");
        Var x("x"), y("y");
        Func bx("blur_x"), by("blur_y");
        bx(x, y) = cast<float>(in(x - 1, y)) + in(x, y) + in(x + 1, y);
        by(x, y) = bx(x, y - 1) + bx(x, y) + bx(x, y + 1);
        in.set_estimates({{-1, width + 2}, {-1, height + 2}});
        by.set_estimates({{0, width}, {0, height}});
        const FunctionDAG dag = FunctionDAG::build(Pipeline(by));
        const int blur_y = node_of(dag, "blur_y"), blur_x = node_of(dag, "blur_x"), in_im = node_of(dag, "in_im");
        LoopNest n(dag);
        std::vector<std::vector<int64_t>> tiles;
        if (!at_root) tiles = {{width, 32}};
        const Site bx_site = at_root ? Site::root() : Site::at({blur_y, 0}, 0);
        n.funcs[size_t(blur_y)] = {Site::root(), Site::root(), {{tiles, 0, 8, false, false}}};
        n.funcs[size_t(blur_x)] = {bx_site, bx_site, {{{}, 0, 8, false, false}}};
        n.funcs[size_t(in_im)] = {Site::inlined(), Site::inlined(), {}};
        EXPECT_EQ(n.validate(dag), "");
        const auto all = compute_schedule_features(dag, n, kAvx2);
        return std::make_pair(features(all, blur_y).bytes_read_from_memory,
                              features(all, blur_x).bytes_read_from_memory);
    };
    // Past twice a core's share of the last level, all of it comes from memory; past one share,
    // the part past it (linearly: the cache is not LRU).
    const double share = kSharedCacheBytesPerCore, big = 8192.0 * 2050 * 4, small = 4096.0 * 1538 * 4;
    ASSERT_GT(big, 2 * share);
    // blur_x reads the input (8194 x 2050 uint16, past two shares too) from memory.
    const double input = 8194.0 * 2050 * 2;
    EXPECT_EQ(from_memory(8192, 2048, true), std::make_pair(big, input));
    ASSERT_GT(small, share);
    ASSERT_LT(small, 2 * share);
    EXPECT_DOUBLE_EQ(from_memory(4096, 1536, true).first, (small - share) / share * small);
    // Per strip of 32 rows (34 of blur_x, 64 strips): none of blur_x; the input's rows, once per strip.
    EXPECT_EQ(from_memory(8192, 2048, false), std::make_pair(0.0, 8194.0 * 34 * 64 * 2));
}

TEST(ScheduleFeatures, BytesReadFromMemoryCountTheConsumersTileAndWhatAnEarlierFuncReadInTheIteration) {
    // out(x, y) = in(x, y) - g(x, y), g a uint8 sum of in's rows above and below, over 8192 x 1024
    // floats (in: 34 MB, past twice a core's share of the last level).
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func g("g"), out("out");
    g(x, y) = cast<uint8_t>(in(x, y - 1) + in(x, y + 1));
    out(x, y) = in(x, y) - g(x, y);
    in.set_estimates({{0, 8192}, {-1, 1026}});
    out.set_estimates({{0, 8192}, {0, 1024}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(out));
    const int o = node_of(dag, "out"), gi = node_of(dag, "g"), in_im = node_of(dag, "in_im");
    ASSERT_GT(8192.0 * 1026 * 4, 2 * kSharedCacheBytesPerCore);
    auto from_memory = [&](int64_t strip, bool g_at_root) {
        LoopNest n(dag);
        n.funcs[size_t(o)] = {Site::root(), Site::root(), {{{{8192, strip}}, 0, 8, false, false}}};
        const Site site = g_at_root ? Site::root() : Site::at({o, 0}, 0);
        n.funcs[size_t(gi)] = {site, site, {{{}, 0, 32, false, false}}};
        n.funcs[size_t(in_im)] = {Site::inlined(), Site::inlined(), {}};
        EXPECT_EQ(n.validate(dag), "");
        const auto all = compute_schedule_features(dag, n, kAvx2);
        return features(all, o).bytes_read_from_memory;
    };
    // g per strip of 32 rows reads the strip's rows of in (and one more each side) just before
    // out reads them: they are cached. With g at root, nothing read them in the iteration.
    EXPECT_EQ(from_memory(32, false), 0);
    EXPECT_GE(from_memory(32, true), 8192.0 * 1024 * 4);
    // Per strip of 1024 rows, g's 8 MB (within one share) is followed by out's 34 MB of writes in
    // the same iteration: gone from the cache when out reads it (and in, which g read first).
    const double g_strip = 8192.0 * 1024, in_strip = 8192.0 * 1024 * 4;
    ASSERT_LT(g_strip, kSharedCacheBytesPerCore);
    EXPECT_DOUBLE_EQ(from_memory(1024, false), g_strip + in_strip);
}

// A scan's step writes its left-hand side over the step's loops, one row, not every row of the
// dimension its RVar indexes: vectors 8 floats wide walking down the rows of a 1536 x 2560 image
// walk each column strip's pages once a strip (read and written), not once a step (version 17
// counted the whole column per step: 1.9e9 walks for iir_blur's passes, 100x their run).
TEST(ScheduleFeatures, AScanStepWritesOneRow) {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    RDom ry(1, 2559, "ry");
    Func down("down");
    down(x, y) = in(x, y);
    down(x, ry) = in(x, ry) + down(x, ry - 1) * 0.5f;
    in.set_estimates({{0, 1536}, {0, 2560}});
    down.set_estimates({{0, 1536}, {0, 2560}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(down));
    const int d = node_of(dag, "down"), in_im = node_of(dag, "in_im");
    LoopNest n(dag);
    n.funcs[size_t(d)] = {Site::root(), Site::root(), {{{}, 0, 8, false, false}, {{}, 1, 8, false, false}}};
    n.funcs[size_t(in_im)] = {Site::inlined(), Site::inlined(), {}};
    ASSERT_EQ(n.validate(dag), "");
    const ScheduleFeatures scan = features(compute_schedule_features(dag, n, kAvx2), d, 1);
    // A strip: 2559 rows of 32 bytes of in and of down, a page each on average; the whole
    // production's first touch of each page is no re-walk.
    const double strip = 2 * 2559 * (28.0 / 4096 + 1), production = 2 * 2559 * (6140.0 / 4096 + 1);
    ASSERT_GT(strip, kTlbPages);
    EXPECT_DOUBLE_EQ(scan.tlb_pages_rewalked, 192 * strip - production);
}

TEST(ScheduleFeatures, TlbPagesRewalkedWhereAColumnTileWalksMorePagesThanTheTlbHolds) {
    // out = 2 x in over a 1536 x 2560 float image: 6 KiB rows, each on pages of its own.
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func out("out");
    out(x, y) = in(x, y) * 2;
    in.set_estimates({{0, 1536}, {0, 2560}});
    out.set_estimates({{0, 1536}, {0, 2560}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(out));
    const int o = node_of(dag, "out"), in_im = node_of(dag, "in_im");
    auto features_of = [&](int64_t w, int64_t h) {
        LoopNest n(dag);
        n.funcs[size_t(o)] = {Site::root(), Site::root(), {{{{512, 1280}, {w, h}}, 0, 8, true, false}}};
        n.funcs[size_t(in_im)] = {Site::inlined(), Site::inlined(), {}};
        EXPECT_EQ(n.validate(dag), "");
        return features(compute_schedule_features(dag, n, kAvx2), o);
    };
    // A column 8 floats wide reads and writes 1280 rows of 32 bytes, a page each on average
    // (28 / 4096 + 1): past the TLB, so every column walks them again; the first touch of each
    // page (the task, 512 x 1280: 1.5 pages a row) is no re-walk.
    const double column = 2 * 1280 * (28.0 / 4096 + 1), task = 2 * 1280 * (2044.0 / 4096 + 1);
    ASSERT_GT(column, kTlbPages);
    const ScheduleFeatures narrow = features_of(8, 1280);
    EXPECT_DOUBLE_EQ(narrow.tlb_pages_rewalked, 384 * column - 6 * task);
    // 256 x 16 tiles walk 32 rows a tile, and the pages stay in the TLB along the row of tiles.
    EXPECT_EQ(features_of(256, 16).tlb_pages_rewalked, 0);
    // Rows narrower than their buffer's move whole cache lines: the task's reads of in (1280
    // rows of 2 KiB at an offset not known, 2,108 bytes each on average) pass the L2, once a task.
    ASSERT_GT(1280 * 2048.0, kCoreCacheBytes);
    EXPECT_DOUBLE_EQ(narrow.bytes_read_past_cache, 6 * 1280 * (2048.0 + 64 - 4));
}

// in -> a -> b -> c -> out over 2048 floats by `height` rows: three intermediates for the trim rules.
struct ChainOfThree {
    ImageParam in{Float(32), 2, "in"};
    Var x{"x"}, y{"y"};
    Func a{"a"}, b{"b"}, c{"c"}, out{"out"};
    FunctionDAG dag;
    int o = -1, in_im = -1;
    std::vector<int> chain; // a, b, c
    explicit ChainOfThree(int height) {
        a(x, y) = in(x, y) * 2;
        b(x, y) = a(x, y) + 1;
        c(x, y) = b(x, y) + 1;
        out(x, y) = c(x, y) * 2;
        in.set_estimates({{0, 2048}, {0, height}});
        out.set_estimates({{0, 2048}, {0, height}});
        dag = FunctionDAG::build(Pipeline(out));
        o = node_of(dag, "out"), in_im = node_of(dag, "in_im");
        chain = {node_of(dag, "a"), node_of(dag, "b"), node_of(dag, "c")};
    }
    // out tiled by `outer` then `inner` (parallel), a, b and c at the tiling levels `levels`
    // (in_im inlined unless `partial`): their heap_bytes_refaulted.
    std::vector<double> refaulted(const std::vector<int64_t> &outer, const std::vector<int64_t> &inner,
                                  const std::vector<int> &levels, bool partial = false, int threads = 1) const {
        LoopNest n(dag);
        n.funcs[size_t(o)] = {Site::root(), Site::root(), {{{outer, inner}, 0, 8, true, false}}};
        for (size_t i = 0; i < chain.size(); i++) {
            const Site site = Site::at({o, 0}, levels[i]);
            n.funcs[size_t(chain[i])] = {site, site, {{{}, 0, 8, false, false}}};
        }
        if (!partial) n.funcs[size_t(in_im)] = {Site::inlined(), Site::inlined(), {}};
        if (!partial) {
            EXPECT_EQ(n.validate(dag), "");
        }
        CacheSizes machine;
        machine.threads = threads;
        const auto all = compute_schedule_features(dag, n, kAvx2, machine);
        EXPECT_EQ(features(all, o).heap_bytes_refaulted, 0); // the caller's buffer
        std::vector<double> values;
        for (int f : chain) values.push_back(features(all, f).heap_bytes_refaulted);
        return values;
    }
    // The same values from heap events written out by hand (glibc_heap.h simulates them).
    std::vector<double> simulated(const std::vector<HeapScope> &scopes, int threads = 1) const {
        const std::vector<double> all = glibc_faults_per_run(scopes, int(dag.nodes.size()), threads);
        std::vector<double> values;
        for (int f : chain) values.push_back(all[size_t(f)]);
        return values;
    }
};

// a, b and c per tile, in strips of 4 tiles: Halide allocates each before its production and
// frees it after its consumer's, so c takes a's hole and the site peaks at two blocks. Per 512 x
// 128 tile (256 KiB each) the two and the pad pass twice the largest at the end of each tile,
// and all but the pad faults in again at the next; per 512 x 64 tile (128 KiB) the two fit in
// what the arena grew by for one (a block and the pad), under twice the largest: nothing faults
// in after the first run.
TEST(ScheduleFeatures, HeapBytesRefaultedFollowHalidesAllocationsThroughGlibcsArena) {
    const ChainOfThree p(1024);
    auto per_tile = [&](int64_t rows) {
        const int64_t tile = 512 * rows * 4;
        std::vector<HeapScope> s(3);
        s[0].repeat(1, 1024 / rows); // strips
        s[1].repeat(2, 4);           // tiles per strip
        s[2].allocate(p.chain[0], tile);
        s[2].allocate(p.chain[1], tile);
        s[2].free(p.chain[0]); // after b's production
        s[2].allocate(p.chain[2], tile);
        s[2].free(p.chain[1]); // after c's
        s[2].free(p.chain[2]); // after out's
        return p.simulated(s);
    };
    const std::vector<double> large = per_tile(128), small = per_tile(64);
    EXPECT_EQ(p.refaulted({2048, 128}, {512, 128}, {1, 1, 1}), large);
    EXPECT_EQ(p.refaulted({2048, 64}, {512, 64}, {1, 1, 1}), small);
    EXPECT_NEAR(large[0] + large[1] + large[2], 32 * (2 * 512 * 128 * 4 - 128 * 1024), 32 * 8192);
    EXPECT_EQ(small, std::vector<double>(3, 0.0));
    // A partial state (in_im not placed yet) counts with what is placed, as if in_im added nothing.
    EXPECT_EQ(p.refaulted({2048, 128}, {512, 128}, {1, 1, 1}, /*partial=*/true), large);
}

// The same 512 x 128 tiles on two threads: out's strips are its parallel tasks, half of them on
// the worker thread, whose arena grows by what a block lacks and not the pad: there the two blocks
// stay under twice the largest, and only the main thread's tiles fault in again.
TEST(ScheduleFeatures, HeapBytesRefaultedShareTheParallelTasksAmongTheThreadsArenas) {
    const ChainOfThree p(1024);
    const int64_t tile = 512 * 128 * 4;
    std::vector<HeapScope> s(3);
    s[0].repeat(1, 8, /*parallel=*/true); // strips: the tasks
    s[1].repeat(2, 4);
    s[2].allocate(p.chain[0], tile);
    s[2].allocate(p.chain[1], tile);
    s[2].free(p.chain[0]);
    s[2].allocate(p.chain[2], tile);
    s[2].free(p.chain[1]);
    s[2].free(p.chain[2]);
    const std::vector<double> one = p.simulated(s, 1), two = p.simulated(s, 2);
    EXPECT_EQ(p.refaulted({2048, 128}, {512, 128}, {1, 1, 1}, false, 2), two);
    EXPECT_EQ(p.refaulted({2048, 128}, {512, 128}, {1, 1, 1}, false, 1), one);
    EXPECT_NEAR(one[0] + one[1] + one[2], 32 * (2 * tile - 128 * 1024), 32 * 8192);
    EXPECT_NEAR(two[0] + two[1] + two[2], 16 * (2 * tile - 128 * 1024), 16 * 8192);
}

// Halide sizes a task's buffers by that task's region. out(x, y) = a(x, y) + a(x, y / 2) + c(x, y)
// + c(x, y + k), a and c per strip of 128 rows, four strips: a's block grows with the strip (rows
// 0-127, 64-255, 128-383, 192-511: 1, 1.5, 2 and 2.5 MiB), c's is 128 + k rows in each. The
// features must follow each strip's own sizes, which differ from the middle strip's throughout
// (the representative tile's, as before version 20) both ways:
//   - k = 64, two threads: the last strip's a sets the thresholds (mmap 2.5 MiB, trim 5), which
//     no strip's blocks and pad pass: nothing faults in again; at the middle strip's sizes a and
//     c are alike, 1.5 MiB, and trim at every strip;
//   - k = 192, one thread: c (2.5 MiB) sets them; the last strip's two blocks and the pad pass
//     twice that and trim, so the first strips' grow the arena again; at the middle strip's sizes
//     nothing passes.
TEST(ScheduleFeatures, HeapBytesRefaultedSizeEachTaskByItsOwnRegion) {
    auto check = [](int k, int threads, bool grown_faults) {
        ImageParam in{Float(32), 2, "in"};
        Var x{"x"}, y{"y"};
        Func a{"a"}, c{"c"}, out{"out"};
        a(x, y) = in(x, y) * 2;
        c(x, y) = in(x, y) + 1;
        out(x, y) = a(x, y) + a(x, y / 2) + c(x, y) + c(x, y + k);
        in.set_estimates({{0, 2048}, {0, 1024}});
        out.set_estimates({{0, 2048}, {0, 512}});
        const FunctionDAG dag = FunctionDAG::build(Pipeline(out));
        const int o = node_of(dag, "out"), na = node_of(dag, "a"), nc = node_of(dag, "c");
        LoopNest n(dag);
        n.funcs[size_t(o)] = {Site::root(), Site::root(), {{{{2048, 128}, {64, 8}}, 0, 8, true, false}}};
        for (int f : {na, nc})
            n.funcs[size_t(f)] = {Site::at({o, 0}, 0), Site::at({o, 0}, 0), {{{}, 0, 8, false, false}}};
        n.funcs[size_t(node_of(dag, "in_im"))] = {Site::inlined(), Site::inlined(), {}};
        ASSERT_EQ(n.validate(dag), "");
        CacheSizes machine;
        machine.threads = threads;
        const auto all = compute_schedule_features(dag, n, kAvx2, machine);
        // One strip's heap events as Halide 14 lowers them (the later Func in the DAG's order first).
        const int first = std::max(na, nc), second = std::min(na, nc);
        auto strip = [&](int64_t a_rows) {
            HeapScope s;
            for (int f : {first, second}) s.allocate(f, 2048 * (f == na ? a_rows : 128 + k) * 4);
            s.free(first);
            s.free(second);
            return s;
        };
        std::vector<HeapScope> grown{HeapScope{}, strip(128), strip(192), strip(256), strip(320)};
        grown[0].repeat({{1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {4, 1, 1}}, true);
        std::vector<HeapScope> middle{HeapScope{}, strip(192)};
        middle[0].repeat(1, 4, true);
        const std::vector<double> expected = glibc_faults_per_run(grown, int(dag.nodes.size()), threads);
        const std::vector<double> before = glibc_faults_per_run(middle, int(dag.nodes.size()), threads);
        EXPECT_EQ(features(all, na).heap_bytes_refaulted, expected[size_t(na)]) << k;
        EXPECT_EQ(features(all, nc).heap_bytes_refaulted, expected[size_t(nc)]) << k;
        EXPECT_EQ(expected[size_t(na)] + expected[size_t(nc)] > 0, grown_faults) << k;
        EXPECT_EQ(before[size_t(na)] + before[size_t(nc)] > 0, !grown_faults) << k;
    };
    check(64, 2, false);
    check(192, 1, true);
}

// A block Halide sizes at run time comes from halide_malloc however small. c per row of a
// 128-wide strip, the row whole (the output's width: a run-time size), is a 512-byte block that
// the first strip takes from the top above its a and b (96 KiB each, under the first mmap
// threshold) and frees to the thread's cache, where it stays and keeps them from the top:
// nothing trims (glibc itself, two threads: 20 pages a run). With the rows split in two, c's
// 256 bytes are a constant size, on the stack, and a and b with the pad pass the trim threshold
// at every strip (64 pages a run; glibc 68).
TEST(ScheduleFeatures, HeapBytesRefaultedSeeSmallBlocksSizedAtRunTime) {
    ImageParam in{Float(32), 2, "in"};
    Var x{"x"}, y{"y"};
    Func a{"a"}, b{"b"}, c{"c"}, out{"out"};
    a(x, y) = in(x, y) * 2;
    b(x, y) = a(x, y) + 1;
    c(x, y) = b(x, y) + a(x, y);
    out(x, y) = c(x, y) * 2;
    in.set_estimates({{0, 128}, {0, 768}});
    out.set_estimates({{0, 128}, {0, 768}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(out));
    const int o = node_of(dag, "out"), na = node_of(dag, "a"), nb = node_of(dag, "b"), nc = node_of(dag, "c");
    auto refaulted = [&](int64_t row_piece) {
        LoopNest n(dag);
        n.funcs[size_t(o)] = {Site::root(), Site::root(), {{{{128, 192}, {row_piece, 1}}, 0, 8, true, false}}};
        for (int f : {na, nb})
            n.funcs[size_t(f)] = {Site::at({o, 0}, 0), Site::at({o, 0}, 0), {{{}, 0, 8, false, false}}};
        n.funcs[size_t(nc)] = {Site::at({o, 0}, 1), Site::at({o, 0}, 1), {{{}, 0, 8, false, false}}};
        n.funcs[size_t(node_of(dag, "in_im"))] = {Site::inlined(), Site::inlined(), {}};
        EXPECT_EQ(n.validate(dag), "");
        CacheSizes machine;
        machine.threads = 2;
        const auto all = compute_schedule_features(dag, n, kAvx2, machine);
        EXPECT_EQ(features(all, nc).heap_realizations, row_piece == 128 ? 768 : 0);
        return features(all, na).heap_bytes_refaulted + features(all, nb).heap_bytes_refaulted;
    };
    EXPECT_EQ(refaulted(128), 0);
    EXPECT_EQ(refaulted(64), 64 * 4096);
}

// a per strip of 2048 x 60 (the largest allocation, L), b and c per half strip: they peak at 2 L,
// which the pad takes past the trim threshold at the end of each strip (unsharp_mask's strips:
// 4.88 MB against twice 2.48, trimmed as measured); per third of a strip they peak lower, stay
// under it, and fault in nothing after the first run.
TEST(ScheduleFeatures, HeapBytesRefaultedCountWhatATrimReturnsAboveThePad) {
    const ChainOfThree p(960);
    const std::vector<int64_t> strip_tile = {2048, 60};
    const int64_t strip = 2048 * 60 * 4;
    auto per_strip = [&](int64_t parts) {
        std::vector<HeapScope> s(3);
        s[0].repeat(1, 16);
        s[1].allocate(p.chain[0], strip);
        s[1].repeat(2, parts);
        s[1].free(p.chain[0]); // after out's level-1 loops, which read it through b
        s[2].allocate(p.chain[1], strip / parts);
        s[2].allocate(p.chain[2], strip / parts);
        s[2].free(p.chain[1]);
        s[2].free(p.chain[2]);
        return p.simulated(s);
    };
    const std::vector<double> halves = per_strip(2), thirds = per_strip(3);
    EXPECT_EQ(p.refaulted(strip_tile, {2048, 30}, {0, 1, 1}), halves);
    EXPECT_EQ(p.refaulted(strip_tile, {2048, 20}, {0, 1, 1}), thirds);
    EXPECT_NEAR(halves[0] + halves[1] + halves[2], 16 * (2 * strip - 128 * 1024), 16 * 8192);
    EXPECT_EQ(thirds, std::vector<double>(3, 0.0));
}

// Math functions Halide 14 leaves to the C library (one call per lane) count by their cost
// relative to sinf; those it computes with vector code of its own count nothing.
TEST(LibraryCalls, CountTheMathFunctionsCalledPerLane) {
    EXPECT_EQ(library_call_cost("sin_f32"), 1);
    EXPECT_EQ(library_call_cost("cos_f64"), 1);
    EXPECT_EQ(library_call_cost("tanh_f32"), 4.5);
    EXPECT_EQ(library_call_cost("atan2_f32"), 4);
    for (const char *vectorized : {"exp_f32", "log_f32", "pow_f32", "sqrt_f32", "floor_f32", "erf_f32"})
        EXPECT_EQ(library_call_cost(vectorized), 0) << vectorized;
    for (const char *other : {"sin", "sin_i32", "my_extern_f32", ""}) EXPECT_EQ(library_call_cost(other), 0) << other;
}
// A division or modulo by a run-time value counts kRuntimeDivisionCost, grouped by the loops
// (innermost first: bit 0 x, bit 1 y) its operands use, through Lets; a division of 32-bit lanes
// by a constant is a multiply, so it does not count; nor does a float division.
TEST(LibraryCalls, DivisionsMadeLaneByLaneCountWithTheLoopsTheyDependOn) {
    ImageParam in(Int(32), 2, "in");
    Param<int> n("n");
    Var x("x"), y("y");
    auto groups = [&](const Expr &value) {
        Func f("f");
        f(x, y) = value;
        f.set_estimates({{0, 64}, {0, 32}});
        in.set_estimates({{0, 64}, {0, 32}});
        n.set_estimate(7);
        const FunctionDAG dag = FunctionDAG::build(Pipeline(f));
        std::vector<std::pair<uint64_t, double>> out;
        for (const DependentCalls &g : dag.nodes[size_t(node_of(dag, "f"))].stages[0].library_calls)
            out.emplace_back(g.loops, g.per_point);
        return out;
    };
    using Groups = std::vector<std::pair<uint64_t, double>>;
    EXPECT_EQ(groups(in(x % n, y)), (Groups{{1, kRuntimeDivisionCost}}));
    EXPECT_EQ(groups(in(x, y) / n + in(x, y) % (n + 1)), (Groups{{3, 2 * kRuntimeDivisionCost}}));
    EXPECT_EQ(groups(in(x, y % n)), (Groups{{2, kRuntimeDivisionCost}}));
    const Expr t = (y + 1) % n; // bound in a Let by Func's common subexpression elimination
    EXPECT_EQ(groups(in(x, t) + in(x + 1, t) / t), (Groups{{2, kRuntimeDivisionCost}, {3, kRuntimeDivisionCost}}));
    EXPECT_EQ(groups(in(x / 3, y)), Groups{}) << "a constant divisor";
    // No 64-bit vector multiply-high: a constant divisor of 64-bit lanes is divided lane by lane
    // too, unless it is a power of two (a shift).
    EXPECT_EQ(groups(cast<int>(cast<int64_t>(in(x, y)) / 3)), (Groups{{3, kRuntimeDivisionCost}}));
    EXPECT_EQ(groups(cast<int>(cast<uint64_t>(in(x, y)) % 9)), (Groups{{3, kRuntimeDivisionCost}}));
    EXPECT_EQ(groups(cast<int>(cast<int64_t>(in(x, y)) / 4)), Groups{}) << "a power of two";
    EXPECT_EQ(groups(cast<int>(cast<float>(in(x, y)) / cast<float>(n))), Groups{}) << "float division";
}

// f(x, y) = in(x % n, y): its modulo depends on x only. Halide computes it once per iteration of
// the innermost x loop and of the loops around it: with rows inside 16-wide columns (one vector),
// once per column; with x innermost (4 vectors a row), once per point; once per vector of a row
// when a mirrored y is the only division; and unrolled rows share it.
TEST(ScheduleFeatures, LibraryCallsAreHoistedOutOfTheLoopsTheyDoNotDependOn) {
    ImageParam in(Int(32), 2, "in");
    Param<int> n("n");
    Var x("x"), y("y");
    in.set_estimates({{0, 64}, {0, 32}});
    n.set_estimate(7);
    auto calls = [&](const Expr &value, const StageTiling &tiling) {
        Func f("f");
        f(x, y) = value;
        f.set_estimates({{0, 64}, {0, 32}});
        const FunctionDAG dag = FunctionDAG::build(Pipeline(f));
        const int f_node = node_of(dag, "f"), in_im = node_of(dag, "in_im");
        LoopNest nest(dag);
        nest.funcs[size_t(f_node)] = {Site::root(), Site::root(), {tiling}};
        nest.funcs[size_t(in_im)] = {Site::inlined(), Site::inlined(), {}};
        EXPECT_EQ(nest.validate(dag), "");
        return features(compute_schedule_features(dag, nest, kAvx2), f_node).library_calls / kRuntimeDivisionCost;
    };
    const StageTiling rows_inner{{{16, 32}}, 0, 16, false, false}, x_inner{{}, 0, 16, false, false};
    EXPECT_EQ(calls(in(x % n, y), rows_inner), 64);
    EXPECT_EQ(calls(in(x % n, y), x_inner), 64 * 32);
    EXPECT_EQ(calls(in(x, y % n), x_inner), 32);
    EXPECT_EQ(calls(in(x, y % n), rows_inner), 4 * 32) << "per vector of a row: its tiles' x loop is outermost";
    const StageTiling unrolled{{{16, 4}}, 0, 16, false, true}; // 4 rows of one vector, unrolled
    EXPECT_EQ(calls(in(x % n, y), unrolled), 64 * 8);
}

// g = f times its own transpose, g(x, y) = sum over r of f(r, y) * f(x, r): one vector step
// reads a point of row y and 8 points of row r. The box holding both spans every row between
// them; the step reads 2 lines, 9 floats. A stencil's taps overlap instead, and their box counts.
TEST(ScheduleFeatures, PerVectorFootprintsCountFarApartCallsOneByOne) {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    in.set_estimates({{0, 64}, {0, 256}});
    Func f("f"), g("g"), h("h");
    f(x, y) = in(x, y) + 1.0f;
    RDom r(0, 64, "r");
    g(x, y) = 0.0f;
    g(x, y) += f(r, y) * f(x, r);
    h(x, y) = f(x - 1, y) + f(x, y) + f(x + 1, y) + g(x, y);
    h.set_estimates({{1, 62}, {0, 256}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(h));
    const int f_node = node_of(dag, "f"), g_node = node_of(dag, "g"), h_node = node_of(dag, "h");
    LoopNest nest(dag);
    const StageTiling vectors{{}, 0, 8, false, false};
    nest.funcs[size_t(h_node)] = {Site::root(), Site::root(), {vectors}};
    nest.funcs[size_t(g_node)] = {Site::root(), Site::root(), {vectors, {{}, 1, 8, false, false}}};
    nest.funcs[size_t(f_node)] = {Site::root(), Site::root(), {vectors}};
    nest.funcs[size_t(node_of(dag, "in_im"))] = {Site::inlined(), Site::inlined(), {}};
    ASSERT_EQ(nest.validate(dag), "");
    const std::vector<StageFeatures> all = compute_schedule_features(dag, nest, kAvx2);
    const ScheduleFeatures &update = features(all, g_node, 1);
    EXPECT_EQ(update.unique_lines_read_per_vector, 2);
    EXPECT_EQ(update.unique_bytes_read_per_vector, (1 + 8) * 4);
    // h: f(x - 1 .. x + 1, y) is 10 floats of one row (three calls of 8 would count 24), and g's 8.
    const ScheduleFeatures &stencil = features(all, h_node);
    EXPECT_EQ(stencil.unique_lines_read_per_vector, 2);
    EXPECT_EQ(stencil.unique_bytes_read_per_vector, (10 + 8) * 4);
}

// m(x, y) = f(x, (7 * y) % 256), vectorized along y: the index's slope is unknown and its box is
// every row of f, but each of the vector's 8 lanes loads one point.
TEST(ScheduleFeatures, PerVectorFootprintsOfAGatherAreAPointPerLane) {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    in.set_estimates({{0, 64}, {0, 256}});
    Func f("f"), m("m");
    f(x, y) = in(x, y) + 1.0f;
    m(x, y) = f(x, (7 * y) % 256);
    m.set_estimates({{0, 64}, {0, 256}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(m));
    const int f_node = node_of(dag, "f"), m_node = node_of(dag, "m");
    LoopNest nest(dag);
    nest.funcs[size_t(m_node)] = {Site::root(), Site::root(), {{{}, 1, 8, false, false}}};
    nest.funcs[size_t(f_node)] = {Site::root(), Site::root(), {{{}, 0, 8, false, false}}};
    nest.funcs[size_t(node_of(dag, "in_im"))] = {Site::inlined(), Site::inlined(), {}};
    ASSERT_EQ(nest.validate(dag), "");
    const ScheduleFeatures &gather = features(compute_schedule_features(dag, nest, kAvx2), m_node);
    EXPECT_EQ(gather.unique_lines_read_per_vector, 8);
    EXPECT_EQ(gather.unique_bytes_read_per_vector, 8 * 4);
}

// f = tanh(in) + sin(in), 5.5 sinf-equivalents a point; g reads f at two points and takes an
// exp (vector code: nothing). g is 64 x 32: at root, f computes 64 x 33 points; inlined, it is
// evaluated twice per point of g, and those calls are g's (they run in g's loops, on g's cores).
TEST(ScheduleFeatures, LibraryCallsAreEvaluationsTimesTheWeightedCallsPerPoint) {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func f("f"), g("g");
    f(x, y) = tanh(in(x, y)) + sin(in(x, y));
    g(x, y) = f(x, y) * 2.0f + exp(f(x, y + 1));
    in.set_estimates({{0, 64}, {0, 33}});
    g.set_estimates({{0, 64}, {0, 32}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(g));
    const int g_node = node_of(dag, "g"), f_node = node_of(dag, "f"), in_im = node_of(dag, "in_im");
    EXPECT_EQ(dag.nodes[size_t(f_node)].stages[0].library_calls_per_point(), 5.5);
    EXPECT_EQ(dag.nodes[size_t(g_node)].stages[0].library_calls_per_point(), 0);
    auto calls = [&](const Site &f_site) {
        LoopNest n(dag);
        n.funcs[size_t(g_node)] = {Site::root(), Site::root(), {{{}, 0, 8, false, false}}};
        n.funcs[size_t(f_node)] = {f_site, f_site, {{{}, 0, 8, false, false}}};
        if (f_site.kind == Site::Inline) n.funcs[size_t(f_node)].stages.clear();
        n.funcs[size_t(in_im)] = {Site::inlined(), Site::inlined(), {}};
        EXPECT_EQ(n.validate(dag), "");
        const auto all = compute_schedule_features(dag, n, kAvx2);
        return std::make_pair(features(all, f_node).library_calls, features(all, g_node).library_calls);
    };
    EXPECT_EQ(calls(Site::root()), std::make_pair(64.0 * 33 * 5.5, 0.0));
    EXPECT_EQ(calls(Site::inlined()), std::make_pair(0.0, 2 * 64.0 * 32 * 5.5));
}

// f = sin(in) reads an input, so its tails are guarded: 70 points a row in 8-lane vectors run 8
// whole vectors and one predicated vector, whose sinf calls run on all 8 lanes, those past the
// bound too (72 a row). 72 points a row need no tail: calls and points agree.
TEST(ScheduleFeatures, LibraryCallsRunOnEveryLaneOfAGuardedTail) {
    for (const int width : {70, 72}) {
        ImageParam in(Float(32), 2, "in");
        Var x("x"), y("y");
        Func f("f");
        f(x, y) = sin(in(x, y));
        in.set_estimates({{0, width}, {0, 4}});
        f.set_estimates({{0, width}, {0, 4}});
        const FunctionDAG dag = FunctionDAG::build(Pipeline(f));
        const int f_node = node_of(dag, "f");
        ASSERT_EQ(dag.nodes[size_t(f_node)].stages[0].library_calls_per_point(), 1);
        LoopNest n(dag);
        n.funcs[size_t(f_node)] = {Site::root(), Site::root(), {{{}, 0, 8, false, false}}};
        n.funcs[size_t(node_of(dag, "in_im"))] = {Site::inlined(), Site::inlined(), {}};
        ASSERT_EQ(n.validate(dag), "");
        ASSERT_TRUE(guards_tails(dag, n, {f_node, 0}));
        const ScheduleFeatures &ff = features(compute_schedule_features(dag, n, kAvx2), f_node);
        EXPECT_EQ(ff.points_computed_total, width * 4.0) << width;
        EXPECT_EQ(ff.library_calls, 72 * 4.0) << width;
    }
}

// An inlined Func runs in its reader's loops, on its reader's cores: its compute terms divide by
// the reader's parallel tasks, as the reader's own do.
TEST(ScheduleFeatures, AnInlinedFuncHasItsReadersParallelism) {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func f("f"), g("g");
    f(x, y) = in(x, y) * in(x, y) + 1.0f;
    g(x, y) = f(x, y) + f(x, y + 1);
    in.set_estimates({{0, 64}, {0, 33}});
    g.set_estimates({{0, 64}, {0, 32}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(g));
    const int g_node = node_of(dag, "g"), f_node = node_of(dag, "f"), in_im = node_of(dag, "in_im");
    for (const bool parallel : {false, true}) {
        LoopNest n(dag);
        // g at root in tiles of 64 x 8: 4 of them, in parallel or not.
        n.funcs[size_t(g_node)] = {Site::root(), Site::root(), {{{{64, 8}}, 0, 8, parallel, false}}};
        n.funcs[size_t(f_node)] = {Site::inlined(), Site::inlined(), {}};
        n.funcs[size_t(in_im)] = {Site::inlined(), Site::inlined(), {}};
        ASSERT_EQ(n.validate(dag), "");
        const auto all = compute_schedule_features(dag, n, kAvx2);
        const ScheduleFeatures &g_features = features(all, g_node), &f_features = features(all, f_node);
        EXPECT_EQ(g_features.inner_parallelism, parallel ? 4 : 1);
        EXPECT_EQ(f_features.inner_parallelism, 1);
        EXPECT_EQ(f_features.outer_parallelism, parallel ? 4 : 1);
        EXPECT_EQ(f_features.inlined_calls, 2 * 64.0 * 32);
    }
}

// The conv layer of fixtures.h. Nodes: relu, conv, then the ImageParams' wrappers and inputs.
struct ConvLayer : testing::ConvLayerPipeline {
    FunctionDAG dag;
    int relu_node, conv_node;
    ConvLayer() {
        dag = FunctionDAG::build(Pipeline(relu));
        relu_node = node_of(dag, "relu");
        conv_node = node_of(dag, "conv");
    }
};

TEST(ScheduleFeatures, GoldenConvLayer) {
    ConvLayer l;
    const Stage &update = l.dag.nodes[size_t(l.conv_node)].stages[1];
    ASSERT_EQ(update.loops.size(), 7u); // r.x, r.y, r.z, c, x, y, n: innermost first
    LoopNest n(l.dag);
    // relu at root: parallel over its 8 rows x 2 images (16 tasks of 8 x 8 channels x columns),
    // 8-wide vectors along c. conv computed per task, both stages vectorized along c, the update
    // in its default order (the reduction innermost).
    n.funcs[size_t(l.relu_node)] = {Site::root(), Site::root(), {{{{8, 8, 1, 1}}, 0, 8, true, false}}};
    n.funcs[size_t(l.conv_node)] = {Site::at({l.relu_node, 0}, 0),
                                    Site::at({l.relu_node, 0}, 0),
                                    {{{}, 0, 8, false, false}, {{}, 3, 8, false, false}}};
    for (size_t i = 0; i < l.dag.nodes.size(); i++) {
        if (can_inline(l.dag, int(i))) n.funcs[i] = {Site::inlined(), Site::inlined(), {}}; // the wrappers
    }
    ASSERT_EQ(n.validate(l.dag), "");
    const std::vector<StageFeatures> all = compute_schedule_features(l.dag, n, kAvx2);
    {
        SCOPED_TRACE("relu: at root, 16 parallel tasks of 8 x 8 (c, x)");
        const ScheduleFeatures &f = features(all, l.relu_node);
        EXPECT_EQ(f.num_realizations, 1);
        EXPECT_EQ(f.num_productions, 1);
        EXPECT_EQ(f.points_computed_total, 8 * 8 * 8 * 2);
        EXPECT_EQ(f.points_computed_minimum, 8 * 8 * 8 * 2);
        EXPECT_EQ(f.innermost_loop_extent, 8 * 8); // one task's tile
        EXPECT_EQ(f.innermost_pure_loop_extent, 8 * 8);
        EXPECT_EQ(f.inner_parallelism, 8 * 2);
        EXPECT_EQ(f.outer_parallelism, 1);
        EXPECT_EQ(f.bytes_at_realization, 1024 * 4);
        EXPECT_EQ(f.innermost_bytes_at_realization, 8 * 4); // the 8 channels
        // All of conv (1024 floats, 8 x 8 x 2 = 128 lines of channels) through its per-task
        // buffer of 8 x 8.
        EXPECT_EQ(f.unique_bytes_read_per_realization, 1024 * 4);
        EXPECT_EQ(f.unique_lines_read_per_realization, 128);
        EXPECT_EQ(f.allocation_bytes_read_per_realization, 8 * 8 * 4);
        EXPECT_EQ(f.vector_size, 8);
        EXPECT_EQ(f.num_vectors, 1024 / 8);
        EXPECT_EQ(f.vector_loads_per_vector, 1); // conv(c, x, y, n), dense along c
        EXPECT_EQ(f.scalar_loads_per_vector, 0);
        EXPECT_EQ(f.unique_bytes_read_per_vector, 8 * 4);
        EXPECT_EQ(f.unique_bytes_read_per_task, 8 * 8 * 4);
        EXPECT_EQ(f.unique_lines_read_per_task, 8);
        EXPECT_EQ(f.bytes_at_task, 8 * 8 * 4);
        EXPECT_EQ(f.working_set_at_root, 8 * 8 * 4); // conv's buffer
    }
    {
        SCOPED_TRACE("conv = bias(c): per task of relu, 8 x 8 points");
        const ScheduleFeatures &f = features(all, l.conv_node, 0);
        EXPECT_EQ(f.num_realizations, 16);
        EXPECT_EQ(f.num_productions, 16);
        EXPECT_EQ(f.points_computed_per_production, 64);
        EXPECT_EQ(f.points_computed_total, 1024);
        EXPECT_EQ(f.inner_parallelism, 1);
        EXPECT_EQ(f.outer_parallelism, 16);
        EXPECT_EQ(f.bytes_at_realization, 64 * 4);
        EXPECT_EQ(f.bytes_at_root, 1024 * 4);
        // bias(c) moves with c: one dense vector load of its 8 floats, one line.
        EXPECT_EQ(f.vector_loads_per_vector, 1);
        EXPECT_EQ(f.unique_bytes_read_per_vector, 8 * 4);
        EXPECT_EQ(f.unique_bytes_read_per_realization, 8 * 4);
        EXPECT_EQ(f.allocation_bytes_read_per_realization, 8 * 4); // bias's whole buffer
        EXPECT_EQ(f.working_set, 0);
        EXPECT_EQ(f.working_set_at_task, 8 * 8 * 4); // conv's own buffer lives in the task
    }
    {
        SCOPED_TRACE("conv += filter * input: 36 reduction steps per point");
        const ScheduleFeatures &f = features(all, l.conv_node, 1);
        EXPECT_EQ(f.num_realizations, 16);
        EXPECT_EQ(f.points_computed_per_production, 64 * 36);
        EXPECT_EQ(f.points_computed_total, 16 * 64 * 36);
        EXPECT_EQ(f.points_computed_minimum, 16 * 64 * 36);
        EXPECT_EQ(f.innermost_loop_extent, 64 * 36); // untiled: every loop in one level
        EXPECT_EQ(f.innermost_pure_loop_extent, 64);
        EXPECT_EQ(f.num_vectors, 16 * 64 * 36 / 8);
        EXPECT_EQ(f.num_scalars, 0);
        // Per vector of 8 channels: conv itself and filter(c, ...) are dense vector loads;
        // input(r.z, x + r.x, y + r.y, n) does not move with c, one scalar load broadcast.
        EXPECT_EQ(f.vector_loads_per_vector, 2);
        EXPECT_EQ(f.scalar_loads_per_vector, 1);
        EXPECT_EQ(f.scalar_loads_per_scalar, 3);
        EXPECT_EQ(f.unique_bytes_read_per_vector, 8 * 4 + 4); // 8 floats of filter, 1 of input
        EXPECT_EQ(f.unique_lines_read_per_vector, 2);
        // Per task (one row y of one image n): all of filter, 8 x 3 x 3 x 4 = 288 floats in 36
        // lines; input over r.z 0..3, x + r.x 0..9, y + r.y 3 rows: 4 x 10 x 3 = 120 floats in
        // 30 lines.
        EXPECT_EQ(f.unique_bytes_read_per_realization, (288 + 120) * 4);
        EXPECT_EQ(f.unique_lines_read_per_realization, 36 + 30);
        EXPECT_EQ(f.unique_bytes_read_per_task, (288 + 120) * 4);
        EXPECT_EQ(f.unique_lines_read_per_task, 66);
        // Both inputs' whole buffers: filter's 288 floats and input's 4 x 10 x 10 x 2 = 800.
        EXPECT_EQ(f.allocation_bytes_read_per_realization, (288 + 800) * 4);
        EXPECT_EQ(f.bytes_at_task, 64 * 4);
    }
}

} // namespace
} // namespace schedforge::featurize
