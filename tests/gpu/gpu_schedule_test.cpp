// The GPU schedule rules (sampler/gpu_schedule.h) and the GPU tiling's place in the LoopNest:
// thread blocks of the documented shapes, reductions serial in a thread, the limits validate()
// enforces, apply()'s directives, and the nest text.
#include "featurize/apply.h"
#include "featurize/function_dag.h"
#include "featurize/loop_nest_text.h"
#include "sampler/gpu_schedule.h"

#include <Halide.h>
#include <gtest/gtest.h>

namespace schedforge::sampler {
namespace {

namespace sf = schedforge::featurize;

// out(x, y) = sum_k a(k, y) * b(x, k) over W x H, k in [0, K), through an inlinable pointwise Func.
struct Matmul {
    Halide::Var x{"x"}, y{"y"};
    Halide::ImageParam a{Halide::Float(32), 2, "a"}, b{Halide::Float(32), 2, "b"};
    Halide::Func scaled{"scaled"}, prod{"prod"}, out{"out"};
    sf::FunctionDAG dag;

    Matmul(int w, int h, int k) {
        Halide::RDom r(0, k, "r");
        scaled(x, y) = 2.0f * b(x, y);
        prod(x, y) = 0.0f;
        prod(x, y) += a(r, y) * scaled(x, r);
        out(x, y) = prod(x, y);
        a.set_estimates({{0, k}, {0, h}});
        b.set_estimates({{0, w}, {0, k}});
        out.set_estimates({{0, w}, {0, h}});
        dag = sf::FunctionDAG::build(Halide::Pipeline(out));
    }
    int node(const std::string &name) const {
        for (size_t i = 0; i < dag.nodes.size(); i++) {
            if (sf::stable_name(dag.nodes[i].name) == name) return int(i); // "out$2" in a later test
        }
        return -1;
    }
    // A CPU nest: `scaled` inlined, the rest at root, one level each.
    sf::LoopNest cpu_nest() const {
        sf::LoopNest nest(dag);
        for (size_t i = 0; i < dag.nodes.size(); i++) {
            if (dag.nodes[i].is_input) continue;
            const bool inl = int(i) == node("scaled") || sf::is_input_wrapper(dag, int(i));
            nest.funcs[i].compute = nest.funcs[i].store = inl ? sf::Site::inlined() : sf::Site::root();
            if (!inl) nest.funcs[i].stages.resize(dag.nodes[i].stages.size());
        }
        return nest;
    }
};

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
        if (update.loops[l].is_rvar) EXPECT_EQ(t.tiles[0][l], 64) << update.loops[l].var;
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

    sf::LoopNest two_levels = good;
    two_levels.funcs[out].stages[0].tiles = {{32, 8}, {4, 4}};
    EXPECT_NE(two_levels.validate(m.dag).find("one tile level"), std::string::npos);

    sf::LoopNest vectorized = good;
    vectorized.funcs[out].stages[0].vector_loop = 0;
    vectorized.funcs[out].stages[0].vector_width = 8;
    EXPECT_NE(vectorized.validate(m.dag).find("not parallel, unrolled or vectorized"), std::string::npos);

    sf::LoopNest inside = good; // prod computed inside out's blocks cannot be tiled onto the GPU itself
    const size_t prod = size_t(m.node("prod"));
    inside.funcs[prod].compute = inside.funcs[prod].store = sf::Site::at({int(out), 0}, 0);
    EXPECT_NE(inside.validate(m.dag).find("only Funcs at root run on a GPU"), std::string::npos);
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
