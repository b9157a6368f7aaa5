// The beam search on random pipelines: every schedule it produces (greedy, beam, dropout samples)
// compiles and computes the compute_root schedule's output, and obeys the enabled pruning rules;
// the same seed gives the same schedule whatever the thread count, different dropout seeds give
// varied schedules. Also the cost terms on hand-made features and bad search options.
#include "common/errors.h"
#include "common/rng.h"
#include "featurize/apply.h"
#include "featurize/cost_terms.h"
#include "featurize/loop_nest_text.h"
#include "featurize/random_loop_nest.h"
#include "generator/build.h"
#include "generator/config.h"
#include "generator/synthesize.h"
#include "runner/host_target.h"
#include "runner/output_check.h"
#include "sampler/beam_search.h"
#include "sampler/cost_model.h"
#include "sampler/search_options.h"
#include "sampler/successors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

namespace schedforge::sampler {
namespace {

namespace sf = schedforge::featurize;

const std::string kSmall = std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/generator/small.yaml";
const std::string kDefault = std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/generator/default.yaml";

Halide::Target strict_target() { return runner::jit_target().with_feature(Halide::Target::StrictFloat); }
// For tests that search and featurize but run nothing: the same decisions on any host (the
// host's vector width would change the tilings the search enumerates).
Halide::Target avx512_target() {
    return Halide::Target("x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41-strict_float");
}

SearchOptions options(int beam, int passes, double dropout = 1, uint64_t seed = 0) {
    SearchOptions o;
    o.beam_size = beam;
    o.passes = passes;
    o.dropout = dropout;
    o.seed = seed;
    o.cores = 4; // fixed, so schedules do not depend on the machine
    o.core_cache_bytes = sf::kCoreCacheBytes;
    o.shared_cache_bytes_per_core = sf::kSharedCacheBytesPerCore;
    return o;
}

SearchResult search(const sf::FunctionDAG &dag, const SearchOptions &o) {
    ManualCostModel model(o.coefficients);
    return beam_search(dag, strict_target(), model, o);
}

// The pruning rules of `o` hold for the searched schedule.
void expect_pruning_rules(const sf::FunctionDAG &dag, const SearchResult &r, const SearchOptions &o) {
    const SuccessorGenerator gen(dag, strict_target(), o);
    sf::LoopNestBounds bounds(dag, r.nest);
    for (const sf::StageFeatures &s : r.features) {
        const sf::FuncSchedule &fs = r.nest.funcs[size_t(s.node)];
        SCOPED_TRACE(dag.nodes[size_t(s.node)].name + " stage " + std::to_string(s.stage));
        ASSERT_TRUE(s.scheduled);
        EXPECT_FALSE(gen.recomputes_too_much(r.nest, s)); // the pure stage, inlined or not
        EXPECT_FALSE(gen.realizes_too_much_inside(r.nest, s));
        if (fs.compute.kind == sf::Site::Inline) continue;
        const sf::StageTiling &t = fs.stages[size_t(s.stage)];
        if (t.vector_loop >= 0) {
            EXPECT_EQ(t.vector_width, sf::native_vector_width(dag, {s.node, s.stage}, strict_target()));
        }
        EXPECT_TRUE(!t.parallel || fs.compute.kind == sf::Site::Root); // parallel only outermost
        if (t.unroll) {
            // Unrolled point tiles divide the loops around them (a Halide 14 miscompile otherwise).
            const sf::Region &b = bounds.production_bounds({s.node, s.stage});
            const std::vector<int64_t> &point = t.tiles.back();
            for (size_t l = 0; l < point.size(); l++) {
                const int64_t around = t.tiles.size() >= 2 ? t.tiles[t.tiles.size() - 2][l] : b[l].extent();
                EXPECT_EQ(around % point[l], 0) << "loop " << l;
            }
        }
        if (fs.compute.kind == sf::Site::Root && o.pruning.max_serial_root_points > 0) {
            const sf::Stage &st = dag.nodes[size_t(s.node)].stages[size_t(s.stage)];
            const sf::Region &b = bounds.production_bounds({s.node, s.stage});
            double points = 1;
            for (size_t l = 0; l < st.loops.size(); l++) points *= double(std::max<int64_t>(b[l].extent(), 1));
            if (points > o.pruning.max_serial_root_points) {
                EXPECT_FALSE(t.tiles.empty()) << "serial, " << points;
            }
        }
        if (fs.compute.kind == sf::Site::Root && !t.tiles.empty()) {
            EXPECT_TRUE(t.parallel);
            // Tasks within [1, 16] x cores; below it only where tasks cannot be made smaller: one
            // point per task along each pure loop, but for the loop vectors run along, where a
            // task holds at least a native vector (space.tiles_hold_a_vector: a 128-entry uint8
            // LUT is 2 tasks of one 64-lane vector each, not 4 of half vectors). (Tasks are the
            // fused pure loops of level 0; reductions there run inside each task.)
            const sf::Stage &st = dag.nodes[size_t(s.node)].stages[size_t(s.stage)];
            const sf::Region &b = bounds.production_bounds({s.node, s.stage});
            const int native = sf::native_vector_width(dag, {s.node, s.stage}, strict_target());
            int64_t tasks = 1;
            std::vector<std::pair<int64_t, int64_t>> trips_and_extents(st.loops.size(), {1, 1});
            for (size_t l = 0; l < st.loops.size(); l++) {
                if (st.loops[l].is_rvar) continue;
                trips_and_extents[l] = {bounds.trips({s.node, s.stage}, 0, int(l)), b[l].extent()};
                tasks *= trips_and_extents[l].first;
            }
            EXPECT_LE(tasks, 16 * o.cores);
            for (size_t l = 0; l < st.loops.size() && tasks < o.cores; l++) {
                const auto [trips, extent] = trips_and_extents[l];
                if (trips == extent) continue;
                const int64_t per_task = (extent + trips - 1) / trips;
                EXPECT_TRUE(int(l) == t.vector_loop && per_task < 2 * native)
                    << tasks << " tasks of " << per_task << " points along loop " << l << " (of " << extent
                    << "; vector loop " << t.vector_loop << ", " << native << " lanes)";
            }
        }
    }
}

class SearchedSchedules : public ::testing::TestWithParam<int> {};

// Greedy, a beam, and dropout samples on one random pipeline.
TEST_P(SearchedSchedules, MatchComputeRootAndObeyThePruningRules) {
    const gen::PipelineSpec spec = gen::synthesize_pipeline(gen::load_generator_config(kSmall), uint64_t(GetParam()));
    SCOPED_TRACE(spec.to_text());
    const Halide::Target target = strict_target();
    gen::BuiltPipeline reference = gen::build_pipeline(spec);
    reference.schedule_compute_root();
    const Halide::Buffer<> expected = reference.run(target);

    std::vector<SearchOptions> runs{options(1, 1), options(SCHEDFORGE_SEARCH_BEAM, 2)};
    for (uint64_t s = 0; s < SCHEDFORGE_SEARCH_SAMPLES; s++) runs.push_back(options(4, 1, 0.5, s));
    std::set<std::string> checked; // each distinct schedule is compiled once
    for (const SearchOptions &o : runs) {
        gen::BuiltPipeline built = gen::build_pipeline(spec);
        const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
        const SearchResult r = search(dag, o);
        ASSERT_TRUE(r.nest.complete(dag));
        ASSERT_EQ(r.nest.validate(dag), "");
        expect_pruning_rules(dag, r, o);
        const std::string source = sf::schedule_source(dag, r.nest);
        if (!checked.insert(source).second) continue;
        try {
            sf::apply(dag, r.nest);
            EXPECT_EQ(runner::compare_buffers(expected, built.run(target)), "") << source;
        } catch (const Halide::Error &e) {
            ADD_FAILURE() << e.what() << "\n" << source;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Seeds, SearchedSchedules, ::testing::Range(0, SCHEDFORGE_SEARCH_SWEEP));

TEST(BeamSearch, SameSeedSameScheduleWhateverTheThreadCount) {
    const gen::PipelineSpec spec = gen::synthesize_pipeline(gen::load_generator_config(kSmall), 11);
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
    SearchOptions one = options(8, 3, 0.6, 42), two = one;
    one.threads = 1;
    two.threads = 2;
    const SearchResult a = search(dag, one), b = search(dag, two), c = search(dag, one);
    EXPECT_EQ(sf::schedule_source(dag, a.nest), sf::schedule_source(dag, b.nest));
    EXPECT_EQ(sf::schedule_source(dag, a.nest), sf::schedule_source(dag, c.nest));
    EXPECT_EQ(a.cost, b.cost);
    EXPECT_EQ(a.stats.states_generated, b.stats.states_generated);
}

// The feature memo: along a random path of decisions, every successor's features from its
// parent's (update_schedule_features) equal its features computed from scratch, on small and
// default-sized random pipelines.
class FeatureMemo : public ::testing::TestWithParam<int> {};

TEST_P(FeatureMemo, EqualsFeaturizingFromScratch) {
    const bool small = GetParam() % 2 == 0;
    const gen::GeneratorConfig cfg = small ? gen::load_generator_config(kSmall) : gen::GeneratorConfig();
    const gen::PipelineSpec spec = gen::synthesize_pipeline(cfg, uint64_t(GetParam()));
    SCOPED_TRACE(spec.to_text());
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
    const Halide::Target target = strict_target();
    const SuccessorGenerator generator(dag, target, options(1, 1));
    common::Rng rng(uint64_t(GetParam()) + 77);
    sf::LoopNest nest(dag);
    std::vector<sf::StageFeatures> features;
    int64_t reused_total = 0;
    for (size_t d = 0; d < generator.decisions().size(); d++) {
        const std::vector<sf::LoopNest> children = generator.successors(nest, int(d));
        ASSERT_FALSE(children.empty());
        for (const sf::LoopNest &child : children) {
            int64_t reused = 0;
            const std::vector<sf::StageFeatures> memo =
                sf::update_schedule_features(dag, child, target, features, generator.decisions()[d].node, &reused);
            const std::vector<sf::StageFeatures> scratch = sf::compute_schedule_features(dag, child, target);
            ASSERT_EQ(memo.size(), scratch.size());
            for (size_t i = 0; i < memo.size(); i++) {
                SCOPED_TRACE(dag.nodes[size_t(memo[i].node)].name + " stage " + std::to_string(memo[i].stage) +
                             " after decision " + std::to_string(d));
                ASSERT_EQ(memo[i].scheduled, scratch[i].scheduled);
                const auto a = memo[i].features.values(), b = scratch[i].features.values();
                for (size_t k = 0; k < a.size(); k++) EXPECT_EQ(a[k], b[k]) << sf::ScheduleFeatures::names()[k];
            }
            reused_total += reused;
        }
        nest = rng.pick(children);
        features = sf::compute_schedule_features(dag, nest, target);
    }
    if (generator.decisions().size() > 2) {
        EXPECT_GT(reused_total, 0); // the memo does reuse
    }
}

INSTANTIATE_TEST_SUITE_P(Seeds, FeatureMemo, ::testing::Range(0, 16));

// The memo on states the search's path rarely reaches: random complete nests of `dag`, cut back
// to each of their stage-0 decisions in the search's order (the Funcs decided later
// unscheduled). The child made by that decision, featurized from its parent's features, equals a
// full run. Returns the decisions compared, and adds to `from_memory` those where some stage
// reads from memory (bytes_read_from_memory > 0).
int expect_memo_exact_on_random_nests(const sf::FunctionDAG &dag, uint64_t first_seed, int nests, int &from_memory) {
    const Halide::Target target = strict_target();
    const SuccessorGenerator generator(dag, target, options(1, 1));
    int compared = 0;
    for (uint64_t k = 0; k < uint64_t(nests); k++) {
        const sf::LoopNest full = sf::random_loop_nest(dag, target, first_seed + k);
        sf::LoopNest parent(dag);
        for (const Decision &d : generator.decisions()) {
            if (d.stage != 0) continue;
            sf::LoopNest child = parent;
            child.funcs[size_t(d.node)] = full.funcs[size_t(d.node)];
            const std::vector<sf::StageFeatures> memo = sf::update_schedule_features(
                dag, child, target, sf::compute_schedule_features(dag, parent, target), d.node);
            const std::vector<sf::StageFeatures> scratch = sf::compute_schedule_features(dag, child, target);
            EXPECT_EQ(memo.size(), scratch.size());
            bool reads_memory = false;
            for (size_t i = 0; i < memo.size() && i < scratch.size(); i++) {
                const auto a = memo[i].features.values(), b = scratch[i].features.values();
                for (size_t f = 0; f < a.size(); f++) {
                    EXPECT_EQ(a[f], b[f])
                        << "nest seed " << first_seed + k << ", deciding " << dag.nodes[size_t(d.node)].name << ": "
                        << dag.nodes[size_t(memo[i].node)].name << " stage " << memo[i].stage << " "
                        << sf::ScheduleFeatures::names()[f];
                }
                reads_memory = reads_memory || scratch[i].features.bytes_read_from_memory > 0;
            }
            from_memory += reads_memory;
            parent = std::move(child);
            compared++;
        }
    }
    return compared;
}

TEST(FeatureMemo, EqualsFeaturizingFromScratchOnRandomNestsCutAtEachDecision) {
    int compared = 0, from_memory = 0;
    for (uint64_t seed = 0; seed < 40; seed++) {
        const gen::PipelineSpec spec = gen::synthesize_pipeline(gen::GeneratorConfig(), seed);
        SCOPED_TRACE(spec.to_text());
        gen::BuiltPipeline built = gen::build_pipeline(spec);
        compared +=
            expect_memo_exact_on_random_nests(sf::FunctionDAG::build(built.pipeline), seed * 1000, 4, from_memory);
    }
    EXPECT_GT(compared, 100);
}

// The same on a chain of stencils over 4096 x 1024 floats (16 MiB each), where Funcs at root and
// tall strips read from memory (bytes_read_from_memory), and short strips do not.
TEST(FeatureMemo, EqualsFeaturizingFromScratchWhereStagesReadFromMemory) {
    Halide::ImageParam in(Halide::Float(32), 2, "in");
    Halide::Var x("x"), y("y");
    Halide::Func a("a"), b("b"), c("c"), out("out");
    a(x, y) = in(x, y) * 2.0f;
    b(x, y) = a(x, y - 1) + a(x, y + 1);
    c(x, y) = b(x - 1, y) + b(x + 1, y);
    out(x, y) = c(x, y - 1) + c(x, y + 1) + b(x, y);
    in.set_estimates({{-1, 4098}, {-3, 1030}});
    out.set_estimates({{0, 4096}, {0, 1024}});
    const sf::FunctionDAG dag = sf::FunctionDAG::build(Halide::Pipeline(out));
    int from_memory = 0;
    EXPECT_GT(expect_memo_exact_on_random_nests(dag, 7, 24, from_memory), 50);
    EXPECT_GT(from_memory, 10); // the feature was exercised
}

// What the search returns, and datasets store, are its best state's memoized features: they
// equal a full featurization of the schedule (the last decisions inline input wrappers, which
// retile their readers: see update_schedule_features).
TEST(BeamSearch, ReturnedFeaturesEqualFeaturizingTheSchedule) {
    for (uint64_t seed = 0; seed < 12; seed++) { // seed 8's features were stale before 2026-11-26
        const gen::PipelineSpec spec = gen::synthesize_pipeline(gen::GeneratorConfig(), seed);
        gen::BuiltPipeline built = gen::build_pipeline(spec);
        const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
        const SearchResult r = search(dag, options(4, 1));
        // The search's features assume the cache sizes of its options.
        const std::vector<sf::StageFeatures> scratch =
            sf::compute_schedule_features(dag, r.nest, strict_target(), options(4, 1).cache_sizes());
        ASSERT_EQ(r.features.size(), scratch.size());
        for (size_t i = 0; i < scratch.size(); i++) {
            EXPECT_TRUE(r.features[i].features.values() == scratch[i].features.values())
                << "pipeline seed " << seed << ", " << dag.nodes[size_t(scratch[i].node)].name << " stage "
                << scratch[i].stage;
        }
    }
}

TEST(BeamSearch, FeatureMemoChangesNothing) {
    const gen::PipelineSpec spec = gen::synthesize_pipeline(gen::GeneratorConfig(), 4);
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
    SearchOptions memo = options(8, 2, 0.7, 3), scratch = memo;
    scratch.memoize_features = false;
    const SearchResult a = search(dag, memo), b = search(dag, scratch);
    EXPECT_EQ(sf::schedule_source(dag, a.nest), sf::schedule_source(dag, b.nest));
    EXPECT_EQ(a.cost, b.cost);
    EXPECT_EQ(a.stats.cost_evaluations, b.stats.cost_evaluations);
    EXPECT_GT(a.stats.feature_cache_hits, 0);
    EXPECT_EQ(b.stats.feature_cache_hits, 0);
    EXPECT_EQ(a.stats.stages_featurized + a.stats.feature_cache_hits, b.stats.stages_featurized);
}

TEST(BeamSearch, UnrolledShiftedTileRegression) {
    // small.yaml seed 87, dropout seed 4 once unrolled a 4-row tile of a 7-row loop (shifted last
    // tile) with a producer computed inside the stage: Halide 14's code segfaulted.
    const gen::PipelineSpec spec = gen::synthesize_pipeline(gen::load_generator_config(kSmall), 87);
    const Halide::Target target = strict_target();
    gen::BuiltPipeline reference = gen::build_pipeline(spec);
    reference.schedule_compute_root();
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
    const SearchOptions o = options(4, 1, 0.5, 4);
    const SearchResult r = search(dag, o);
    expect_pruning_rules(dag, r, o);
    sf::apply(dag, r.nest);
    EXPECT_EQ(runner::compare_buffers(reference.run(target), built.run(target)), "")
        << sf::schedule_source(dag, r.nest);
}

TEST(BeamSearch, InputWrapperRegression) {
    // default.yaml seed 3095962743586169659, beam 1 with dropout (a dataset's sample): its search
    // computed the ImageParam's own Func (in0_im) at root under nested GuardWithIf splits, and
    // Halide 14's code corrupted the heap. Such Funcs are now only inlined.
    const gen::PipelineSpec spec =
        gen::synthesize_pipeline(gen::load_generator_config(kDefault), 3095962743586169659ULL);
    const Halide::Target target = strict_target();
    gen::BuiltPipeline reference = gen::build_pipeline(spec);
    reference.schedule_compute_root();
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
    SearchOptions o = options(1, 1, 0.5, 15673783749054705792ULL);
    o.cores = 2; // as on the machine where it crashed
    const SearchResult r = search(dag, o);
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        if (sf::is_input_wrapper(dag, int(n))) {
            EXPECT_TRUE(r.nest.inlined(int(n))) << dag.nodes[n].name;
        }
    }
    sf::apply(dag, r.nest);
    EXPECT_EQ(runner::compare_buffers(reference.run(target), built.run(target)), "")
        << sf::schedule_source(dag, r.nest);
}

// Coarse to fine: refining every run costs every child, in the same order, so the search is the
// one that costs each tiling; refining fewer costs fewer states, each child still legal.
TEST(BeamSearch, CoarseToFineTilings) {
    const gen::PipelineSpec spec = gen::synthesize_pipeline(gen::GeneratorConfig(), 4);
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
    SearchOptions each = options(8, 1), all_runs = each, few_runs = each;
    each.tiling_stride = 1;
    all_runs.tiling_stride = few_runs.tiling_stride = 4;
    all_runs.refined_runs = 1 << 30;
    few_runs.refined_runs = 8;
    const SearchResult a = search(dag, each), b = search(dag, all_runs), c = search(dag, few_runs);
    EXPECT_EQ(sf::schedule_source(dag, a.nest), sf::schedule_source(dag, b.nest));
    EXPECT_EQ(a.cost, b.cost);
    EXPECT_EQ(a.stats.cost_evaluations, b.stats.cost_evaluations);
    EXPECT_LT(c.stats.cost_evaluations * 2, a.stats.cost_evaluations);
    expect_pruning_rules(dag, c, few_runs);
}

// Runs: consecutive tilings of one site, numbered from 0, none longer than tiling_stride.
TEST(SpaceRules, RunsOfTilingsPerSite) {
    const gen::PipelineSpec spec = gen::synthesize_pipeline(gen::GeneratorConfig(), 4);
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
    SearchOptions o = options(8, 1);
    o.tiling_stride = 3;
    const SuccessorGenerator gen(dag, strict_target(), o);
    sf::LoopNest nest(dag);
    for (size_t d = 0; d < gen.decisions().size(); d++) {
        std::vector<uint32_t> runs;
        const std::vector<sf::LoopNest> children = gen.successors(nest, int(d), &runs);
        ASSERT_EQ(runs.size(), children.size());
        ASSERT_FALSE(runs.empty());
        EXPECT_EQ(runs.front(), 0u);
        size_t length = 1;
        for (size_t k = 1; k < runs.size(); k++) {
            ASSERT_TRUE(runs[k] == runs[k - 1] || runs[k] == runs[k - 1] + 1) << k;
            length = runs[k] == runs[k - 1] ? length + 1 : 1;
            EXPECT_LE(length, 3u);
            if (runs[k] == runs[k - 1]) { // one site: the children differ in this Func's tiling only
                const sf::FuncSchedule &x = children[k].funcs[size_t(gen.decisions()[d].node)],
                                       &y = children[k - 1].funcs[size_t(gen.decisions()[d].node)];
                EXPECT_TRUE(x.compute == y.compute && x.store == y.store) << k;
            }
        }
        nest = children.back();
    }
}

TEST(BeamSearch, DropoutSeedsGiveVariedSchedules) {
    const gen::PipelineSpec spec = gen::synthesize_pipeline(gen::load_generator_config(kSmall), 5);
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
    std::set<std::string> schedules;
    for (uint64_t seed = 0; seed < 6; seed++)
        schedules.insert(sf::schedule_source(dag, search(dag, options(4, 1, 0.5, seed)).nest));
    EXPECT_GE(schedules.size(), 3u);
}

TEST(BeamSearch, MorePassesNeverCostMore) {
    // The first pass of a 3-pass search is the 1-pass search with the structural-hash penalty
    // (same depth, no dropout; a 1-pass search leaves the penalty off by default); later passes
    // only add candidates, and the best over all passes is kept.
    const gen::PipelineSpec spec = gen::synthesize_pipeline(gen::load_generator_config(kSmall), 3);
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
    SearchOptions first_pass = options(8, 1);
    first_pass.single_pass_hash_penalty = true;
    const SearchResult one_pass = search(dag, first_pass), three = search(dag, options(8, 3));
    EXPECT_EQ(three.stats.pass_best_cost.front(), one_pass.cost);
    EXPECT_LE(three.cost, one_pass.cost);
    EXPECT_EQ(three.stats.pass_seconds.size(), 3u);
    EXPECT_GT(three.stats.cost_evaluations, one_pass.stats.cost_evaluations);
}

// autoschedule --follow: following the search's own result, every prefix of it is generated,
// kept in the beam and priced within the beam's range, and the last one costs what the search
// returned; following the search changes nothing.
TEST(BeamSearch, FollowingTheResultFindsItsPathKept) {
    for (uint64_t seed = 0; seed < 6; seed++) {
        const gen::PipelineSpec spec = gen::synthesize_pipeline(gen::GeneratorConfig(), seed);
        gen::BuiltPipeline built = gen::build_pipeline(spec);
        const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
        const SearchOptions o = options(8, 1);
        const SearchResult r = search(dag, o);
        FollowPath follow{r.nest, {}};
        ManualCostModel model(o.coefficients);
        const SearchResult again = beam_search(dag, strict_target(), model, o, &follow);
        EXPECT_EQ(sf::schedule_source(dag, again.nest), sf::schedule_source(dag, r.nest)) << "pipeline seed " << seed;
        ASSERT_EQ(follow.steps.size(), SuccessorGenerator(dag, strict_target(), o).decisions().size());
        for (size_t d = 0; d < follow.steps.size(); d++) {
            const FollowStep &s = follow.steps[d];
            EXPECT_TRUE(s.generated && !s.pruned && s.kept && s.rank >= 0 && s.rank < s.candidates)
                << "pipeline seed " << seed << ", step " << d;
            EXPECT_LE(s.beam_best, s.cost);
            EXPECT_LE(s.cost, s.beam_cutoff);
        }
        EXPECT_DOUBLE_EQ(follow.steps.back().cost, r.cost) << "pipeline seed " << seed;
    }
}

// Following a nest the search would not pick (a random one): its choices are spliced in where
// the generator does not offer them, and the last prefix is the nest itself, priced as such.
TEST(BeamSearch, FollowingAnotherNestEndsAtItsOwnCost) {
    int lost = 0;
    for (uint64_t seed = 0; seed < 6; seed++) {
        const gen::PipelineSpec spec = gen::synthesize_pipeline(gen::GeneratorConfig(), seed);
        gen::BuiltPipeline built = gen::build_pipeline(spec);
        const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
        const SearchOptions o = options(8, 1);
        FollowPath follow{sf::random_loop_nest(dag, strict_target(), seed), {}};
        ManualCostModel model(o.coefficients);
        beam_search(dag, strict_target(), model, o, &follow);
        const std::vector<sf::StageFeatures> features =
            sf::compute_schedule_features(dag, follow.goal, strict_target(), o.cache_sizes());
        std::vector<double> cost;
        model.evaluate({&features}, cost);
        EXPECT_DOUBLE_EQ(follow.steps.back().cost, cost.at(0)) << "pipeline seed " << seed;
        for (const FollowStep &s : follow.steps) {
            if (s.kept) {
                EXPECT_GE(s.rank, 0);
            }
            if (s.rank < 0) {
                EXPECT_FALSE(s.kept);
            }
        }
        lost += !follow.steps.back().kept;
    }
    EXPECT_GT(lost, 0); // random nests are not what a beam of 8 keeps
}

// A reduction's update keeps the generator's placeholder tiling (untiled) from its Func's first
// decision to its own, and that tiling spills every accumulator. Until its decision the prefix is
// priced as if the update kept them in registers (search.price_pending_updates); from then on,
// and with the rule off, as it is.
TEST(BeamSearch, PendingUpdatesArePricedWithTheirAccumulatorsInRegisters) {
    Halide::ImageParam A(Halide::Float(32), 2, "A"), B(Halide::Float(32), 2, "B");
    Halide::Var x("x"), y("y");
    Halide::RDom k(0, 256, "k");
    Halide::Func out("out");
    out(x, y) = 0.f;
    out(x, y) += A(k, y) * B(x, k);
    A.set_estimates({{0, 256}, {0, 256}});
    B.set_estimates({{0, 256}, {0, 256}});
    out.set_estimates({{0, 256}, {0, 256}});
    const sf::FunctionDAG dag = sf::FunctionDAG::build(Halide::Pipeline(out));
    SearchOptions o = options(8, 1);
    o.price_pending_updates = true;
    const SuccessorGenerator gen(dag, strict_target(), o);
    const std::vector<Decision> &decisions = gen.decisions();
    ASSERT_GE(decisions.size(), 2u);
    const int node = decisions[0].node;
    ASSERT_EQ(decisions[1].node, node);
    ASSERT_EQ(decisions[1].stage, 1);
    // The goal: out at root as the first child has it, the update in its placeholder tiling, the
    // inputs' wrappers inlined.
    const std::vector<sf::LoopNest> children = gen.successors(sf::LoopNest(dag), 0);
    ASSERT_FALSE(children.empty());
    sf::LoopNest goal = children.front();
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        if (int(i) != node && sf::can_inline(dag, int(i)))
            goal.funcs[i] = {sf::Site::inlined(), sf::Site::inlined(), {}};
    }
    ASSERT_EQ(goal.validate(dag), "");
    auto price = [&](const sf::LoopNest &nest, bool pending) {
        std::vector<sf::StageFeatures> features =
            sf::compute_schedule_features(dag, nest, strict_target(), o.cache_sizes());
        for (sf::StageFeatures &f : features) {
            if (pending && f.node == node && f.stage == 1) f.features.accumulator_bytes_spilled = 0;
        }
        ManualCostModel model(o.coefficients);
        model.set_pipeline(dag, o.target_cores());
        std::vector<double> cost;
        model.evaluate({&features}, cost);
        return cost.at(0);
    };
    const std::vector<sf::StageFeatures> features =
        sf::compute_schedule_features(dag, goal, strict_target(), o.cache_sizes());
    const auto update = std::find_if(features.begin(), features.end(),
                                     [&](const sf::StageFeatures &f) { return f.node == node && f.stage == 1; });
    ASSERT_NE(update, features.end());
    ASSERT_GT(update->features.accumulator_bytes_spilled, 0); // the placeholder spills
    FollowPath follow{goal, {}};
    ManualCostModel model(o.coefficients);
    beam_search(dag, strict_target(), model, o, &follow);
    sf::LoopNest first(dag);
    first.funcs[size_t(node)] = goal.funcs[size_t(node)];
    EXPECT_DOUBLE_EQ(follow.steps[0].cost, price(first, true));
    EXPECT_LT(follow.steps[0].cost, price(first, false));
    EXPECT_DOUBLE_EQ(follow.steps.back().cost, price(goal, false));
    // search.price_pending_updates off: every prefix as it is.
    SearchOptions off = o;
    off.price_pending_updates = false;
    FollowPath plain{goal, {}};
    beam_search(dag, strict_target(), model, off, &plain);
    EXPECT_DOUBLE_EQ(plain.steps[0].cost, price(first, false));
}

// search.spread_cost_twins: of a run of twins longer than the limit, the kept ones are the first
// half in order and the others from the middles of the rest; shorter runs keep their order.
TEST(BeamSearch, TwinOrderSpreadsTheKeptTwinsOverTheRun) {
    const std::vector<double> costs = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1.0005, 2, 2, 3};
    EXPECT_EQ(twin_order(costs, 4, 1e-3), (std::vector<size_t>{0, 1, 4, 8, 2, 3, 5, 6, 7, 9, 10, 11, 12}));
    EXPECT_EQ(twin_order(costs, 1, 1e-3), (std::vector<size_t>{5, 0, 1, 2, 3, 4, 6, 7, 8, 9, 11, 10, 12}));
    EXPECT_EQ(twin_order(costs, 4, 1e-5), (std::vector<size_t>{0, 1, 3, 7, 2, 4, 5, 6, 8, 9, 10, 11, 12}));
    EXPECT_EQ(twin_order(costs, 10, 1e-3), (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
}

// search.twin_lookahead: the runs it reorders are those longer than the limit that the beam
// reaches, counting at most max_twins states from each run before them.
TEST(BeamSearch, CrowdedTwinRunsAreThoseTheBeamReaches) {
    using Runs = std::vector<std::pair<size_t, size_t>>;
    const std::vector<double> costs = {1, 1, 1, 1, 1, 1, 1.0005, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4};
    EXPECT_EQ(crowded_twin_runs(costs, 4, 32, 1e-3), (Runs{{0, 7}, {9, 15}, {15, 20}}));
    EXPECT_EQ(crowded_twin_runs(costs, 4, 7, 1e-3), (Runs{{0, 7}, {9, 15}})); // 4 + 2 states before the third run
    EXPECT_EQ(crowded_twin_runs(costs, 4, 6, 1e-3), (Runs{{0, 7}}));
    EXPECT_EQ(crowded_twin_runs(costs, 4, 32, 1e-5), (Runs{{0, 6}, {9, 15}, {15, 20}}));
    EXPECT_EQ(crowded_twin_runs(costs, 8, 32, 1e-3), Runs{});
    EXPECT_EQ(crowded_twin_runs({}, 4, 32, 1e-3), Runs{});
}

// Looked-at twins go cheapest future first; one whose future ties with an earlier one's goes
// after every distinct one (at 1e-3, 2 and 4 tie with 0, and 5 with 1: both unpriced, no legal child).
TEST(BeamSearch, LookaheadOrderPutsTiedFuturesLast) {
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_EQ(lookahead_order({5, inf, 5.001, 3, 5.0001, inf}, 1e-3), (std::vector<size_t>{3, 0, 1, 4, 2, 5}));
    EXPECT_EQ(lookahead_order({5, inf, 5.001, 3, 5.0001, inf}, 1e-4), (std::vector<size_t>{3, 0, 2, 1, 4, 5}));
    EXPECT_EQ(lookahead_order({5, inf, 5.001, 3, 5.0001, inf}, 1e-5), (std::vector<size_t>{3, 0, 4, 2, 1, 5}));
    EXPECT_EQ(lookahead_order({}, 1e-3), std::vector<size_t>{});
}

// With twin_lookahead, the search prices the next decision's children of the crowded twins (and
// only with it), and its schedule does not depend on the thread count.
TEST(BeamSearch, TwinLookaheadPricesTheCrowdedTwinsChildren) {
    const gen::PipelineSpec spec = gen::synthesize_pipeline(gen::load_generator_config(kSmall), 7);
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
    SearchOptions off = options(16, 2), on = off;
    on.twin_lookahead = 8;
    const SearchResult plain = search(dag, off), ahead = search(dag, on);
    EXPECT_EQ(plain.stats.lookahead_states, 0);
    EXPECT_GT(ahead.stats.lookahead_states, 0);
    EXPECT_GT(ahead.stats.states_generated, plain.stats.states_generated);
    for (int threads : {1, 2}) {
        SearchOptions t = on;
        t.threads = threads;
        const SearchResult r = search(dag, t);
        EXPECT_EQ(sf::schedule_source(dag, r.nest), sf::schedule_source(dag, ahead.nest)) << threads << " threads";
        EXPECT_EQ(r.cost, ahead.cost);
    }
}

// The most finalists that share one cost (within `resolution` of the first of them).
int most_cost_twins(const SearchResult &r, double resolution) {
    int most = 0;
    for (const SearchResult::Finalist &a : r.finalists) {
        most = std::max(most, int(std::count_if(r.finalists.begin(), r.finalists.end(), [&](const auto &b) {
                            return std::abs(a.cost - b.cost) <= resolution * a.cost;
                        })));
    }
    return most;
}

// search.max_cost_twins: without a limit, tilings of a cheap Func that the model cannot tell
// apart fill the beam (over 4 twins in the final beam); with one, no cost has more states than
// the limit. Greedy sampling (beam 1, what datasets use with dropout) is unchanged.
TEST(BeamSearch, IndistinctStatesDoNotCrowdTheBeam) {
    const gen::PipelineSpec spec = gen::synthesize_pipeline(gen::load_generator_config(kSmall), 7);
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
    SearchOptions unlimited = options(16, 1);
    unlimited.max_cost_twins = 0;
    EXPECT_GT(most_cost_twins(search(dag, unlimited), 1e-3), 4);
    for (int limit : {1, 4}) {
        SearchOptions limited = options(16, 1);
        limited.max_cost_twins = limit;
        limited.cost_resolution = 1e-3;
        const SearchResult r = search(dag, limited);
        EXPECT_EQ(most_cost_twins(r, 1e-3), limit);
        EXPECT_GT(r.finalists.size(), size_t(limit));
    }
    SearchOptions greedy = options(1, 1, 0.5, 3), greedy_unlimited = greedy;
    greedy_unlimited.max_cost_twins = 0;
    EXPECT_EQ(sf::schedule_source(dag, search(dag, greedy).nest),
              sf::schedule_source(dag, search(dag, greedy_unlimited).nest));
}

// The storage dimensions (Func name, dim) that children of every decision vectorize along,
// walking the first child down; `dense_held` gets those vectorized along another dimension
// although their loop over dimension 0 holds a vector in the whole production.
std::set<std::pair<std::string, int>> vectorized_dims(const Halide::Func &out, const SearchOptions &o,
                                                      std::set<std::string> *dense_held = nullptr) {
    const sf::FunctionDAG dag = sf::FunctionDAG::build(Halide::Pipeline(out));
    const SuccessorGenerator generator(dag, strict_target(), o);
    std::set<std::pair<std::string, int>> dims;
    sf::LoopNest nest(dag);
    for (size_t d = 0; d < generator.decisions().size(); d++) {
        const std::vector<sf::LoopNest> children = generator.successors(nest, int(d));
        EXPECT_FALSE(children.empty());
        if (children.empty()) break;
        for (const sf::LoopNest &child : children) {
            sf::LoopNestBounds bounds(dag, child);
            for (size_t n = 0; n < dag.nodes.size(); n++) {
                for (size_t st = 0; st < child.funcs[n].stages.size(); st++) {
                    const sf::StageTiling &t = child.funcs[n].stages[st];
                    if (t.vector_loop < 0) continue;
                    const std::vector<sf::Loop> &loops = dag.nodes[n].stages[st].loops;
                    // Names without Halide's uniquing suffix: other tests in this process may
                    // have made Funcs of the same names.
                    dims.insert({sf::stable_name(dag.nodes[n].name), loops[size_t(t.vector_loop)].dim});
                    if (!dense_held || loops[size_t(t.vector_loop)].dim == 0) continue;
                    const sf::Region &b = bounds.production_bounds({int(n), int(st)});
                    for (size_t l = 0; l < loops.size(); l++) {
                        if (loops[l].dim == 0 && loops[l].is_pure && b[l].extent() >= t.vector_width)
                            dense_held->insert(sf::stable_name(dag.nodes[n].name));
                    }
                }
            }
        }
        nest = children.front();
    }
    return dims;
}

// space.vectorize_storage_dense: where a Func's loop over its innermost storage dimension holds a
// vector in the whole production, vectors run along it or not at all (strided vectors along y
// were what issue 23 saw; a point tile narrow in x stays scalar); where it does not (a 2-wide
// x), along another loop.
TEST(SpaceRules, VectorsRunAlongTheStorageDenseDimension) {
    Halide::ImageParam in(Halide::Float(32), 2, "in");
    in.set_estimates({{0, 512}, {0, 512}});
    Halide::Var x("x"), y("y");
    Halide::Func blur("blur"), out("out");
    blur(x, y) = in(x, y) + in(x, y + 1);
    out(x, y) = blur(x, y) * 2 + blur(x + 1, y);
    out.set_estimates({{0, 500}, {0, 500}});
    SearchOptions o = options(1, 1);
    o.space.vectorize_storage_dense = false;
    std::set<std::string> held;
    vectorized_dims(out, o, &held);
    EXPECT_FALSE(held.empty()); // without the rule, strided vectors where dense ones fit
    o.space.vectorize_storage_dense = true;
    held.clear();
    EXPECT_TRUE(vectorized_dims(out, o, &held).count({"out", 0}));
    EXPECT_TRUE(held.empty()) << *held.begin();

    Halide::ImageParam narrow(Halide::Float(32), 2, "narrow");
    narrow.set_estimates({{0, 2}, {0, 1024}});
    Halide::Func g("g");
    g(x, y) = narrow(x, y) * 3;
    g.set_estimates({{0, 2}, {0, 1024}});
    const auto narrow_dims = vectorized_dims(g, o);
    EXPECT_TRUE(narrow_dims.count({"g", 1})); // x is too narrow for a vector: along y
    EXPECT_FALSE(narrow_dims.count({"g", 0}));
}

// The children of decision `last`, walking down from the empty nest through, at each earlier
// decision, the first child that `pick` accepts.
std::vector<sf::LoopNest> children_at(const sf::FunctionDAG &dag, const SuccessorGenerator &generator, size_t last,
                                      const std::function<bool(const sf::LoopNest &)> &pick) {
    sf::LoopNest nest(dag);
    for (size_t d = 0; d < last; d++) {
        const std::vector<sf::LoopNest> children = generator.successors(nest, int(d));
        const auto it = std::find_if(children.begin(), children.end(), pick);
        if (it == children.end()) {
            ADD_FAILURE() << "no child of decision " << d << " to walk down";
            return {};
        }
        nest = *it;
    }
    return generator.successors(nest, int(last));
}

// The DAG node of the Func named `func` (Halide suffixes names reused in a process: "f$2").
int node_named(const sf::FunctionDAG &dag, const std::string &func) {
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        if (dag.nodes[n].name.substr(0, dag.nodes[n].name.find('$')) == func) return int(n);
    }
    ADD_FAILURE() << "no Func " << func;
    return 0;
}

size_t decision_of(const SuccessorGenerator &generator, int node, int stage) {
    const std::vector<Decision> &all = generator.decisions();
    for (size_t d = 0; d < all.size(); d++) {
        if (all[d].node == node && all[d].stage == stage) return d;
    }
    ADD_FAILURE() << "no decision for node " << node << " stage " << stage;
    return 0;
}

// space.reductions_outermost: a reduction computed inside a consumer's tile may run its
// reduction loop around the whole tile (one tile of the full extent, the reduction outside it);
// at root it never does (there it is a serial loop around all the parallel tasks).
TEST(SpaceRules, ReductionsRunOutermostInsideAConsumer) {
    Halide::ImageParam in(Halide::Float(32), 2, "in");
    in.set_estimates({{0, 1024}, {0, 1024}});
    Halide::Var x("x"), y("y");
    Halide::RDom r(-3, 7, "r");
    Halide::Func f("f"), sum("sum"), out("out");
    f(x, y) = in(x, y) * in(x, y);
    sum(x, y) = 0.f;
    sum(x, y) += f(x + r, y);
    out(x, y) = sum(x, y) * 2;
    out.set_estimates({{0, 1000}, {0, 1000}});
    const sf::FunctionDAG dag = sf::FunctionDAG::build(Halide::Pipeline(out));
    const int node = node_named(dag, "sum"), output = node_named(dag, "out");
    // How many children run sum's update as one whole-extent tile with the reduction outside.
    auto outermost = [&](const SearchOptions &o, sf::Site::Kind site) {
        const SuccessorGenerator generator(dag, strict_target(), o);
        const std::vector<sf::LoopNest> children =
            children_at(dag, generator, decision_of(generator, node, 1), [&](const sf::LoopNest &n) {
                // out tiled, so that sum has sites inside it
                return !n.funcs[size_t(output)].stages[0].tiles.empty() &&
                       (!n.scheduled(node) || n.funcs[size_t(node)].compute.kind == site);
            });
        EXPECT_FALSE(children.empty());
        int count = 0;
        for (const sf::LoopNest &child : children) {
            const sf::StageTiling &t = child.funcs[size_t(node)].stages[1];
            if (t.tiles.size() != 1) continue;
            sf::LoopNestBounds bounds(dag, child);
            const sf::Region &b = bounds.production_bounds({node, 1});
            const std::vector<sf::Loop> &loops = dag.nodes[size_t(node)].stages[1].loops;
            bool whole = true;
            for (size_t l = 0; l < loops.size(); l++) {
                whole = whole && t.tiles[0][l] == (loops[l].is_rvar ? 1 : b[l].extent());
            }
            count += whole;
        }
        return count;
    };
    SearchOptions o = options(1, 1);
    EXPECT_GT(outermost(o, sf::Site::At), 0);
    EXPECT_EQ(outermost(o, sf::Site::Root), 0);
    o.space.reductions_outermost = false;
    EXPECT_EQ(outermost(o, sf::Site::At), 0);
}

// pruning.max_inner_realization_bytes: a Func that expands (larger than what reads it: here 16
// planes that out sums) is pruned where it is stored inside a consumer's tile in a buffer over
// the limit, and with expanding_at_root at root too; a Func as large as its reader (g) never is.
TEST(PruningRules, ExpandingFuncsInsideTilesFitTheLimit) {
    Halide::ImageParam in(Halide::Float(32), 2, "in");
    in.set_estimates({{0, 2048}, {0, 2048}});
    Halide::Var x("x"), y("y"), k("k");
    Halide::Func g("g"), f("f"), out("out");
    g(x, y) = in(x, y) * 2;
    f(x, y, k) = g(x, y) * k + g(x + 1, y);
    Halide::Expr sum = f(x, y, 0);
    for (int i = 1; i < 16; i++) sum += f(x, y, i);
    out(x, y) = sum;
    out.set_estimates({{0, 2000}, {0, 2000}});
    const sf::FunctionDAG dag = sf::FunctionDAG::build(Halide::Pipeline(out));
    const int output = node_named(dag, "out"), expanding = node_named(dag, "f"), same = node_named(dag, "g");
    constexpr double kLimit = 64 << 10;
    // Per placement of `node` (walking down with out in tasks and inner tiles, f inside them):
    // inside and over the limit, inside and under it, at root and over it; and how many of them
    // the rule prunes.
    struct Counts {
        int inside_large = 0, inside_small = 0, root_large = 0, pruned = 0;
    };
    auto count = [&](int node, double limit, bool at_root) {
        SearchOptions o = options(1, 1);
        o.pruning.max_inner_realization_bytes = limit;
        o.pruning.expanding_at_root = at_root;
        const SuccessorGenerator generator(dag, avx512_target(), o);
        Counts c;
        for (const sf::LoopNest &child :
             children_at(dag, generator, decision_of(generator, node, 0), [&](const sf::LoopNest &n) {
                 return n.funcs[size_t(output)].stages[0].tiles.size() == 2 &&
                        (!n.scheduled(expanding) || n.funcs[size_t(expanding)].store.kind == sf::Site::At);
             })) {
            for (const sf::StageFeatures &s : sf::compute_schedule_features(dag, child, avx512_target())) {
                if (s.node != node || s.stage != 0) continue;
                const sf::Site::Kind kind = child.funcs[size_t(node)].store.kind;
                const bool large = s.features.bytes_at_realization > kLimit;
                c.inside_large += kind == sf::Site::At && large;
                c.inside_small += kind == sf::Site::At && !large;
                c.root_large += kind == sf::Site::Root && large;
                c.pruned += generator.realizes_too_much_inside(child, s);
            }
        }
        return c;
    };
    const Counts f_counts = count(expanding, kLimit, false);
    EXPECT_GT(f_counts.inside_large, 0);
    EXPECT_GT(f_counts.inside_small, 0);
    EXPECT_GT(f_counts.root_large, 0); // f at root is 256 MB
    EXPECT_EQ(f_counts.pruned, f_counts.inside_large);
    EXPECT_EQ(count(expanding, kLimit, true).pruned, f_counts.inside_large + f_counts.root_large);
    EXPECT_EQ(count(expanding, 0, true).pruned, 0); // the rule off
    const Counts g_counts = count(same, kLimit, true);
    EXPECT_GT(g_counts.inside_large, 0);
    EXPECT_GT(g_counts.root_large, 0);
    EXPECT_EQ(g_counts.pruned, 0);
}

// pruning.max_serial_root_points: a root stage with more pure points than the limit is always
// tiled into parallel tasks; a smaller one may still run serially (untiled).
TEST(PruningRules, LargeRootStagesRunInParallel) {
    Halide::ImageParam in(Halide::Float(32), 2, "in");
    in.set_estimates({{0, 1024}, {0, 1024}});
    Halide::Var x("x"), y("y");
    // How many children of the output's decision leave it untiled (serial).
    auto serial_children = [&](int width, double limit) {
        Halide::Func out("out");
        out(x, y) = in(x, y) * 2;
        out.set_estimates({{0, width}, {0, width}});
        const sf::FunctionDAG dag = sf::FunctionDAG::build(Halide::Pipeline(out));
        SearchOptions o = options(1, 1);
        o.pruning.max_serial_root_points = limit;
        const SuccessorGenerator generator(dag, strict_target(), o);
        const int node = node_named(dag, "out");
        int serial = 0;
        for (const sf::LoopNest &child :
             generator.successors(sf::LoopNest(dag), int(decision_of(generator, node, 0)))) {
            const sf::StageTiling &t = child.funcs[size_t(node)].stages[0];
            EXPECT_EQ(t.parallel, !t.tiles.empty());
            serial += t.tiles.empty();
        }
        return serial;
    };
    EXPECT_EQ(serial_children(1000, 16384), 0); // 10^6 points
    EXPECT_GT(serial_children(1000, 0), 0);     // the rule off
    EXPECT_GT(serial_children(100, 16384), 0);  // 10^4 points: may stay serial
}

// Thinning keeps every level structure: a 4-D root output has 17 shapes per outer tile (one
// level, then 16 inner tiles), and with evenly spaced picks that run length aliased with the
// spacing, so that only one-level tilings survived.
TEST(SpaceRules, ThinningKeepsTwoLevelTilings) {
    Halide::ImageParam in(Halide::Float(32), 4, "in");
    in.set_estimates({{0, 24}, {0, 100}, {0, 80}, {0, 5}});
    Halide::Var c("c"), x("x"), y("y"), n("n");
    Halide::Func out("out");
    out(c, x, y, n) = max(0.0f, in(c, x, y, n));
    out.set_estimates({{0, 24}, {0, 100}, {0, 80}, {0, 5}});
    const sf::FunctionDAG dag = sf::FunctionDAG::build(Halide::Pipeline(out));
    SearchOptions o = options(1, 1);
    o.cores = 2;
    const SuccessorGenerator generator(dag, strict_target(), o);
    const int node = node_named(dag, "out");
    std::map<size_t, int> levels;
    for (const sf::LoopNest &child : generator.successors(sf::LoopNest(dag), int(decision_of(generator, node, 0)))) {
        levels[child.funcs[size_t(node)].stages[0].tiles.size()]++;
    }
    EXPECT_GT(levels[1], 0);
    EXPECT_GT(levels[2], 0);
}

// Thinning keeps max_tilings distinct tilings: where the candidates number less than about 2.6
// times as many, two offsets used to land on one candidate (iir_blur's second Func: 8% of the
// children of a step were exact copies, costing search time and leaving options out).
TEST(SpaceRules, ThinningKeepsDistinctTilings) {
    Halide::ImageParam in(Halide::Float(32), 3, "in");
    in.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
    Halide::Var x("x"), y("y"), c("c");
    Halide::Func blur("blur"), out("out");
    blur(x, y, c) = in(x, y, c) + in(x, y + 1, c);
    out(x, y, c) = blur(x, y, c) * 2.0f + blur(x + 1, y, c);
    out.set_estimates({{0, 1536}, {0, 2559}, {0, 3}});
    const sf::FunctionDAG dag = sf::FunctionDAG::build(Halide::Pipeline(out));
    SearchOptions o = options(1, 1);
    o.cores = 2;
    const SuccessorGenerator generator(dag, strict_target(), o);
    sf::LoopNest nest(dag);
    size_t most = 0;
    for (size_t d = 0; d < generator.decisions().size(); d++) {
        const std::vector<sf::LoopNest> children = generator.successors(nest, int(d));
        ASSERT_FALSE(children.empty());
        std::set<std::string> distinct;
        for (const sf::LoopNest &child : children) distinct.insert(sf::nest_text(dag, child));
        EXPECT_EQ(distinct.size(), children.size()) << "decision " << d;
        most = std::max(most, children.size());
        nest = children.front();
    }
    EXPECT_GT(most, size_t(o.max_tilings)); // thinning happened
}

TEST(CostTerms, HandMadeFeatures) {
    sf::ScheduleFeatures f;
    f.num_realizations = 4;
    f.num_productions = 4;
    f.inner_parallelism = 6;
    f.outer_parallelism = 1;
    f.vector_size = 8;
    f.num_vectors = 100;
    f.num_scalars = 10;
    f.bytes_at_task = 256;
    f.innermost_bytes_at_task = 32;
    f.bytes_at_realization = 6 * 256;
    f.working_set = 77;
    f.bytes_read_past_cache = 5000;
    const auto t = sf::cost_terms(sf::cost_term_inputs(f, /*is_output=*/false, /*num_cores=*/4));
    // 6 tasks on 4 cores: 1.5 tasks per core take 2 rounds, 2 / 1.5 of the work.
    EXPECT_DOUBLE_EQ(t[2], 800 * 2 / 1.5);
    EXPECT_DOUBLE_EQ(t[3], 10 * 2 / 1.5);
    EXPECT_EQ(t[0], 0); // not inlined
    // Parallel (inner parallelism > 1): stores use the parallel coefficients only; 6 tasks of
    // 256 bytes in 32-byte lines are 48 lines per realization.
    EXPECT_DOUBLE_EQ(t[15], 4 * 48);
    EXPECT_EQ(t[16] + t[17], 0);
    EXPECT_DOUBLE_EQ(t[18], 4 * 1536);
    EXPECT_DOUBLE_EQ(t[21], 110.0 / 32); // false sharing
    EXPECT_EQ(t[22], 0);                 // no bytes the allocator faults in again per run
    EXPECT_EQ(t[23], 0);                 // and Halide keeps it on the stack: no heap realizations
    EXPECT_DOUBLE_EQ(t[24], 4);          // parallel launches
    EXPECT_DOUBLE_EQ(t[25], 4 * 5);      // tasks beyond the first
    EXPECT_DOUBLE_EQ(t[26], 77);
    EXPECT_DOUBLE_EQ(t[sf::kCacheTrafficTerm], 5000);
    // Spread over the cores the stage keeps busy, as the loads are: 6 tasks, 4 cores.
    EXPECT_DOUBLE_EQ(manual_cost_factors(sf::cost_term_inputs(f, false, 4), 1)[sf::kCacheTrafficTerm], 5000 / 4.0);
    // Math library calls: compute, so imbalanced like it and spread over the cores the same way.
    EXPECT_EQ(t[sf::kLibraryCallTerm], 0);
    f.library_calls = 330;
    EXPECT_DOUBLE_EQ(sf::cost_terms(sf::cost_term_inputs(f, false, 4))[sf::kLibraryCallTerm], 330 * 2 / 1.5);
    EXPECT_DOUBLE_EQ(manual_cost_factors(sf::cost_term_inputs(f, false, 4), 1)[sf::kLibraryCallTerm],
                     330 * 2 / 1.5 / 4);
    f.library_calls = 0;
    f.accumulator_bytes_spilled = 4096; // loads: spread over the cores, no imbalance factor
    EXPECT_DOUBLE_EQ(sf::cost_terms(sf::cost_term_inputs(f, false, 4))[sf::kAccumulatorTerm], 4096);
    EXPECT_DOUBLE_EQ(manual_cost_factors(sf::cost_term_inputs(f, false, 4), 1)[sf::kAccumulatorTerm], 4096 / 4.0);
    f.accumulator_bytes_spilled = 0;
    sf::ScheduleFeatures large = f;
    large.bytes_at_realization = 1 << 20; // a buffer that stays in malloc's arena: no page faults
    large.heap_realizations = 4;          // each realization a malloc (the featurizer's count)
    EXPECT_EQ(sf::cost_terms(sf::cost_term_inputs(large, false, 4))[22], 0);
    large.heap_bytes_refaulted = 3 << 20; // returned to the system and faulted in again
    EXPECT_DOUBLE_EQ(sf::cost_terms(sf::cost_term_inputs(large, false, 4))[22], 3 << 20);
    EXPECT_DOUBLE_EQ(sf::cost_terms(sf::cost_term_inputs(large, false, 4))[23], 4);
    f.inlined_calls = 300;
    f.inner_parallelism = 1;
    const auto inl = sf::cost_terms(sf::cost_term_inputs(f, true, 4));
    EXPECT_DOUBLE_EQ(inl[0], 300); // one task: no imbalance
    EXPECT_EQ(inl[2], 0);
    EXPECT_DOUBLE_EQ(inl[16], 4 * 256 / 32.0); // an output's lines, serial
    EXPECT_EQ(inl[15] + inl[17], 0);
    EXPECT_EQ(inl[22], 0); // the output's buffer is the caller's
}

// A Func computed many times inside each task (a 512-byte block per iteration of its consumer,
// 200 blocks in each of 50 tasks) writes its own block's lines per realization, not the task's,
// and re-reads what the previous block read: while one block's reads fit in cache, only the
// task's unique lines are cold.
TEST(CostTerms, FuncsComputedInsideATask) {
    sf::ScheduleFeatures f;
    f.num_realizations = 50 * 200;
    f.num_productions = 50 * 200;
    f.inner_parallelism = 1;
    f.outer_parallelism = 50;
    f.bytes_at_realization = 512;
    f.bytes_at_task = 200 * 512;
    f.innermost_bytes_at_task = 64;
    f.unique_lines_read_per_realization = 1000;
    f.unique_bytes_read_per_realization = 64000;
    f.unique_lines_read_per_task = 3000;
    f.unique_bytes_read_per_task = 192000;
    const auto t = sf::cost_terms(sf::cost_term_inputs(f, false, 2));
    EXPECT_DOUBLE_EQ(t[17], 10000 * 512 / 64.0); // serial lines written: 8 per block
    EXPECT_DOUBLE_EQ(t[4], 50 * 3000.0);         // cold lines: the tasks' unique lines
    EXPECT_DOUBLE_EQ(t[5], 50 * 192000.0);
    EXPECT_EQ(t[23], 0); // 512-byte blocks live on the stack
    // One block's reads beyond the cache: each block reads cold.
    f.unique_bytes_read_per_realization = 2 << 20;
    f.unique_lines_read_per_realization = (2 << 20) / 64;
    const auto cold = sf::cost_terms(sf::cost_term_inputs(f, false, 2));
    EXPECT_DOUBLE_EQ(cold[4], 10000.0 * (2 << 20) / 64);
    EXPECT_DOUBLE_EQ(cold[5], 10000.0 * (2 << 20));
}

// space.consumer_register_blocks: when a reduction is placed inside its consumer's innermost
// tile, the consumer may be split into register blocks (one vector by 2-4 x 2-4 points) with the
// reduction computed per block; switched off, no child changes the consumer's tiling.
TEST(SpaceRules, ConsumersSplitIntoRegisterBlocksForTheirReductions) {
    Halide::ImageParam in(Halide::Float(32), 3, "in"), w(Halide::Float(32), 2, "w");
    in.set_estimates({{0, 64}, {0, 66}, {0, 66}});
    w.set_estimates({{0, 32}, {0, 64}});
    Halide::Var c("c"), x("x"), y("y");
    Halide::RDom r(0, 64, 0, 3, "r");
    Halide::Func conv("conv"), relu("relu");
    conv(c, x, y) = 0.f;
    conv(c, x, y) += w(c, r.x) * in(r.x, x + r.y, y);
    relu(c, x, y) = max(conv(c, x, y), 0.f);
    relu.set_estimates({{0, 32}, {0, 64}, {0, 64}});
    const sf::FunctionDAG dag = sf::FunctionDAG::build(Halide::Pipeline(relu));
    const int node = node_named(dag, "conv"), output = node_named(dag, "relu");
    auto blocked = [&](const SearchOptions &o) {
        const SuccessorGenerator generator(dag, strict_target(), o);
        // relu tiled once, in parallel, vectorized along c
        const std::vector<sf::LoopNest> children =
            children_at(dag, generator, decision_of(generator, node, 0), [&](const sf::LoopNest &n) {
                const sf::StageTiling &t = n.funcs[size_t(output)].stages[0];
                return t.tiles.size() == 1 && t.parallel && t.vector_loop == 0 && t.tiles[0][1] >= 4 &&
                       t.tiles[0][2] >= 4;
            });
        EXPECT_FALSE(children.empty());
        int count = 0;
        for (const sf::LoopNest &child : children) {
            const sf::StageTiling &t = child.funcs[size_t(output)].stages[0];
            if (t.tiles.size() == 1) continue;
            EXPECT_EQ(t.tiles.size(), 2u);
            EXPECT_EQ(child.funcs[size_t(node)].compute, sf::Site::at({output, 0}, 1));
            EXPECT_EQ(t.tiles[1][0], t.vector_width); // one vector of channels
            EXPECT_LE(t.tiles[1][1] * t.tiles[1][2], 16);
            EXPECT_EQ(child.validate(dag), "");
            count++;
        }
        return count;
    };
    SearchOptions o = options(1, 1);
    EXPECT_GT(blocked(o), 0);
    o.space.consumer_register_blocks = false;
    EXPECT_EQ(blocked(o), 0);

    // space.tiles_hold_a_vector: relu's tiles along c (dense in storage, 32 wide) hold a vector
    // of 16 floats at every level; without the rule, thinning keeps mostly narrower ones.
    auto narrow_tiles = [&](const SearchOptions &opt) {
        const SuccessorGenerator generator(dag, strict_target(), opt);
        const int w = sf::native_vector_width(dag, {output, 0}, strict_target());
        int narrow = 0;
        for (const sf::LoopNest &child : generator.successors(sf::LoopNest(dag), decision_of(generator, output, 0))) {
            for (const auto &level : child.funcs[size_t(output)].stages[0].tiles) narrow += level[0] < w;
        }
        return narrow;
    };
    o = options(1, 1);
    EXPECT_EQ(narrow_tiles(o), 0);
    o.space.tiles_hold_a_vector = false;
    EXPECT_GT(narrow_tiles(o), 0);
}

struct BadOptions {
    const char *name, *yaml, *message;
};
const BadOptions kBadOptions[] = {
    {"NegativeBeam", "search:\n  beam_size: -1\n", "beam_size must be at least 1"},
    {"UnknownKey", "search:\n  beams: 4\n", "unknown key 'search.beams'"},
    {"UnknownTerm", "cost_model:\n  coefficients:\n    magic: 1\n", "unknown key 'cost_model.coefficients.magic'"},
    {"DropoutOutOfRange", "search:\n  dropout: 1.5\n", "dropout"},
    {"CostResolutionOutOfRange", "search:\n  cost_resolution: 1\n", "cost_resolution must be in [0, 1)"},
    {"NegativeCostTwins", "search:\n  max_cost_twins: -1\n", "max_cost_twins must not be negative"},
    {"NegativeTwinLookahead", "search:\n  twin_lookahead: -1\n", "twin_lookahead must not be negative"},
    {"ZeroStride", "search:\n  tiling_stride: 0\n", "tiling_stride must be at least 1"},
    {"NegativeRefinedRuns", "search:\n  refined_runs: -2\n", "refined_runs must not be negative"},
    {"NotANumber", "pruning:\n  max_recompute: lots\n", "'pruning.max_recompute' must be a number"},
    {"BadTaskWindow", "pruning:\n  min_tasks_per_core: 8\n  max_tasks_per_core: 2\n", "min_tasks_per_core"},
    {"NegativeSerial", "pruning:\n  max_serial_root_points: -5\n", "max_serial_root_points"},
    {"SmallExpansion", "pruning:\n  expansion: 0.5\n", "pruning.expansion must be at least 1"},
    {"NegativeRealization", "pruning:\n  max_inner_realization_bytes: -1\n", "max_inner_realization_bytes"},
    {"NotABool", "space:\n  reductions_outermost: maybe\n", "reductions_outermost"},
    {"NotABoolBlocks", "space:\n  consumer_register_blocks: 3\n", "consumer_register_blocks"},
    {"UnknownGpuSchedules", "search:\n  gpu_schedules: best\n", "gpu_schedules must be 'rules' or 'search'"},
    {"UnknownGpuDevice", "search:\n  gpu_device: b200\n", "unknown GPU device 'b200' (known: v100, t4, a100"},
    {"ZeroGpuBeam", "search:\n  gpu_beam_size: 0\n", "gpu_beam_size must be at least 1"},
};

class SearchOptionsErrors : public ::testing::TestWithParam<BadOptions> {};

TEST_P(SearchOptionsErrors, NameTheProblem) {
    try {
        parse_search_options(GetParam().yaml, "test.yaml");
        ADD_FAILURE() << "accepted";
    } catch (const UserError &e) {
        EXPECT_NE(std::string(e.what()).find(GetParam().message), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).rfind("test.yaml: ", 0), 0u) << e.what();
    }
}

INSTANTIATE_TEST_SUITE_P(Configs, SearchOptionsErrors, ::testing::ValuesIn(kBadOptions),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(SearchOptionsFile, DefaultConfigIsTheBuiltInDefaults) {
    const SearchOptions file = load_search_options(std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/search/default.yaml");
    const SearchOptions builtin;
    EXPECT_EQ(file.beam_size, builtin.beam_size);
    EXPECT_EQ(file.passes, builtin.passes);
    EXPECT_EQ(file.dropout, builtin.dropout);
    EXPECT_EQ(file.max_tilings, builtin.max_tilings);
    EXPECT_EQ(file.max_cost_twins, builtin.max_cost_twins);
    EXPECT_EQ(file.cost_resolution, builtin.cost_resolution);
    EXPECT_EQ(file.spread_cost_twins, builtin.spread_cost_twins);
    EXPECT_EQ(file.twin_lookahead, builtin.twin_lookahead);
    EXPECT_EQ(file.memoize_features, builtin.memoize_features);
    EXPECT_EQ(file.price_pending_updates, builtin.price_pending_updates);
    EXPECT_EQ(file.gpu_schedules, builtin.gpu_schedules);
    EXPECT_EQ(file.gpu_beam_size, builtin.gpu_beam_size);
    EXPECT_EQ(file.gpu_device, builtin.gpu_device);
    EXPECT_EQ(file.hash_penalty, builtin.hash_penalty);
    EXPECT_EQ(file.single_pass_hash_penalty, builtin.single_pass_hash_penalty);
    EXPECT_EQ(file.pruning.max_recompute, builtin.pruning.max_recompute);
    EXPECT_EQ(file.pruning.max_serial_root_points, builtin.pruning.max_serial_root_points);
    EXPECT_EQ(file.pruning.max_inner_realization_bytes, builtin.pruning.max_inner_realization_bytes);
    EXPECT_EQ(file.pruning.expanding_at_root, builtin.pruning.expanding_at_root);
    EXPECT_EQ(file.pruning.expansion, builtin.pruning.expansion);
    EXPECT_EQ(file.space.vectorize_storage_dense, builtin.space.vectorize_storage_dense);
    EXPECT_EQ(file.space.reductions_outermost, builtin.space.reductions_outermost);
    EXPECT_EQ(file.space.register_blocks_in_place, builtin.space.register_blocks_in_place);
    EXPECT_EQ(file.space.consumer_register_blocks, builtin.space.consumer_register_blocks);
    EXPECT_EQ(file.space.tiles_hold_a_vector, builtin.space.tiles_hold_a_vector);
    EXPECT_EQ(file.coefficients, builtin.coefficients);
}

TEST(SearchOptionsFile, ReadsTheTwinRules) {
    const SearchOptions o = parse_search_options("search:\n  twin_lookahead: 8\n  spread_cost_twins: true\n", "t.yaml");
    EXPECT_EQ(o.twin_lookahead, 8);
    EXPECT_TRUE(o.spread_cost_twins);
}

TEST(SearchOptionsFile, ReadsThePendingUpdatesRule) {
    EXPECT_FALSE(SearchOptions().price_pending_updates);
    EXPECT_TRUE(parse_search_options("search:\n  price_pending_updates: true\n", "t.yaml").price_pending_updates);
}

TEST(SearchOptionsFile, DropoutForAGreedyChance) {
    // 20 decisions, a 1 in 20 chance that none drops a state: p^20 = 0.05.
    EXPECT_NEAR(std::pow(dropout_for_greedy_chance(0.05, 20), 20), 0.05, 1e-12);
}

} // namespace
} // namespace schedforge::sampler
