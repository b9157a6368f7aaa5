// Applied LoopNests are real schedules: every random legal LoopNest applies, compiles and
// computes what the reference schedule computes, on random pipelines (reference: all
// compute_root) and on every app of the suite (reference: its naive C++). Also pins the schedule
// source text of a fixed LoopNest.
#include "apps/app.h"
#include "featurize/agreement.h"
#include "featurize/apply.h"
#include "featurize/random_loop_nest.h"
#include "generator/build.h"
#include "generator/config.h"
#include "generator/synthesize.h"
#include "runner/host_target.h"
#include "runner/output_check.h"
#include "tests/featurize/fixtures.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

namespace schedforge::featurize {
namespace {

// StrictFloat: LLVM may otherwise fuse float operations differently per schedule.
Halide::Target strict_target() { return runner::jit_target().with_feature(Halide::Target::StrictFloat); }

class RandomPipelineLoopNests : public ::testing::TestWithParam<int> {};

TEST_P(RandomPipelineLoopNests, MatchComputeRoot) {
    const gen::GeneratorConfig cfg =
        gen::load_generator_config(std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/generator/small.yaml");
    const gen::PipelineSpec spec = gen::synthesize_pipeline(cfg, uint64_t(GetParam()));
    SCOPED_TRACE(spec.to_text());
    const Halide::Target target = strict_target();
    gen::BuiltPipeline reference = gen::build_pipeline(spec);
    reference.schedule_compute_root();
    const Halide::Buffer<> expected = reference.run(target);

    gen::BuiltPipeline built = gen::build_pipeline(spec);
    const FunctionDAG dag = FunctionDAG::build(built.pipeline);
    const LoopNest nest = random_loop_nest(dag, target, uint64_t(GetParam()) * 1000 + 17);
    ASSERT_TRUE(nest.complete(dag));
    ASSERT_EQ(nest.validate(dag), "");
    const std::string source = schedule_source(dag, nest);
    try {
        apply(dag, nest);
        EXPECT_EQ(runner::compare_buffers(expected, built.run(target)), "") << source;
    } catch (const Halide::Error &e) {
        FAIL() << e.what() << "\n" << source;
    }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomPipelineLoopNests, ::testing::Range(0, 40));

// The counting features agree with the lowering oracle within 5% on (almost) every stage
// (featurize-report prints the full table on a larger sweep, see README).
TEST(FeatureAgreement, CountingFeaturesAgreeWithLoweredCode) {
    const gen::GeneratorConfig cfg =
        gen::load_generator_config(std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/generator/small.yaml");
    const Halide::Target target = strict_target();
    AgreementReport report(0.05);
    for (uint64_t p = 0; p < 20; p++) {
        const gen::PipelineSpec spec = gen::synthesize_pipeline(cfg, p);
        for (uint64_t k = 0; k < 2; k++) {
            gen::BuiltPipeline built = gen::build_pipeline(spec);
            const FunctionDAG dag = FunctionDAG::build(built.pipeline);
            const LoopNest nest = random_loop_nest(dag, target, p * 10 + k);
            const std::vector<StageFeatures> predicted = compute_schedule_features(dag, nest, target);
            apply(dag, nest);
            report.add(dag, nest, predicted, measure_lowered(built.pipeline, dag, target), std::to_string(p));
        }
    }
    EXPECT_EQ(report.schedules, 40);
    EXPECT_LT(report.unknown, 5); // the oracle cannot measure a few (data-dependent bounds)
    // Each feature is held near its measured level on these 40 schedules (the counts and
    // parallelism agree on every stage, points and bytes on 98.9% and 99.3% of them, whole
    // vectors on 99.7%, scalar and predicated lanes on 99.2%, heap realizations on 90.2%), so
    // that a regression in any one fails here. Heap realizations miss where Halide sizes a
    // region read through a clamp at run time (input wrappers realized inside a consumer, which
    // random nests make and the search never does) and where loop partitioning gives a tail
    // its own constant-size copy.
    const std::map<std::string, double> floor = {
        {"num_realizations", 1.0},       {"num_productions", 1.0}, {"inner_parallelism", 1.0},
        {"outer_parallelism", 1.0},      {"vector_size", 1.0},     {"points_computed_total", 0.98},
        {"bytes_at_realization", 0.985}, {"num_vectors", 0.995},   {"num_scalars", 0.99},
        {"heap_realizations", 0.89}};
    for (const FeatureAgreement &a : report.features) {
        EXPECT_GT(a.compared, 200) << a.feature;
        ASSERT_TRUE(floor.count(a.feature)) << a.feature << " has no agreement floor";
        EXPECT_GE(a.within_fraction(), floor.at(a.feature)) << a.feature << ", worst: " << a.worst_example;
    }
}

class AppLoopNests : public ::testing::TestWithParam<std::string> {};

TEST_P(AppLoopNests, MatchNaiveReference) {
    for (uint64_t seed : {1, 2}) {
        apps::BuiltApp built = apps::build_app(GetParam(), /*small=*/true);
        const FunctionDAG dag = FunctionDAG::build(built.pipeline);
        const Halide::Target target = strict_target();
        // Inlining chains of stencils recomputes exponentially (see App::default_schedule_is_practical);
        // random pipelines cover inlining.
        RandomLoopNestOptions options;
        options.inline_probability = 0;
        const LoopNest nest = random_loop_nest(dag, target, seed, options);
        ASSERT_EQ(nest.validate(dag), "");
        const std::string source = schedule_source(dag, nest);
        try {
            apply(dag, nest);
            built.pipeline.realize(built.output_buffer, target);
            EXPECT_EQ(runner::compare_buffers(built.app->reference(built.inputs), built.output_buffer), "") << source;
        } catch (const Halide::Error &e) {
            FAIL() << e.what() << "\n" << source;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Apps, AppLoopNests, ::testing::ValuesIn(apps::app_names()),
                         [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

// Halide 14's simplifier folds cast<uint8>(cast<int8>(float)) into cast<uint8>(float), wrong for
// negative values; inlining a Func that converts a float to an integer into a consumer that casts
// it again exposes that. The search never inlines such a Func (converts_float_to_integer).
// A scan computed inside a tile of its consumer: in every tile Halide computes the pure
// definition over all the rows the update reads and allocates the rows it writes, whatever rows
// the tile needs, and the features say so.

// Every Func the nest leaves unscheduled, inlined.
void inline_the_rest(const FunctionDAG &dag, LoopNest &nest) {
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        if (!dag.nodes[n].is_input && !nest.scheduled(int(n))) nest.funcs[n] = {Site::inlined(), Site::inlined(), {}};
    }
}

// `out` at root with the given tiling of its pure definition; `producer` (every stage untiled)
// computed once per iteration of out's level 0; every other Func inlined. Predicted features
// and the lowering oracle's measurements of the producer.
struct PerTileProducer {
    Halide::Pipeline pipeline;
    FunctionDAG dag;
    int out = -1, producer = -1;
    LoopNest nest;
    std::string name;
    Halide::Target target = strict_target();

    // The producer's stages are tiled by `producer_tiling` (untiled by default).
    PerTileProducer(const Halide::Func &out_func, const Halide::Func &producer_func, const StageTiling &out_tiling,
                    const StageTiling &producer_tiling = {{}, -1, 1, false, false})
        : pipeline(out_func), dag(FunctionDAG::build(pipeline)), out(dag.node_index(out_func.name())),
          producer(dag.node_index(producer_func.name())), nest(dag), name(producer_func.name()) {
        EXPECT_GE(out, 0);
        EXPECT_GE(producer, 0);
        nest.funcs[size_t(out)] = {Site::root(), Site::root(), {out_tiling}};
        nest.funcs[size_t(producer)] = {
            Site::at({out, 0}, 0), Site::at({out, 0}, 0),
            std::vector<StageTiling>(dag.nodes[size_t(producer)].stages.size(), producer_tiling)};
        inline_the_rest(dag, nest);
        EXPECT_EQ(nest.validate(dag), "");
    }
    ScheduleFeatures predicted(int stage = 0) const {
        for (const StageFeatures &f : compute_schedule_features(dag, nest, target)) {
            if (f.node == producer && f.stage == stage) return f.features;
        }
        ADD_FAILURE() << "no features for " << name << " stage " << stage;
        return {};
    }
    LoweredStats measured() {
        apply(dag, nest);
        return measure_lowered(pipeline, dag, target);
    }
};

TEST(FeatureAgreement, ScanInsideATileCoversItsWholeReduction) {
    Halide::ImageParam in(Halide::Float(32), 2, "in");
    Halide::Var x("x"), y("y");
    Halide::RDom r(1, 32, "r");
    Halide::Func scan("scan"), out("out");
    scan(x, y) = in(x, y);
    scan(x, r) = scan(x, r - 1) + in(x, r); // writes rows 1..32, reads rows 0..31
    out(x, y) = scan(x, y) * 2.0f;          // rows 0..31
    in.set_estimates({{0, 16}, {0, 33}});
    out.set_estimates({{0, 16}, {0, 32}});
    // out at root in tiles of 16 x 8 (4 tiles); scan (both stages untiled) once per tile.
    PerTileProducer s(out, scan, {{{16, 8}}, -1, 1, false, false});
    // Per tile: the pure definition computes rows 0..31 (read by the update), the allocation
    // holds rows 0..32 (row 32 is written), the update runs over the 32 rows of its domain.
    EXPECT_EQ(s.predicted(0).num_realizations, 4);
    EXPECT_EQ(s.predicted(0).bytes_at_realization, 16 * 33 * 4);
    EXPECT_EQ(s.predicted(0).points_computed_total, 4 * 16 * 32);
    EXPECT_EQ(s.predicted(1).points_computed_total, 4 * 16 * 32);

    const LoweredStats measured = s.measured();
    EXPECT_EQ(measured.func(s.name).num_realizations, 4);
    EXPECT_EQ(measured.func(s.name).bytes_at_realization, 16 * 33 * 4);
    EXPECT_EQ(measured.stage(s.name, 0).points_computed_total, 4 * 16 * 32);
    EXPECT_EQ(measured.stage(s.name, 1).points_computed_total, 4 * 16 * 32);
}

TEST(FeatureAgreement, TilesThatDifferAreSummedOneByOne) {
    // out reads the input, so its tails are guarded: 20 columns in tiles of 8 are 8, 8 and 4.
    // f, computed per tile, needs one more column on each side: 10, 10 and 6, over 8 rows.
    Halide::ImageParam in(Halide::Float(32), 2, "in");
    Halide::Var x("x"), y("y");
    Halide::Func f("f"), out("out");
    f(x, y) = in(x, y) * 2.0f;
    out(x, y) = f(x - 1, y) + f(x, y) + f(x + 1, y) + in(x, y);
    in.set_estimates({{-1, 22}, {0, 8}});
    out.set_estimates({{0, 20}, {0, 8}});
    PerTileProducer s(out, f, {{{8, 8}}, -1, 1, false, false});

    LoopNestBounds bounds(s.dag, s.nest);
    const auto classes = bounds.tile_classes({s.out, 0}, 0);
    ASSERT_EQ(classes.size(), 2u);
    ASSERT_EQ(classes[0].size(), 3u); // first, middle, guarded last
    EXPECT_EQ(classes[0][0].span, (Span{0, 7}));
    EXPECT_EQ(classes[0][1].span, (Span{8, 15}));
    EXPECT_EQ(classes[0][2].span, (Span{16, 19}));
    ASSERT_EQ(classes[1].size(), 1u);
    EXPECT_EQ(classes[1][0].count, 1);

    const ScheduleFeatures predicted = s.predicted();
    EXPECT_EQ(predicted.num_productions, 3);
    EXPECT_EQ(predicted.points_computed_total, (10 + 10 + 6) * 8); // not 3 x the middle tile's 10 x 8
    EXPECT_EQ(predicted.bytes_at_realization, 10 * 8 * 4);         // the largest tile's allocation

    const LoweredStats measured = s.measured();
    EXPECT_EQ(measured.func(s.name).num_productions, 3);
    EXPECT_EQ(measured.stage(s.name, 0).points_computed_total, (10 + 10 + 6) * 8);
    EXPECT_EQ(measured.func(s.name).bytes_at_realization, 10 * 8 * 4);
}

// A guarded loop split twice keeps a whole tile's trips in its tail tile, and Halide 14 makes the
// guard the vector's predicate: the vector slots past the bound run, all lanes off. blur_x reads
// the input, so its tails are guarded; 64 columns (50 rows) in tiles of 48 run 3 + 1 whole vectors
// a row and 2 empty ones; in tiles of 40, 2 + 1 whole, 2 partial (8 lanes each) and 1 empty; in
// tiles of 32, 4 whole. blur_y does not read the input: its tail tile shifts inwards, whole.
// The features count each predicated vector as 16 scalars, and so does the oracle.
TEST(FeatureAgreement, GuardedTailTilesRunTheirVectorsPastTheBound) {
    struct Case {
        int64_t tile, whole, predicated;
    };
    for (const Case c : {Case{48, 4, 2}, Case{40, 3, 3}, Case{32, 4, 0}}) {
        SCOPED_TRACE("blur_x in tiles of " + std::to_string(c.tile));
        testing::BlurPipeline b;
        Halide::Pipeline pipeline(b.by);
        const FunctionDAG dag = FunctionDAG::build(pipeline);
        const int by = dag.node_index(b.by.name()), bx = dag.node_index(b.bx.name());
        LoopNest nest(dag);
        nest.funcs[size_t(by)] = {Site::root(), Site::root(), {{{{48, 48}}, 0, 16, false, false}}};
        nest.funcs[size_t(bx)] = {Site::root(), Site::root(), {{{{c.tile, 50}}, 0, 16, false, false}}};
        inline_the_rest(dag, nest);
        ASSERT_EQ(nest.validate(dag), "");
        const Halide::Target target = strict_target();
        ScheduleFeatures x, y;
        for (const StageFeatures &f : compute_schedule_features(dag, nest, target)) {
            if (f.node == bx) x = f.features;
            if (f.node == by) y = f.features;
        }
        EXPECT_EQ(x.num_vectors, 50 * c.whole);
        EXPECT_EQ(x.num_scalars, 50 * c.predicated * 16);
        EXPECT_EQ(y.num_vectors, 2 * 48 * 48 / 16); // two overlapping tiles of 48 columns
        EXPECT_EQ(y.num_scalars, 0);
        apply(dag, nest);
        const LoweredStats measured = measure_lowered(pipeline, dag, target);
        EXPECT_EQ(measured.stage(b.bx.name(), 0).num_vectors, x.num_vectors);
        EXPECT_EQ(measured.stage(b.bx.name(), 0).num_scalars, x.num_scalars);
        EXPECT_EQ(measured.stage(b.by.name(), 0).num_vectors, y.num_vectors);
        EXPECT_EQ(measured.stage(b.by.name(), 0).num_scalars, 0);
    }
}

// out(x) reads f(x / 3) and f(x / 3 + 1); f is computed per tile of two columns of out, which
// needs 2, 3, 2, 2, 3, 2, 2, 3 columns of f over 16 columns: the interior tiles differ with a
// period of three, and no one tile stands for them.
struct Upsampled {
    Halide::Var x{"x"};
    Halide::Func f{"f"}, out{"out"};
    Upsampled() {
        f(x) = x * x;
        out(x) = f(x / 3) + f(x / 3 + 1);
        out.set_estimates({{0, 16}});
    }
};

// The producer's productions and points (its pure stage), predicted and measured alike.
void expect_productions_and_points(PerTileProducer &s, int64_t productions, int64_t points) {
    EXPECT_EQ(s.predicted().num_productions, productions);
    EXPECT_EQ(s.predicted().points_computed_total, points);
    const LoweredStats measured = s.measured();
    EXPECT_EQ(measured.func(s.name).num_productions, productions);
    EXPECT_EQ(measured.stage(s.name, 0).points_computed_total, points);
}

TEST(FeatureAgreement, PeriodicInteriorTilesAreMeasuredOverAWindow) {
    Upsampled u;
    PerTileProducer s(u.out, u.f, {{{2}}, -1, 1, false, false});
    expect_productions_and_points(s, 8, 19);
}

TEST(FeatureAgreement, LoopsLeftUnsplitRunWholeInEveryProduction) {
    // f in tiles of 2: the middle production (columns 2..3) is one tile, so apply() leaves f's
    // loop unsplit, and productions of 3 columns compute 3, not two shifted tiles (4).
    Upsampled u;
    PerTileProducer s(u.out, u.f, {{{2}}, -1, 1, false, false}, {{{2}}, -1, 1, false, false});
    LoopNestBounds bounds(s.dag, s.nest);
    EXPECT_EQ(bounds.trips_if_split({s.producer, 0}, 0, 0), 1);
    EXPECT_EQ(s.predicted().points_computed_total, 19);
    EXPECT_EQ(s.measured().stage(s.name, 0).points_computed_total, 19);
}

TEST(FeatureAgreement, ShiftedSplitsComputeWholeTilesOfNarrowerProductions) {
    // out reads an input, so its tiles of 4 over 9 columns are guarded: the last is one column.
    // f, split in 2 (as its middle production, 4 columns, needs), shifts its tile inwards there
    // and computes 2 columns: 4 + 4 + 2.
    Halide::ImageParam in(Halide::Int(32), 1, "in");
    Halide::Var x("x");
    Halide::Func f("f"), out("out");
    f(x) = x * 3;
    out(x) = f(x) + in(x);
    in.set_estimates({{0, 9}});
    out.set_estimates({{0, 9}});
    PerTileProducer s(out, f, {{{4}}, -1, 1, false, false}, {{{2}}, -1, 1, false, false});
    expect_productions_and_points(s, 3, 10);
}

TEST(FeatureAgreement, LoopsInTilesOneWideRunOverEveryProductionsExtent) {
    // out upsamples mid by 2 in tiles of 2 (the last shifted to 7..8): mid is computed per tile,
    // one column but the last (3..4); leaf per column of mid (mid's tiles are one wide, so its
    // loop runs at level 0, though the middle production has a single column): 1+1+1+1+2.
    Halide::Var x("x");
    Halide::Func leaf("leaf"), mid("mid"), out("out");
    leaf(x) = x * 3;
    mid(x) = leaf(x) + 1;
    out(x) = mid(x / 2);
    out.set_estimates({{0, 9}});
    PerTileProducer s(out, mid, {{{2}}, -1, 1, false, false}, {{{1}}, -1, 1, false, false});
    const int l = s.dag.node_index(leaf.name());
    s.nest.funcs[size_t(l)] = {Site::at({s.producer, 0}, 0), Site::at({s.producer, 0}, 0), {StageTiling{}}};
    ASSERT_EQ(s.nest.validate(s.dag), "");
    std::map<int, ScheduleFeatures> predicted;
    for (const StageFeatures &f : compute_schedule_features(s.dag, s.nest, s.target)) predicted[f.node] = f.features;
    EXPECT_EQ(predicted[s.producer].num_productions, 5);
    EXPECT_EQ(predicted[l].num_productions, 6);
    const LoweredStats measured = s.measured();
    EXPECT_EQ(measured.func(s.name).num_productions, 5);
    EXPECT_EQ(measured.func(leaf.name()).num_productions, 6);
}

// out runs in parallel over x, y and c fused, unsplit; f is computed (one point) per iteration,
// read by out directly or through an inlined g. Halide 14 allocates f over all 8 columns there:
// the innermost fused variable's bounds are taken over its whole range.
void expect_fused_loops_widen_allocations(bool through_inlined) {
    Halide::Var x("x"), y("y"), c("c");
    Halide::Func f("f"), g("g"), out("out");
    f(x, y, c) = x + 7 * y + 13 * c;
    g(x, y, c) = f(x, y, c) * 3;
    out(x, y, c) = (through_inlined ? g(x, y, c) : f(x, y, c)) + 1;
    out.set_estimates({{0, 8}, {0, 4}, {0, 3}});
    PerTileProducer s(out, f, {{{1, 1, 1}}, -1, 1, true, false}); // g, when used, is inlined

    const ScheduleFeatures predicted = s.predicted();
    EXPECT_EQ(predicted.num_productions, 8 * 4 * 3);
    EXPECT_EQ(predicted.points_computed_total, 8 * 4 * 3); // computed tightly
    EXPECT_EQ(predicted.bytes_at_realization, 8 * 4);      // allocated over x

    const LoweredStats measured = s.measured();
    EXPECT_EQ(measured.stage(s.name, 0).points_computed_total, 8 * 4 * 3);
    EXPECT_EQ(measured.func(s.name).bytes_at_realization, 8 * 4);
}

TEST(FeatureAgreement, FusingThreeUnsplitLoopsWidensAllocations) { expect_fused_loops_widen_allocations(false); }

TEST(FeatureAgreement, WidenedAllocationsReachThroughInlinedConsumers) { expect_fused_loops_widen_allocations(true); }

// out(x, y, c, n) over 8 x 4 x 3 x 2, reading f pointwise.
struct Batched {
    Halide::Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
    Halide::Func f{"f"}, out{"out"};
    Batched() {
        f(x, y, c, n) = x + 7 * y + 13 * c + 17 * n;
        out(x, y, c, n) = f(x, y, c, n) + 1;
        out.set_estimates({{0, 8}, {0, 4}, {0, 3}, {0, 2}});
    }
};

TEST(FeatureAgreement, SplitVariablesKeepTightAllocationsInFusedLoops) {
    // out's x is split in two; x_0, y, c and n are fused. f, computed per iteration, is
    // allocated over its 2 columns (x is split) but all 4 rows (y is fused in unsplit, and is
    // not one of the two outermost). Its rows of 2 floats are padded to 16 (64 bytes:
    // Node::storage_padding).
    Batched b;
    PerTileProducer s(b.out, b.f, {{{2, 1, 1, 1}}, -1, 1, true, false});
    EXPECT_EQ(s.predicted().points_computed_total, 8 * 4 * 3 * 2);
    EXPECT_EQ(s.predicted().bytes_at_realization, 16 * 4 * 4);
    const LoweredStats measured = s.measured();
    EXPECT_EQ(measured.stage(s.name, 0).points_computed_total, 8 * 4 * 3 * 2);
    EXPECT_EQ(measured.func(s.name).bytes_at_realization, 16 * 4 * 4);
}

// Every pattern of split (tiles of 2) and unsplit variables in parallel fuses of three and four:
// f, computed per iteration, is allocated as Halide 14 does, loosely along some unsplit variables
// (LoopNestBounds::cached). The extents 6, 10, 14 and 22 tell which: a dimension is allocated
// whole exactly where the element count is a multiple of its odd factor.
TEST(FeatureAgreement, FusedLoopsWidenAllocationsAsHalideDoes) {
    const int64_t extents[4] = {6, 10, 14, 22}, odd[4] = {3, 5, 7, 11};
    int widened = 0;
    for (int dims = 3; dims <= 4; dims++) {
        for (int split = 0; split < (1 << dims); split++) {
            Halide::Var x("x"), y("y"), c("c"), n("n");
            std::vector<Halide::Expr> at{x, y, c};
            if (dims == 4) at.push_back(n);
            Halide::Func f("f"), out("out");
            f(at) = x + 7 * y + 13 * c;
            out(at) = f(at) + 1;
            Halide::Region estimates;
            std::vector<int64_t> tile;
            std::string pattern; // innermost first: S split, U unsplit
            for (int d = 0; d < dims; d++) {
                estimates.push_back({0, int(extents[d])});
                tile.push_back((split >> d) & 1 ? 2 : 1);
                pattern += (split >> d) & 1 ? "S" : "U";
            }
            out.set_estimates(estimates);
            SCOPED_TRACE(pattern);
            PerTileProducer s(out, f, {{tile}, -1, 1, true, false});
            const int64_t measured = s.measured().func(s.name).bytes_at_realization;
            EXPECT_EQ(s.predicted().bytes_at_realization, measured);
            for (int d = 0; d < dims; d++) widened += (measured / 4) % odd[d] == 0;
        }
    }
    EXPECT_EQ(widened, 12); // the patterns do exercise the rule
}

TEST(FeatureAgreement, FusedLoopsWidenAllocationsAtDeeperLevelsToo) {
    // As SplitVariablesKeepTightAllocationsInFusedLoops, with x split again at a second tiling
    // level and f computed there, per column inside the fused loop: it is allocated over its one
    // column, and still all 4 rows.
    Batched b;
    PerTileProducer s(b.out, b.f, {{{2, 1, 1, 1}, {1, 1, 1, 1}}, -1, 1, true, false});
    s.nest.funcs[size_t(s.producer)].compute = s.nest.funcs[size_t(s.producer)].store = Site::at({s.out, 0}, 1);
    ASSERT_EQ(s.nest.validate(s.dag), "");
    EXPECT_EQ(s.predicted().bytes_at_realization, 1 * 4 * 4);
    EXPECT_EQ(s.measured().func(s.name).bytes_at_realization, 1 * 4 * 4);
}

// out(x, c) concatenates a (channels 0..1) and b (channels 2..4), as the generator's concat does;
// out runs in tiles of 8 columns by one channel, so each tile reads one of them, and Halide 14
// skips the other's production there (its allocation stays: a select loads both sides). p, read
// only by a and computed beside it, is loaded only where a is produced, so it is not even
// allocated elsewhere. With `b_twice`, b is read twice in one branch: lowering lets the common
// read outside the select, which makes it unconditional.
struct Concatenated {
    Halide::Var x{"x"}, c{"c"};
    Halide::Func p{"p"}, a{"a"}, b{"b"}, out{"out"};
    explicit Concatenated(bool b_twice) {
        p(x, c) = x * 3 + c;
        a(x, c) = p(x, c) + 1;
        b(x, c) = x - c;
        const Halide::Expr from_b = b(x, Halide::max(c - 2, 0));
        out(x, c) = Halide::select(c < 2, a(x, Halide::min(c, 1)), b_twice ? from_b * from_b + 1 : from_b);
        out.set_estimates({{0, 16}, {0, 5}});
    }
};

TEST(FeatureAgreement, ProductionsNoConsumerReadsAreSkipped) {
    Concatenated cat(false);
    PerTileProducer s(cat.out, cat.a, {{{8, 1}}, -1, 1, false, false}); // 2 x 5 tiles
    const int p = s.dag.node_index(cat.p.name());                       // names are unique per process: "p$2"
    s.nest.funcs[size_t(p)] = {Site::at({s.out, 0}, 0), Site::at({s.out, 0}, 0), {StageTiling{}}};
    const int b = s.dag.node_index(cat.b.name());
    s.nest.funcs[size_t(b)] = {Site::at({s.out, 0}, 0), Site::at({s.out, 0}, 0), {StageTiling{}}};
    ASSERT_EQ(s.nest.validate(s.dag), "");
    const Edge &a_to_out = s.dag.edges[size_t(s.dag.nodes[size_t(s.producer)].outgoing_edges[0])];
    EXPECT_FALSE(a_to_out.use.unconditional());
    EXPECT_TRUE(a_to_out.use.eval({{0, 7}, {1, 1}}));
    EXPECT_FALSE(a_to_out.use.eval({{0, 7}, {2, 2}}));
    EXPECT_TRUE(a_to_out.use.eval({{0, 7}, {1, 2}})); // the condition varies: either side may run

    std::map<int, ScheduleFeatures> predicted;
    for (const StageFeatures &f : compute_schedule_features(s.dag, s.nest, s.target)) predicted[f.node] = f.features;
    EXPECT_EQ(predicted[s.producer].num_realizations, 10);
    EXPECT_EQ(predicted[s.producer].num_productions, 4); // channels 0 and 1
    EXPECT_EQ(predicted[s.producer].points_computed_total, 4 * 8);
    EXPECT_EQ(predicted[p].num_realizations, 4);
    EXPECT_EQ(predicted[p].num_productions, 4);
    EXPECT_EQ(predicted[b].num_realizations, 10);
    EXPECT_EQ(predicted[b].num_productions, 6); // channels 2..4

    const LoweredStats measured = s.measured();
    EXPECT_EQ(measured.func(cat.a.name()).num_realizations, 10);
    EXPECT_EQ(measured.func(cat.a.name()).num_productions, 4);
    EXPECT_EQ(measured.stage(cat.a.name(), 0).points_computed_total, 4 * 8);
    EXPECT_EQ(measured.func(cat.p.name()).num_realizations, 4);
    EXPECT_EQ(measured.func(cat.p.name()).num_productions, 4);
    EXPECT_EQ(measured.func(cat.b.name()).num_realizations, 10);
    EXPECT_EQ(measured.func(cat.b.name()).num_productions, 6);
}

TEST(FeatureAgreement, CommonReadsInOneBranchAreUnconditional) {
    Concatenated cat(true);
    PerTileProducer s(cat.out, cat.b, {{{8, 1}}, -1, 1, false, false});
    EXPECT_TRUE(s.dag.edges[size_t(s.dag.nodes[size_t(s.producer)].outgoing_edges[0])].use.unconditional());
    EXPECT_EQ(s.predicted().num_productions, 10);
    EXPECT_EQ(s.measured().func(s.name).num_productions, 10);
}

// out(x, c) reads an input, so its tails are guarded (GuardWithIf); its 6 channels run in tiles
// of 4, then 2 (level 1), then single channels (the point loop). Halide tests the bound in the
// innermost channel loop, so in the tail tile (channels 4..5) the level-1 loop still runs twice,
// the second time over no channel: a Func computed there is produced unless nothing it computes
// is needed (Halide trims such iterations). With level-1 tiles of one channel, the level-1 loop
// is the innermost and holds the bound itself: no empty iterations.
struct GuardedChannels {
    Halide::ImageParam in{Halide::Int(32), 2, "in"};
    Halide::Var x{"x"}, c{"c"};
    Halide::Func row{"row"}, plane{"plane"}, out{"out"};
    GuardedChannels() {
        row(x) = x * 3;          // needed whatever the channels
        plane(x, c) = x * 5 + c; // needed per channel
        out(x, c) = row(x) + plane(x, c) + in(x, c);
        in.set_estimates({{0, 16}, {0, 6}});
        out.set_estimates({{0, 16}, {0, 6}});
    }
    // `at`: the Funcs computed inside out's level-1 channel loop (the others inlined).
    PerTileProducer schedule(const std::vector<Halide::Func> &at, int64_t level1_channels) {
        PerTileProducer s(out, at[0], {{{16, 4}, {16, level1_channels}}, -1, 1, false, false});
        for (const Halide::Func &f : at) {
            const int n = s.dag.node_index(f.name());
            s.nest.funcs[size_t(n)] = {Site::at({s.out, 0}, 1), Site::at({s.out, 0}, 1), {StageTiling{}}};
        }
        EXPECT_EQ(s.nest.validate(s.dag), "");
        return s;
    }
};

TEST(FeatureAgreement, GuardedTailsKeepTheTripsOfOuterTileLoops) {
    GuardedChannels g;
    PerTileProducer s = g.schedule({g.row, g.plane}, 2); // tiles 0..1, 2..3 | 4..5, 6..5 (empty)
    const int plane = s.dag.node_index(g.plane.name());
    std::map<int, ScheduleFeatures> predicted;
    for (const StageFeatures &f : compute_schedule_features(s.dag, s.nest, s.target)) predicted[f.node] = f.features;
    EXPECT_EQ(predicted[s.producer].num_productions, 4);
    EXPECT_EQ(predicted[s.producer].points_computed_total, 4 * 16);
    EXPECT_EQ(predicted[plane].num_productions, 4);
    EXPECT_EQ(predicted[plane].points_computed_total, 6 * 16); // nothing in the empty tile
    const LoweredStats measured = s.measured();
    EXPECT_EQ(measured.func(g.row.name()).num_productions, 4);
    EXPECT_EQ(measured.stage(g.row.name(), 0).points_computed_total, 4 * 16);
    EXPECT_EQ(measured.func(g.plane.name()).num_productions, 4);
    EXPECT_EQ(measured.stage(g.plane.name(), 0).points_computed_total, 6 * 16);
}

TEST(FeatureAgreement, GuardedEmptyTilesThatComputeNothingAreTrimmed) {
    GuardedChannels g;
    PerTileProducer s = g.schedule({g.plane}, 2);
    EXPECT_EQ(s.predicted().num_productions, 3);
    EXPECT_EQ(s.measured().func(g.plane.name()).num_productions, 3);
}

TEST(FeatureAgreement, GuardedInnermostTileLoopsStopAtTheBound) {
    GuardedChannels g;
    PerTileProducer s = g.schedule({g.row}, 1); // channels 0..3 | 4, 5: no empty tiles
    EXPECT_EQ(s.predicted().num_productions, 6);
    EXPECT_EQ(s.measured().func(g.row.name()).num_productions, 6);
}

TEST(FloatToIntegerCasts, AreNeverInlined) {
    // A fresh pipeline per schedule: a Pipeline keeps the code it compiled first. (Halide makes
    // the Funcs' names unique: "quantized$2".)
    struct Quantizer {
        Halide::Func wave{"wave"}, quantized{"quantized"}, out{"out"};
        Halide::Pipeline pipeline;
        Quantizer() {
            Halide::Var x("x"), y("y");
            wave(x, y) = Halide::sin(Halide::cast<float>(x + 3 * y) * 0.1f) * 200.0f; // both signs
            quantized(x, y) = Halide::cast<int8_t>(Halide::clamp(Halide::round(wave(x, y)), -128.0f, 127.0f));
            out(x, y) = Halide::cast<uint8_t>(quantized(x, y));
            out.set_estimates({{0, 64}, {0, 32}});
            pipeline = Halide::Pipeline(out);
        }
        Halide::Buffer<uint8_t> realize() {
            Halide::Buffer<uint8_t> b(64, 32);
            pipeline.realize(b, strict_target());
            return b;
        }
    };
    Quantizer root;
    root.wave.compute_root();
    root.quantized.compute_root();
    const Halide::Buffer<uint8_t> expected = root.realize();
    // Computed at root, the int8 step is kept: negative values wrap to 128..255, not 0.
    int negative = 0;
    for (int j = 0; j < 32; j++) {
        for (int i = 0; i < 64; i++) {
            if (std::sin(float(i + 3 * j) * 0.1f) * 200.0f > -2.0f) continue;
            negative++;
            EXPECT_GE(expected(i, j), 128) << "at (" << i << ", " << j << ")";
        }
    }
    EXPECT_GT(negative, 500);
    Quantizer inlined;
    inlined.wave.compute_root();
    if (runner::compare_buffers(expected, inlined.realize()).empty()) {
        // On some CPUs (AVX-512) the direct float-to-uint8 conversion of a negative value happens
        // to wrap as the int8 step would: the bug is then seen in the code, not the output.
        Quantizer again;
        again.wave.compute_root();
        const std::string path = ::testing::TempDir() + "quantized.stmt";
        again.pipeline.compile_to_lowered_stmt(path, {}, Halide::Text, strict_target());
        std::ifstream in(path);
        std::stringstream code;
        code << in.rdbuf();
        EXPECT_FALSE(std::regex_search(code.str(), std::regex("[^u]int8\\(")))
            << "Halide no longer drops the int8 step of an inlined cast: converts_float_to_integer can go";
    }

    for (uint64_t seed = 0; seed < 6; seed++) {
        Quantizer searched;
        const FunctionDAG dag = FunctionDAG::build(searched.pipeline);
        const int q = dag.node_index(searched.quantized.name());
        ASSERT_GE(q, 0);
        EXPECT_TRUE(converts_float_to_integer(dag, q));
        EXPECT_FALSE(can_inline(dag, q));
        EXPECT_FALSE(converts_float_to_integer(dag, dag.node_index(searched.wave.name())));
        RandomLoopNestOptions options;
        options.inline_probability = 1; // inline whatever may be inlined
        const LoopNest nest = random_loop_nest(dag, strict_target(), seed, options);
        ASSERT_EQ(nest.validate(dag), "");
        EXPECT_FALSE(nest.inlined(q)) << schedule_source(dag, nest);
        apply(dag, nest);
        EXPECT_EQ(runner::compare_buffers(expected, searched.realize()), "") << schedule_source(dag, nest);
    }
}

} // namespace
// Halide 14 loads a stride-2 vector as a dense vector twice as wide, and may mark that load
// aligned when it is not: a row of odd extent (31 = 2 x 15 + 1, what a downsample by 2 of 16
// lanes reads) read at a constant row offset under an unrolled loop, in a stack allocation. An
// aligned 64-byte load at such an address faults on AVX-512 (this schedule segfaulted in a
// dataset run). Padding the row to 64 bytes (align_storage) makes every row start aligned; the
// DAG asks for it on exactly the Funcs read at a stride, and a nest storing one inside a loop
// gets the directive, its features count the padded allocation, and the output is right.
struct StridedReader {
    Halide::Var x{"x"}, c{"c"};
    Halide::Func f{"f"}, dense{"dense"}, g{"g"};
    Halide::Buffer<float> in{1000, 4};
    Halide::Pipeline pipeline;
    StridedReader() {
        in.for_each_element([&](int i, int j) { in(i, j) = float(i % 97) + 0.5f * float(j); });
        f(x, c) = in(Halide::clamp(x, 0, 999), Halide::clamp(c, 0, 3)) * 2.0f;
        dense(x, c) = f(x, c) + 1.0f;            // unit stride: no padding needed
        g(x, c) = f(2 * x, c) + dense(x + 1, c); // stride 2 along x
        g.set_estimates({{0, 256}, {0, 4}});
        pipeline = Halide::Pipeline(g);
    }
    Halide::Buffer<float> run() { return pipeline.realize({256, 4}, strict_target()); }
};

TEST(StridedReads, OddRowsArePaddedToAlignedStorage) {
    StridedReader root;
    root.f.compute_root();
    root.dense.compute_root();
    const Halide::Buffer<float> expected = root.run();

    StridedReader plain;
    const FunctionDAG dag = FunctionDAG::build(plain.pipeline);
    const int f = dag.node_index(plain.f.name()), dense = dag.node_index(plain.dense.name());
    ASSERT_GE(f, 0);
    ASSERT_GE(dense, 0);
    EXPECT_EQ(dag.nodes[size_t(f)].storage_alignment, 16); // 64 bytes of float32
    EXPECT_EQ(dag.nodes[size_t(dense)].storage_alignment, 1);
    EXPECT_EQ(dag.nodes[size_t(dag.node_index(plain.g.name()))].storage_alignment,
              1); // the output's buffer is the caller's
    {
        // Through a consumer that may be inlined: a(x) is read at stride 2 once b is inlined.
        Halide::Func a("a"), b("b"), out("out");
        Halide::Var x("x");
        a(x) = Halide::cast<float>(x);
        b(x) = a(x) * 2.0f;
        out(x) = b(2 * x);
        out.set_estimates({{0, 64}});
        const FunctionDAG chain = FunctionDAG::build(Halide::Pipeline(out));
        EXPECT_EQ(chain.nodes[size_t(chain.node_index(a.name()))].storage_alignment, 16);
        EXPECT_EQ(chain.nodes[size_t(chain.node_index(b.name()))].storage_alignment, 16);
    }

    // The reproducer, scheduled by hand: f's rows of 31 floats, the second row read at offset 31.
    StridedReader by_hand;
    Halide::Var xo("xo"), co("co"), ci("ci");
    by_hand.g.split(by_hand.x, xo, by_hand.x, 16)
        .split(by_hand.c, co, ci, 2)
        .reorder(by_hand.x, ci, xo, co)
        .vectorize(by_hand.x)
        .unroll(ci);
    by_hand.f.compute_at(by_hand.g, xo).vectorize(by_hand.x, 16, Halide::TailStrategy::GuardWithIf);
    by_hand.f.align_storage(by_hand.x, int(dag.nodes[size_t(f)].storage_alignment));
    EXPECT_EQ(runner::compare_buffers(expected, by_hand.run()), "");

    // Nests that store f inside g's loops get the directive, and their features count the padding.
    const Halide::Target target = strict_target();
    int stored_inside = 0;
    for (uint64_t seed = 0; seed < 40 && stored_inside < 3; seed++) {
        StridedReader r;
        const FunctionDAG d = FunctionDAG::build(r.pipeline);
        const LoopNest nest = random_loop_nest(d, target, seed);
        const FuncSchedule &fs = nest.funcs[size_t(d.node_index(r.f.name()))];
        // (dense may be padded too where its stored rows are narrow: Node::storage_padding.)
        const bool aligned = std::regex_search(schedule_source(d, nest), std::regex(R"(\bf(_\d+)?\.align_storage)"));
        EXPECT_EQ(aligned, fs.store.kind == Site::At) << schedule_source(d, nest);
        if (!aligned) continue;
        stored_inside++;
        const std::vector<StageFeatures> predicted = compute_schedule_features(d, nest, target);
        apply(d, nest);
        AgreementReport report(0.0);
        report.add(d, nest, predicted, measure_lowered(r.pipeline, d, target), "strided");
        EXPECT_EQ(report.feature("bytes_at_realization").exact, report.feature("bytes_at_realization").compared);
        EXPECT_EQ(runner::compare_buffers(expected, r.run()), "") << schedule_source(d, nest);
    }
    EXPECT_GT(stored_inside, 0);
}

// f per 32 x 8 tile of g, which reads it through a clamp at x = 99 of its 128 columns: the last
// column of tiles needs 4 of f's columns, the others 32, so Halide sizes f's allocation at run
// time and takes its 1 KiB from the heap in each of the 8 realizations. Without the clamp every
// tile needs 32 x 8: a constant size, on the stack. The features and the lowered code agree.
TEST(HeapRealizations, SizesThatChangeFromTileToTileAreMadeAtRunTime) {
    for (const bool clamped : {true, false}) {
        Halide::Var x("x"), y("y");
        Halide::Func f("f"), g("g");
        f(x, y) = Halide::cast<float>(x + y);
        g(x, y) = f(clamped ? Halide::clamp(x, 0, 99) : x, y) * 2.0f;
        g.set_estimates({{0, 128}, {0, 16}});
        const Halide::Pipeline pipeline(g);
        const FunctionDAG dag = FunctionDAG::build(pipeline);
        const int gi = dag.node_index(g.name()), fi = dag.node_index(f.name());
        LoopNest nest(dag);
        nest.funcs[size_t(gi)] = {Site::root(), Site::root(), {{{{32, 8}}, 0, 8, false, false}}};
        nest.funcs[size_t(fi)] = {Site::at({gi, 0}, 0), Site::at({gi, 0}, 0), {{{}, 0, 8, false, false}}};
        ASSERT_EQ(nest.validate(dag), "");
        const Halide::Target target = strict_target();
        const std::vector<StageFeatures> predicted = compute_schedule_features(dag, nest, target);
        apply(dag, nest);
        const LoweredStats lowered = measure_lowered(pipeline, dag, target);
        const ScheduleFeatures &ff = predicted[size_t(std::find_if(predicted.begin(), predicted.end(),
                                                                   [&](const auto &s) { return s.node == fi; }) -
                                                      predicted.begin())]
                                         .features;
        EXPECT_EQ(ff.num_realizations, 8);
        EXPECT_EQ(ff.bytes_at_realization, 32 * 8 * 4);
        EXPECT_EQ(ff.heap_realizations, clamped ? 8 : 0) << clamped;
        EXPECT_EQ(lowered.func(f.name()).heap_realizations, clamped ? 8 : 0) << lowered.stmt;
    }
}

// A JIT allocator that follows every block with a canary and counts the blocks whose canary a
// pipeline overwrote when it frees them.
struct CanaryHeap {
    static constexpr size_t kCanary = 1 << 16, kHeader = 64;
    static inline int overwritten = 0;
    static void *allocate(Halide::JITUserContext *, size_t n) {
        auto *block = static_cast<unsigned char *>(std::malloc(kHeader + n + kCanary));
        std::memcpy(block, &n, sizeof n);
        std::memset(block + kHeader + n, 0xA5, kCanary);
        return block + kHeader;
    }
    static void release(Halide::JITUserContext *, void *p) {
        unsigned char *block = static_cast<unsigned char *>(p) - kHeader;
        size_t n;
        std::memcpy(&n, block, sizeof n);
        for (size_t i = 0; i < kCanary; i++) {
            if (block[kHeader + n + i] != 0xA5) {
                overwritten++;
                break;
            }
        }
        std::free(block);
    }
};

// b's update has guarded tails; its rows are bounded by two consumers (bounds Halide keeps as
// variables, which the bug needs).
struct NestedGuards {
    Halide::Var x{"x"}, y{"y"};
    Halide::Func b{"b"}, p{"p"}, out{"out"};
    Halide::Buffer<uint16_t> in{100, 100};
    Halide::Pipeline pipeline;
    NestedGuards() {
        in.for_each_element([&](int i, int j) { in(i, j) = uint16_t(i * 7 + j); });
        b(x, y) = in(Halide::clamp(x, 0, 99), Halide::clamp(y, 0, 99));
        b(x, y) += Halide::cast<uint16_t>(y);
        p(x, y) = b(x, y * 3) + b(x, y * 3 + 2);
        out(x, y) = p(x, y / 3) + b(x, y + 1);
        out.set_estimates({{0, 100}, {0, 100}});
        pipeline = Halide::Pipeline(out);
        pipeline.jit_handlers().custom_malloc = CanaryHeap::allocate;
        pipeline.jit_handlers().custom_free = CanaryHeap::release;
    }
    Halide::Buffer<uint16_t> run() { return pipeline.realize({100, 100}, strict_target()); }
};

// Halide 14 drops the guard of a GuardWithIf split whose inner loop is split again by a divisor
// (rows in tiles of 32, then 16): the bounds of the loop's let (b.s1.y) are given the names
// b.s1.y.min and b.s1.y.max, which are b's own bounds, so loop partitioning proves the guard
// `b.s1.y <= b.s1.y.max` true and the last tile writes whole rows past b's allocation. It
// happens at the first lowering of that name in a process only, so this test cannot show the
// upstream bug reliably; it checks that apply()'s renamed loop stays in bounds.
TEST(NestedGuardedSplits, StayInBounds) {
    NestedGuards root;
    root.b.compute_root();
    root.p.compute_root();
    const Halide::Buffer<uint16_t> expected = root.run();

    for (const int64_t inner : {16, 5}) { // dividing and not
        NestedGuards searched;
        const FunctionDAG dag = FunctionDAG::build(searched.pipeline);
        LoopNest nest(dag);
        for (Halide::Func f : {searched.out, searched.p}) {
            nest.funcs[size_t(dag.node_index(f.name()))] = {Site::root(), Site::root(), {StageTiling()}};
        }
        StageTiling update;
        update.tiles = {{100, 32}, {100, inner}}; // loops x, y (innermost first)
        nest.funcs[size_t(dag.node_index(searched.b.name()))] = {Site::root(), Site::root(), {StageTiling(), update}};
        ASSERT_EQ(nest.validate(dag), "");
        const std::string source = schedule_source(dag, nest);
        EXPECT_NE(source.find(".update(0).rename(y, y_s1_r);"), std::string::npos) << source;
        EXPECT_NE(source.find(".update(0).split(y_s1_r, y_s1_0, y_s1_t0, 32, TailStrategy::GuardWithIf);"),
                  std::string::npos)
            << source;
        EXPECT_EQ(source.find(".rename(x"), std::string::npos) << source; // x is not split
        CanaryHeap::overwritten = 0;
        apply(dag, nest);
        EXPECT_EQ(runner::compare_buffers(expected, searched.run()), "") << source;
        EXPECT_EQ(CanaryHeap::overwritten, 0) << source;
    }
}

TEST(StoragePadding, NarrowRowsArePaddedWhereAnOuterStrideIsTwoToFour) {
    Halide::Func in_b("b"), out("out");
    Halide::Var x("x"), y("y");
    in_b(x, y) = Halide::cast<uint16_t>(x + y);
    out(x, y) = in_b(x, y) + in_b(x, y + 1);
    out.set_estimates({{0, 100}, {0, 100}});
    const FunctionDAG dag = FunctionDAG::build(Halide::Pipeline(out));
    const Node &b = dag.nodes[size_t(dag.node_index(in_b.name()))]; // uint16, storage_alignment 1
    ASSERT_EQ(b.storage_alignment, 1);
    EXPECT_EQ(b.storage_padding({{0, 3}, {0, 9}}), 32); // rows of 4: 64 bytes of uint16
    EXPECT_EQ(b.storage_padding({{0, 1}, {0, 9}}), 32); // rows of 2
    EXPECT_EQ(b.storage_padding({{0, 0}, {0, 2}}), 1);  // one column: y is dense
    EXPECT_EQ(b.storage_padding({{0, 4}, {0, 9}}), 1);  // rows of 5: strides of 5 and more
    EXPECT_EQ(b.storage_padding({{0, 3}, {0, 0}}), 1);  // one row: no outer stride is used
    EXPECT_EQ(b.storage_padding({{0, 0}, {0, 0}}), 1);
    EXPECT_EQ(b.stored_region({{0, 3}, {0, 9}})[0].extent(), 32);
    EXPECT_EQ(b.stored_region({{0, 39}, {0, 9}})[0].extent(), 40);
}

} // namespace schedforge::featurize
