#include "sampler/gpu_schedule.h"

#include <algorithm>

namespace schedforge::sampler {

namespace sf = schedforge::featurize;

int64_t floor_pow2(int64_t v) {
    int64_t p = 1;
    while (p * 2 <= v) p *= 2;
    return p;
}

sf::StageTiling gpu_tiling(const sf::Stage &stage, const sf::Region &bounds) {
    sf::StageTiling t;
    int wide = 0; // pure loops wider than one
    for (size_t l = 0; l < stage.loops.size(); l++) wide += !stage.loops[l].is_rvar && bounds[l].extent() > 1;
    if (wide == 0) return t; // nothing to spread across threads: the host runs it
    std::vector<int64_t> tile(stage.loops.size(), 1);
    int64_t budget = kGpuBlockThreads;
    bool innermost = true;
    for (size_t l = 0; l < stage.loops.size(); l++) {
        const int64_t extent = std::max<int64_t>(1, bounds[l].extent());
        if (stage.loops[l].is_rvar) {
            tile[l] = extent; // whole inside each thread
            continue;
        }
        if (extent == 1 || budget == 1) continue;
        const int64_t cap = innermost && wide > 1 ? std::min(budget, kGpuWarpThreads) : budget;
        tile[l] = std::min(cap, floor_pow2(extent));
        budget /= tile[l];
        innermost = false;
    }
    t.tiles = {tile};
    t.gpu = true;
    return t;
}

sf::LoopNest gpu_nest(const sf::FunctionDAG &dag, const sf::LoopNest &cpu) {
    sf::LoopNest nest(dag);
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        if (dag.nodes[i].is_input) continue;
        sf::FuncSchedule &fs = nest.funcs[i];
        if (cpu.inlined(int(i))) {
            fs.compute = fs.store = sf::Site::inlined();
            continue;
        }
        fs.compute = fs.store = sf::Site::root();
        fs.stages.resize(dag.nodes[i].stages.size());
    }
    sf::LoopNestBounds bounds(dag, nest);
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        if (dag.nodes[i].is_input || nest.inlined(int(i)) || dag.nodes[i].is_extern) continue;
        for (size_t s = 0; s < dag.nodes[i].stages.size(); s++) {
            const sf::StageRef ref{int(i), int(s)};
            nest.funcs[i].stages[s] = gpu_tiling(dag.nodes[i].stages[s], bounds.production_bounds(ref));
        }
    }
    return nest;
}

} // namespace schedforge::sampler
