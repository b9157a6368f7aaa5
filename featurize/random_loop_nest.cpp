#include "featurize/random_loop_nest.h"

#include "common/rng.h"

#include <algorithm>

namespace schedforge::featurize {

namespace {

// A tile extent within `outer`: a power of two below it, or all of it.
int64_t tile_extent(common::Rng &rng, int64_t outer) {
    std::vector<int64_t> options{outer};
    for (int64_t p = 1; p < outer; p *= 2) options.push_back(p);
    return rng.pick(options);
}

StageTiling random_tiling(common::Rng &rng, const FunctionDAG &dag, const LoopNest &nest, StageRef s,
                          const Halide::Target &target, const RandomLoopNestOptions &o) {
    const Stage &st = dag.nodes[size_t(s.node)].stages[size_t(s.stage)];
    LoopNestBounds bounds(dag, nest);
    const Region &b = bounds.production_bounds(s);
    StageTiling t;
    const int levels = int(rng.uniform_int(0, o.max_tiling_levels));
    // Reduction loops run at a level each, inner RVars no further out than outer ones.
    std::vector<int> rvar_level(st.loops.size(), levels);
    int shallowest = 0;
    for (size_t l = st.loops.size(); l-- > 0;) { // outermost first
        if (!st.loops[l].is_rvar) continue;
        rvar_level[l] = int(rng.uniform_int(shallowest, levels));
        shallowest = rvar_level[l];
    }
    std::vector<int64_t> extents(b.size());
    for (size_t l = 0; l < b.size(); l++) extents[l] = b[l].extent();
    std::vector<int64_t> outer = extents;
    for (int k = 0; k < levels; k++) {
        std::vector<int64_t> tile(st.loops.size());
        for (size_t l = 0; l < st.loops.size(); l++) {
            tile[l] = st.loops[l].is_rvar ? (k >= rvar_level[l] ? 1 : outer[l]) : tile_extent(rng, outer[l]);
            outer[l] = tile[l];
        }
        t.tiles.push_back(std::move(tile));
    }
    const int width = native_vector_width(dag, s, target);
    std::vector<int> vectorizable;
    for (size_t l = 0; l < st.loops.size(); l++) {
        if (!st.loops[l].is_rvar && st.loops[l].is_pure && outer[l] >= width) vectorizable.push_back(int(l));
    }
    if (width > 1 && !vectorizable.empty() && rng.chance(o.vectorize_probability)) {
        t.vector_loop = rng.pick(vectorizable);
        t.vector_width = width;
    }
    t.parallel =
        nest.funcs[size_t(s.node)].compute.kind == Site::Root && levels > 0 && rng.chance(o.parallel_probability);
    int64_t point_iterations = 1;
    for (size_t l = 0; l < st.loops.size(); l++) {
        if (!st.loops[l].is_rvar) point_iterations *= int(l) == t.vector_loop ? outer[l] / t.vector_width : outer[l];
    }
    t.unroll = levels > 0 && point_iterations <= 16 && rng.chance(o.unroll_probability) &&
               point_tile_divides(st, t.tiles, extents);
    return t;
}

} // namespace

LoopNest random_loop_nest(const FunctionDAG &dag, const Halide::Target &target, uint64_t seed,
                          const RandomLoopNestOptions &o) {
    common::Rng rng(seed);
    LoopNest nest(dag);
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        if (dag.nodes[i].is_input) continue;
        FuncSchedule &fs = nest.funcs[i];
        if (can_inline(dag, int(i)) && rng.chance(o.inline_probability)) {
            fs.compute = fs.store = Site::inlined();
            continue;
        }
        const std::vector<Site> sites = legal_compute_sites(dag, nest, int(i));
        fs.compute = fs.store = rng.pick(sites); // storage is not hoisted yet (storage_error)
        for (size_t s = 0; s < dag.nodes[i].stages.size(); s++) {
            fs.stages.push_back(random_tiling(rng, dag, nest, {int(i), int(s)}, target, o));
        }
    }
    return nest;
}

} // namespace schedforge::featurize
