// The GPU features (featurize/gpu_features.h), the GPU cost model (sampler/gpu_cost_model.h) and
// the GPU search (sampler/gpu_search.h), on fixed pipelines whose figures follow from the
// definitions by hand: coalescing, loads hoisted out of a thread's loops, where producers live,
// the host's stages, occupancy, waves and launches; the features updated from a parent's equal
// to the features computed afresh; the search's schedules legal, deterministic and never priced
// above the rules'.
#include "featurize/gpu_features.h"
#include "featurize/random_loop_nest.h"
#include "generator/build.h"
#include "generator/config.h"
#include "generator/synthesize.h"
#include "sampler/gpu_cost_model.h"
#include "sampler/gpu_schedule.h"
#include "sampler/gpu_search.h"
#include "tests/gpu/gpu_fixtures.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace schedforge::testing {
namespace {

using sf::GpuFeatures;
using sf::GpuStageFeatures;

const GpuStageFeatures &row(const std::vector<GpuStageFeatures> &f, int node, int stage = 0) {
    for (const GpuStageFeatures &g : f) {
        if (g.node == node && g.stage == stage) return g;
    }
    throw std::logic_error("no row");
}

sf::StageTiling gpu_tiles(std::vector<std::vector<int64_t>> tiles, bool unroll = false) {
    sf::StageTiling t;
    t.gpu = true;
    t.tiles = std::move(tiles);
    t.unroll = unroll;
    return t;
}

// A run of 32 threads reading consecutive floats touches (31 * 4 + 4 + 31) / 32 sectors on
// average (its 128 bytes at an offset not known); reading down a column of a 1024-wide image,
// one sector each.
TEST(GpuFeatures, ConsecutiveThreadsShareSectorsAndAColumnReadTakesOneEach) {
    Transpose t(1024);
    sf::LoopNest nest = t.cpu_nest();
    const int out = t.node("out");
    nest.funcs[size_t(out)].stages[0] = gpu_tiles({{32, 8}});
    ASSERT_EQ(nest.validate(t.dag), "");
    const GpuFeatures f = row(sf::compute_gpu_features(t.dag, nest), out).features;
    const double points = 1024.0 * 1024.0, row_sectors = (31 * 4 + 4 + 31) / 32.0;
    EXPECT_EQ(f.points, points);
    EXPECT_EQ(f.global_loads, 2 * points);
    EXPECT_DOUBLE_EQ(f.global_load_sectors, points / 32 * (row_sectors + 32));
    EXPECT_DOUBLE_EQ(f.global_store_sectors, points / 32 * row_sectors);
    EXPECT_EQ(f.kernel_launches, 1);
    EXPECT_EQ(f.blocks, 32 * 128);
    EXPECT_EQ(f.block_threads, 256);
    EXPECT_EQ(f.idle_thread_fraction, 0);
}

// A block 8 threads wide spreads a warp over 4 rows, each apart in memory.
TEST(GpuFeatures, NarrowBlocksSpreadAWarpOverRows) {
    Transpose t(1024);
    sf::LoopNest nest = t.cpu_nest();
    const int out = t.node("out");
    nest.funcs[size_t(out)].stages[0] = gpu_tiles({{8, 32}});
    const GpuFeatures f = row(sf::compute_gpu_features(t.dag, nest), out).features;
    const double points = 1024.0 * 1024.0, row_sectors = (7 * 4 + 4 + 31) / 32.0;
    EXPECT_DOUBLE_EQ(f.global_store_sectors, points / 32 * 4 * row_sectors);
}

// In a reduction's thread the accumulator's load and store leave the reduction loop; with two
// points a thread along y, the copies share the load that does not move with y.
TEST(GpuFeatures, AccumulatorsLeaveTheReductionLoopAndUnrolledCopiesShareLoads) {
    Matmul m(256, 128, 64);
    const sf::LoopNest rules = sampler::gpu_nest(m.dag, m.cpu_nest());
    const int prod = m.node("prod");
    const double points = 256.0 * 128 * 64;
    {
        const GpuFeatures f = row(sf::compute_gpu_features(m.dag, rules), prod, 1).features;
        EXPECT_EQ(f.points, points);
        EXPECT_DOUBLE_EQ(f.global_loads, 2 * points + points / 64); // a, b; prod once per (x, y)
        EXPECT_DOUBLE_EQ(f.global_store_sectors, points / 64 / 32 * ((31 * 4 + 4 + 31) / 32.0));
    }
    sf::LoopNest two = rules;
    const sf::Stage &update = m.dag.nodes[size_t(prod)].stages[1];
    std::vector<int64_t> block, own; // 32 x 8 threads of 1 x 2 points, the reduction whole
    for (const sf::Loop &l : update.loops) {
        block.push_back(l.is_rvar ? 64 : l.var == "x" ? 32 : 16);
        own.push_back(l.is_rvar ? 64 : l.var == "x" ? 1 : 2);
    }
    two.funcs[size_t(prod)].stages[1] = gpu_tiles({block, own}, true);
    ASSERT_EQ(two.validate(m.dag), "");
    const GpuFeatures f = row(sf::compute_gpu_features(m.dag, two), prod, 1).features;
    EXPECT_DOUBLE_EQ(f.global_loads, points + points / 2 + points / 64); // b(x, r) once for both rows
    EXPECT_EQ(f.points_per_thread, 2);
    EXPECT_EQ(f.stage_threads, 32 * 8);
}

// A producer per block is read from shared memory and sizes the block's; one per thread is read
// from registers and adds to a thread's.
TEST(GpuFeatures, ProducersPerBlockLiveInSharedMemoryAndPerThreadInRegisters) {
    Blur b(1024, 1024);
    const int by = b.node("by"), bx = b.node("bx");
    sf::LoopNest per_block = b.cpu_nest();
    per_block.funcs[size_t(by)].stages[0] = gpu_tiles({{32, 8}, {1, 2}}, true); // 32 x 4 threads
    per_block.funcs[size_t(bx)].compute = per_block.funcs[size_t(bx)].store = sf::Site::at({by, 0}, 0);
    per_block.funcs[size_t(bx)].stages[0] = gpu_tiles({{32, 4}});
    ASSERT_EQ(per_block.validate(b.dag), "");
    const std::vector<GpuStageFeatures> f = sf::compute_gpu_features(b.dag, per_block);
    const GpuFeatures &kernel = row(f, by).features, &inner = row(f, bx).features;
    const double points = 1024.0 * 1024.0, blocks = 32 * 128;
    EXPECT_EQ(kernel.shared_loads, 3 * points);
    EXPECT_EQ(kernel.global_loads, 0);
    EXPECT_EQ(kernel.shared_bytes_per_block, 32 * 10 * 4); // bx's 32 x (8 + 2) per block
    EXPECT_EQ(kernel.block_threads, 128);
    EXPECT_EQ(row(f, bx).kernel, int(&row(f, by) - f.data()));
    EXPECT_EQ(inner.serial_rounds, 3); // 10 rows, 4 a round, the last shifted in
    EXPECT_EQ(inner.barriers, 3 * blocks);
    EXPECT_EQ(inner.shared_stores, inner.points);
    EXPECT_EQ(inner.global_loads, 3 * inner.points);
    // The kernel's footprint: per block, in's 34 x 10 region, in whole sectors per row.
    EXPECT_DOUBLE_EQ(kernel.global_footprint_bytes, blocks * 10 * ((34 * 4 + 31) / 32.0) * 32);

    sf::LoopNest per_thread = per_block;
    per_thread.funcs[size_t(bx)].compute = per_thread.funcs[size_t(bx)].store = sf::Site::at({by, 0}, 1);
    per_thread.funcs[size_t(bx)].stages[0] = sf::StageTiling{};
    ASSERT_EQ(per_thread.validate(b.dag), "");
    const std::vector<GpuStageFeatures> g = sf::compute_gpu_features(b.dag, per_thread);
    const GpuFeatures &kernel2 = row(g, by).features;
    EXPECT_EQ(kernel2.register_loads, 3 * points);
    EXPECT_EQ(kernel2.shared_bytes_per_block, 0);
    EXPECT_EQ(kernel2.registers_per_thread, 24 + 2 + 4); // base, two points, bx's 1 x (2 + 2)
    EXPECT_EQ(row(g, bx).features.shared_stores, 0);
    // Its threads together read what the block's producer did.
    EXPECT_DOUBLE_EQ(kernel2.global_footprint_bytes, kernel.global_footprint_bytes);
}

// A scatter has no pure loop to spread over threads: it runs on the host, its data copied over.
TEST(GpuFeatures, AScatterRunsOnTheHost) {
    Histogram h(512, 256);
    const sf::LoopNest nest = sampler::gpu_nest(h.dag, h.cpu_nest());
    const int hist = h.node("hist");
    const std::vector<GpuStageFeatures> f = sf::compute_gpu_features(h.dag, nest);
    const GpuStageFeatures &update = row(f, hist, 1);
    EXPECT_EQ(update.kernel, -1);
    EXPECT_EQ(update.features.host_points, 512 * 256);
    EXPECT_EQ(update.features.kernel_launches, 0);
    EXPECT_EQ(update.features.host_copy_bytes, 512 * 256 + 256 * 4); // the image, the histogram
    EXPECT_EQ(row(f, hist, 0).features.kernel_launches, 1);          // its zeros on the GPU
    const sampler::GpuCost c = sampler::gpu_cost(f, sf::gpu_device_named("h100"));
    EXPECT_GT(c.host_seconds, sampler::kHostSyncSeconds);
    EXPECT_EQ(c.kernels.size(), 1u);
}

TEST(GpuFeatures, NamesAndVersion) {
    EXPECT_EQ(GpuFeatures::names().size(), size_t(sf::kNumGpuFeatures));
    EXPECT_EQ(GpuFeatures::descriptions().size(), size_t(sf::kNumGpuFeatures));
    EXPECT_EQ(GpuFeatures::names().front(), "kernel_launches");
    EXPECT_EQ(GpuFeatures::version(), 1);
}

// The search's children: features updated from the parent's equal those computed afresh, at
// every decision of random schedules of random pipelines (the walk the search takes).
TEST(GpuFeatures, UpdatedFromTheParentEqualsComputedAfresh) {
    const gen::GeneratorConfig config =
        gen::load_generator_config(std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/generator/small.yaml");
    const Halide::Target host("x86-64-linux-avx2");
    int compared = 0;
    for (uint64_t seed = 0; seed < 24; seed++) {
        gen::BuiltPipeline built = gen::build_pipeline(gen::synthesize_pipeline(config, seed));
        const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
        const sf::LoopNest goal = sampler::random_gpu_nest(dag, sf::random_loop_nest(dag, host, seed), seed);
        const sf::StageOps ops = sf::stage_ops(dag);
        sf::LoopNest state(dag);
        std::vector<GpuStageFeatures> features = sf::compute_gpu_features(dag, state, ops);
        std::vector<int> changed;
        for (size_t n = 0; n < dag.nodes.size(); n++) {
            if (dag.nodes[n].is_input) continue;
            state.funcs[n] = goal.funcs[n];
            changed.push_back(int(n));
            if (goal.inlined(int(n))) continue; // the search decides the next Func with it
            features = sf::update_gpu_features(dag, state, ops, features, changed);
            changed.clear();
            const std::vector<GpuStageFeatures> fresh = sf::compute_gpu_features(dag, state, ops);
            ASSERT_EQ(fresh.size(), features.size());
            for (size_t i = 0; i < fresh.size(); i++) {
                SCOPED_TRACE("seed " + std::to_string(seed) + ", " + dag.nodes[size_t(fresh[i].node)].name);
                EXPECT_EQ(fresh[i].scheduled, features[i].scheduled);
                EXPECT_EQ(fresh[i].kernel, features[i].kernel);
                const auto a = fresh[i].features.values(), b = features[i].features.values();
                for (size_t k = 0; k < a.size(); k++) EXPECT_DOUBLE_EQ(a[k], b[k]) << GpuFeatures::names()[k];
                compared++;
            }
        }
    }
    EXPECT_GT(compared, 200);
}

sf::GpuStageFeatures kernel_row(double threads, double shared, double registers, double blocks) {
    GpuStageFeatures g;
    g.node = 0;
    g.scheduled = true;
    g.kernel = 0;
    g.features.kernel_launches = 1;
    g.features.block_threads = g.features.stage_threads = threads;
    g.features.shared_bytes_per_block = shared;
    g.features.registers_per_thread = registers;
    g.features.blocks = blocks;
    g.features.points = blocks * threads;
    g.features.ops = g.features.points * 10;
    g.features.global_load_sectors = g.features.points / 8;
    g.features.global_footprint_bytes = g.features.global_unique_bytes = g.features.points * 4;
    return g;
}

// Blocks per SM: the fewest its threads, blocks, shared memory and registers allow.
TEST(GpuCostModel, OccupancyIsLimitedByTheScarcestResource) {
    const sf::GpuDevice &h100 = sf::gpu_device_named("h100"); // 2048 threads, 228 KiB shared a SM
    auto kernel = [&](double threads, double shared, double registers) {
        return sampler::gpu_cost({kernel_row(threads, shared, registers, 132 * 64)}, h100).kernels.at(0);
    };
    EXPECT_EQ(kernel(256, 0, 32).blocks_per_sm, 8);         // threads
    EXPECT_EQ(kernel(64, 0, 32).blocks_per_sm, 32);         // blocks
    EXPECT_EQ(kernel(256, 40 * 1024, 32).blocks_per_sm, 5); // shared memory
    EXPECT_EQ(kernel(256, 0, 128).blocks_per_sm, 2);        // registers: 65536 / (128 x 256)
    EXPECT_DOUBLE_EQ(kernel(256, 40 * 1024, 32).occupancy, 5 * 8 / 64.0);
    // What cannot run costs infinitely much.
    EXPECT_TRUE(std::isinf(kernel(256, 49 * 1024, 32).seconds)); // over a block's 48 KiB
    EXPECT_TRUE(std::isinf(kernel(1024, 0, 255).seconds));       // 255 x 1024 registers
}

// A last partial wave costs a whole one; each kernel its launch.
TEST(GpuCostModel, TailsCostWholeWavesAndKernelsTheirLaunch) {
    const sf::GpuDevice &h100 = sf::gpu_device_named("h100");
    const double full = 132 * 8; // one wave of 256-thread blocks
    const sampler::KernelCost two = sampler::gpu_cost({kernel_row(256, 0, 32, 2 * full)}, h100).kernels.at(0);
    const sampler::KernelCost one_and_half =
        sampler::gpu_cost({kernel_row(256, 0, 32, 1.5 * full)}, h100).kernels.at(0);
    EXPECT_DOUBLE_EQ(two.waves, 2);
    EXPECT_DOUBLE_EQ(one_and_half.waves, 1.5);
    EXPECT_NEAR(one_and_half.seconds - sampler::kLaunchSeconds, two.seconds - sampler::kLaunchSeconds,
                1e-9 * two.seconds);
    GpuStageFeatures second = kernel_row(256, 0, 32, 2 * full);
    second.node = 1;
    second.kernel = 1;
    const sampler::GpuCost both = sampler::gpu_cost({kernel_row(256, 0, 32, 2 * full), second}, h100);
    EXPECT_EQ(both.kernels.size(), 2u);
    EXPECT_DOUBLE_EQ(both.seconds, 2 * two.seconds);
}

TEST(GpuDevices, NamedMatchedAndTakenFromTheTarget) {
    EXPECT_EQ(sf::gpu_device_named("H200").sms, 132);
    EXPECT_EQ(sf::gpu_device_matching("NVIDIA H100 80GB HBM3"), "h100");
    EXPECT_EQ(sf::gpu_device_matching("NVIDIA H200"), "h200");
    EXPECT_EQ(sf::gpu_device_matching("Tesla V100-SXM2-16GB"), "v100");
    EXPECT_EQ(sf::gpu_device_matching("NVIDIA GeForce RTX 3090"), "rtx3090");
    EXPECT_EQ(sf::gpu_device_matching("Tesla T4"), "t4");
    EXPECT_EQ(sf::gpu_device_matching("Radeon"), "");
    EXPECT_EQ(sf::gpu_device_for(Halide::Target("x86-64-linux-cuda-cuda_capability_80")).name, "a100");
    EXPECT_EQ(sf::gpu_device_for(Halide::Target("x86-64-linux-cuda-cuda_capability_86")).name, "h100");
    try {
        sf::gpu_device_named("b200");
        ADD_FAILURE() << "an unknown device passed";
    } catch (const std::invalid_argument &e) {
        EXPECT_NE(std::string(e.what()).find("known: v100, t4, a100, rtx3090, h100, h200"), std::string::npos);
    }
}

// The search: a legal schedule, the same on any number of threads, priced no higher than the
// rules'; the blur's first pass goes inside the second's kernel (one launch, no round trip).
TEST(GpuSearch, FusesTheBlurAndNeverPricesAboveTheRules) {
    Blur b(2048, 1024);
    const sf::GpuDevice &device = sf::gpu_device_named("h100");
    const sampler::GpuSearchResult one = sampler::gpu_search(b.dag, b.cpu_nest(), device, 8, 1);
    const sampler::GpuSearchResult two = sampler::gpu_search(b.dag, b.cpu_nest(), device, 8, 2);
    EXPECT_EQ(one.nest.validate(b.dag), "");
    EXPECT_TRUE(one.nest == two.nest);
    const double rules =
        sampler::gpu_cost(sf::compute_gpu_features(b.dag, sampler::gpu_nest(b.dag, b.cpu_nest())), device).seconds;
    EXPECT_LT(one.seconds, rules);
    EXPECT_EQ(one.nest.funcs[size_t(b.node("bx"))].compute.kind, sf::Site::At);
    EXPECT_GT(one.states, 0);
}

// Random schedules of the GPU search's space: the same for a seed, legal, and together every
// form the space has (several points a thread, producers per block and per thread).
TEST(GpuSearch, RandomSchedulesAreLegalAndCoverTheSpace) {
    const gen::GeneratorConfig config =
        gen::load_generator_config(std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/generator/small.yaml");
    const Halide::Target host("x86-64-linux-avx2");
    int two_levels = 0, per_block = 0, per_thread = 0;
    for (uint64_t seed = 0; seed < 40; seed++) {
        gen::BuiltPipeline built = gen::build_pipeline(gen::synthesize_pipeline(config, seed));
        const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
        const sf::LoopNest cpu = sf::random_loop_nest(dag, host, seed);
        const sf::LoopNest nest = sampler::random_gpu_nest(dag, cpu, seed);
        ASSERT_EQ(nest.validate(dag), "") << seed;
        ASSERT_TRUE(nest == sampler::random_gpu_nest(dag, cpu, seed)) << seed;
        for (size_t n = 0; n < dag.nodes.size(); n++) {
            const sf::FuncSchedule &fs = nest.funcs[n];
            if (fs.compute.kind == sf::Site::Root) {
                for (const sf::StageTiling &t : fs.stages) two_levels += t.gpu && t.tiles.size() == 2;
            } else if (fs.compute.kind == sf::Site::At) {
                (fs.compute.level == 0 ? per_block : per_thread)++;
            }
        }
    }
    EXPECT_GT(two_levels, 0);
    EXPECT_GT(per_block, 0);
    EXPECT_GT(per_thread, 0);
}

} // namespace
} // namespace schedforge::testing
