// The GPU schedule rules (sampler/gpu_schedule.h) and the GPU tiling's place in the LoopNest:
// thread blocks of the documented shapes, reductions serial in a thread, the limits validate()
// enforces, apply()'s directives, and the nest text.
#include "featurize/apply.h"
#include "featurize/function_dag.h"
#include "featurize/loop_nest_text.h"
#include "sampler/gpu_schedule.h"
#include "tests/gpu/gpu_fixtures.h"

#include <Halide.h>
#include <gtest/gtest.h>

namespace schedforge::sampler {
namespace {

namespace sf = schedforge::featurize;
using testing::Matmul;

TEST(GpuTiling, TwoDimensionsMakeWarpWideRowsOf256ThreadBlocks) {
    Matmul m(2048, 1024, 64);
    const sf::Stage &st = m.dag.nodes[size_t(m.node("out"))].stages[0];
    const sf::StageTiling t = gpu_tiling(st, st.loop_bounds_at_root);
    EXPECT_TRUE(t.gpu);
    ASSERT_EQ(t.tiles.size(), 1u);
    EXPECT_EQ(t.tiles[0], (std::vector<int64_t>{32, 8}));
}

TEST(GpuTiling, NarrowLoopsTakePowersOfTwoBelowTheirExtent) {
    Matmul m(20, 2048, 64);
    const sf::Stage &st = m.dag.nodes[size_t(m.node("out"))].stages[0];
    EXPECT_EQ(gpu_tiling(st, st.loop_bounds_at_root).tiles[0], (std::vector<int64_t>{16, 16}));
}

TEST(GpuTiling, OneWideLoopGetsTheWholeBlock) {
    Matmul m(4096, 1, 64);
    const sf::Stage &st = m.dag.nodes[size_t(m.node("out"))].stages[0];
    EXPECT_EQ(gpu_tiling(st, st.loop_bounds_at_root).tiles[0], (std::vector<int64_t>{256, 1}));
}

TEST(GpuTiling, ReductionLoopsRunWholeInsideAThread) {
    Matmul m(2048, 1024, 64);
    const sf::Stage &update = m.dag.nodes[size_t(m.node("prod"))].stages[1];
    ASSERT_EQ(update.loops.size(), 3u);
    const sf::StageTiling t = gpu_tiling(update, update.loop_bounds_at_root);
    for (size_t l = 0; l < update.loops.size(); l++) {
        if (update.loops[l].is_rvar) {
            EXPECT_EQ(t.tiles[0][l], 64) << update.loops[l].var;
        }
    }
}

TEST(GpuNest, KeepsTheCpuInliningAndPutsTheRestAtRootOnTheGpu) {
    Matmul m(2048, 1024, 64);
    const sf::LoopNest nest = gpu_nest(m.dag, m.cpu_nest());
    EXPECT_EQ(nest.validate(m.dag), "");
    EXPECT_TRUE(nest.inlined(m.node("scaled")));
    for (const std::string name : {"prod", "out"}) {
        const sf::FuncSchedule &fs = nest.funcs[size_t(m.node(name))];
        EXPECT_EQ(fs.compute.kind, sf::Site::Root) << name;
        for (const sf::StageTiling &t : fs.stages) EXPECT_TRUE(t.gpu) << name;
    }
    // The text says so and reads back the same.
    const std::string text = sf::nest_text(m.dag, nest);
    EXPECT_NE(text.find(" gpu\n"), std::string::npos) << text;
    EXPECT_EQ(sf::nest_text(m.dag, sf::parse_nest_text(m.dag, text)), text);
}

TEST(GpuNest, DirectivesMapTheLevelsToBlocksAndThreads) {
    Matmul m(2048, 1024, 64);
    const sf::LoopNest nest = gpu_nest(m.dag, m.cpu_nest());
    int blocks = 0, threads = 0;
    for (const sf::Directive &d : sf::schedule_directives(m.dag, nest)) {
        if (d.stage.node != m.node("prod") || d.stage.stage != 1) continue;
        blocks += d.kind == sf::Directive::GpuBlocks;
        threads += d.kind == sf::Directive::GpuThreads;
        EXPECT_FALSE(d.kind == sf::Directive::Vectorize || d.kind == sf::Directive::Parallel);
    }
    EXPECT_EQ(blocks, 2);
    EXPECT_EQ(threads, 2);
    const std::string source = sf::schedule_source(m.dag, nest);
    EXPECT_NE(source.find(".update(0).gpu_threads(x_s1_t0);"), std::string::npos) << source;
}

TEST(GpuNest, ValidateEnforcesTheGpuLimits) {
    Matmul m(2048, 1024, 64);
    const sf::LoopNest good = gpu_nest(m.dag, m.cpu_nest());
    const size_t out = size_t(m.node("out"));

    sf::LoopNest too_many = good;
    too_many.funcs[out].stages[0].tiles[0] = {64, 32}; // 2048 threads
    EXPECT_NE(too_many.validate(m.dag).find("GPU threads per block"), std::string::npos);

    sf::LoopNest three_levels = good;
    three_levels.funcs[out].stages[0].tiles = {{32, 8}, {4, 4}, {2, 2}};
    EXPECT_NE(three_levels.validate(m.dag).find("one or two tile levels"), std::string::npos);

    sf::LoopNest vectorized = good;
    vectorized.funcs[out].stages[0].vector_loop = 0;
    vectorized.funcs[out].stages[0].vector_width = 8;
    EXPECT_NE(vectorized.validate(m.dag).find("not parallel or vectorized"), std::string::npos);

    sf::LoopNest unrolled = good; // only a thread's own points unroll
    unrolled.funcs[out].stages[0].unroll = true;
    EXPECT_NE(unrolled.validate(m.dag).find("own points"), std::string::npos);
}

// Points per thread: a second tile level; the threads are the first level's tile over it.
TEST(GpuNest, ASecondTileLevelGivesEachThreadItsOwnPoints) {
    Matmul m(2048, 1024, 64);
    sf::LoopNest nest = gpu_nest(m.dag, m.cpu_nest());
    const size_t out = size_t(m.node("out"));
    nest.funcs[out].stages[0].tiles = {{64, 32}, {2, 4}}; // 32 x 8 threads of 2 x 4 points
    nest.funcs[out].stages[0].unroll = true;
    ASSERT_EQ(nest.validate(m.dag), "");
    EXPECT_EQ(sf::gpu_threads_per_block(m.dag.nodes[out].stages[0], nest.funcs[out].stages[0]), 256);
    nest.funcs[out].stages[0].tiles = {{256, 64}, {2, 4}}; // 128 x 16 threads
    EXPECT_NE(nest.validate(m.dag).find("2048 GPU threads per block, over 1024"), std::string::npos)
        << nest.validate(m.dag);
}

// A producer computed per block runs on the block's threads (shared memory); one computed per
// thread runs serially in it (registers); nothing else goes inside a GPU stage.
TEST(GpuNest, ProducersGoPerBlockOnThreadsOrPerThreadSerially) {
    Matmul m(2048, 1024, 64);
    const sf::LoopNest root = gpu_nest(m.dag, m.cpu_nest());
    const size_t out = size_t(m.node("out")), prod = size_t(m.node("prod"));

    sf::LoopNest per_block = root;
    per_block.funcs[prod].compute = per_block.funcs[prod].store = sf::Site::at({int(out), 0}, 0);
    EXPECT_EQ(per_block.validate(m.dag), ""); // prod keeps its thread tiling
    sf::LoopNest serial_block = per_block;
    for (sf::StageTiling &t : serial_block.funcs[prod].stages) t.gpu = false;
    EXPECT_NE(serial_block.validate(m.dag).find("needs a GPU tiling"), std::string::npos);

    sf::LoopNest per_thread = root;
    per_thread.funcs[out].stages[0].tiles = {{64, 32}, {2, 4}};
    per_thread.funcs[prod].compute = per_thread.funcs[prod].store = sf::Site::at({int(out), 0}, 1);
    per_thread.funcs[prod].stages.assign(2, sf::StageTiling{});
    EXPECT_EQ(per_thread.validate(m.dag), "");
    sf::LoopNest threads_in_thread = per_thread;
    threads_in_thread.funcs[prod].stages = root.funcs[prod].stages;
    EXPECT_NE(threads_in_thread.validate(m.dag).find("only Funcs at root or at a GPU stage's block level"),
              std::string::npos);
    sf::LoopNest vector_in_thread = per_thread;
    vector_in_thread.funcs[prod].stages[0].vector_loop = 0;
    vector_in_thread.funcs[prod].stages[0].vector_width = 4;
    EXPECT_NE(vector_in_thread.validate(m.dag).find("serial"), std::string::npos);

    // Directives: the per-block producer's threads but no blocks of its own; text round trip.
    int blocks = 0, threads = 0;
    for (const sf::Directive &d : sf::schedule_directives(m.dag, per_block)) {
        if (d.stage.node != int(prod)) continue;
        blocks += d.kind == sf::Directive::GpuBlocks;
        threads += d.kind == sf::Directive::GpuThreads;
    }
    EXPECT_EQ(blocks, 0);
    EXPECT_EQ(threads, 4); // two per stage
    for (const sf::LoopNest *nest : {&per_block, &per_thread}) {
        const std::string text = sf::nest_text(m.dag, *nest);
        EXPECT_EQ(sf::nest_text(m.dag, sf::parse_nest_text(m.dag, text)), text);
    }
}

TEST(GpuTarget, HostPartDropsEveryGpuFeature) {
    const Halide::Target cuda("x86-64-linux-avx2-cuda-cuda_capability_80");
    const Halide::Target host = featurize::host_part(cuda);
    EXPECT_FALSE(host.has_gpu_feature());
    EXPECT_FALSE(host.has_feature(Halide::Target::CUDACapability80));
    EXPECT_TRUE(host.has_feature(Halide::Target::AVX2));
}

} // namespace
} // namespace schedforge::sampler
