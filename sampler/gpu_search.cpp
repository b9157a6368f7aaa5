#include "sampler/gpu_search.h"

#include "sampler/gpu_cost_model.h"
#include "sampler/gpu_schedule.h"

#include "common/pause_gate.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>

namespace schedforge::sampler {

namespace sf = schedforge::featurize;

namespace {

// Thread extents per loop for `threads` threads in all, the innermost wide loop taking `inner`
// of them (fewer where it is narrower), the next loops the rest, each at most a power of two of
// its extent; empty where the stage cannot take that many.
std::vector<int64_t> thread_shape(const sf::Stage &st, const sf::Region &bounds, const std::vector<size_t> &wide,
                                  int64_t threads, int64_t inner) {
    std::vector<int64_t> shape(st.loops.size(), 1);
    int64_t budget = threads;
    for (size_t i = 0; i < wide.size() && budget > 1; i++) {
        const int64_t extent = floor_pow2(bounds[wide[i]].extent());
        const int64_t take = std::min({extent, budget, i == 0 ? inner : budget});
        shape[wide[i]] = take;
        budget /= take;
    }
    if (budget > 1) return {}; // the stage is smaller than the block: a smaller block covers it
    return shape;
}

// The tiling of a stage whose threads have `shape` and each thread `points` (per loop; 1: one).
sf::StageTiling with_threads(const sf::Stage &st, const sf::Region &bounds, const std::vector<int64_t> &shape,
                             const std::vector<int64_t> &points) {
    sf::StageTiling t;
    t.gpu = true;
    std::vector<int64_t> block(st.loops.size()), own(st.loops.size());
    bool several = false;
    for (size_t l = 0; l < st.loops.size(); l++) {
        if (st.loops[l].is_rvar) {
            block[l] = own[l] = std::max<int64_t>(1, bounds[l].extent()); // whole inside a thread
            continue;
        }
        block[l] = shape[l] * points[l];
        own[l] = points[l];
        several = several || points[l] > 1;
    }
    t.tiles = {block};
    if (several) {
        t.tiles.push_back(own);
        t.unroll = true;
    }
    return t;
}

} // namespace

std::vector<sf::StageTiling> kernel_tilings(const sf::Stage &st, const sf::Region &bounds) {
    std::vector<size_t> wide;
    for (size_t l = 0; l < st.loops.size(); l++) {
        if (!st.loops[l].is_rvar && bounds[l].extent() > 1) wide.push_back(l);
    }
    std::vector<sf::StageTiling> out;
    if (wide.empty()) return out;
    auto add = [&](const sf::StageTiling &t) {
        if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    };
    add(gpu_tiling(st, bounds)); // the rules' choice first
    std::set<std::vector<int64_t>> shapes;
    for (int64_t threads : {64, 128, 256, 512, 1024}) {
        for (int64_t inner : {32, 64, 128, 256}) {
            std::vector<int64_t> shape = thread_shape(st, bounds, wide, threads, wide.size() > 1 ? inner : threads);
            if (!shape.empty()) shapes.insert(shape);
        }
    }
    // Points per thread: along the second wide loop (rows: the warp's loads stay coalesced), and
    // two along the innermost.
    const std::vector<std::pair<int64_t, int64_t>> per_thread = {{1, 1}, {1, 2}, {1, 4}, {2, 1}, {2, 2}};
    for (const std::vector<int64_t> &shape : shapes) {
        for (const auto &[px, py] : per_thread) {
            std::vector<int64_t> points(st.loops.size(), 1);
            points[wide[0]] = px;
            if (wide.size() > 1)
                points[wide[1]] = py;
            else if (py > 1)
                continue;
            bool fits = true;
            for (size_t l : wide) fits = fits && shape[l] * points[l] <= std::max<int64_t>(1, bounds[l].extent());
            if (fits) add(with_threads(st, bounds, shape, points));
        }
    }
    return out;
}

std::vector<sf::StageTiling> block_tilings(const sf::Stage &st, const sf::Region &bounds, int64_t threads) {
    std::vector<size_t> wide;
    for (size_t l = 0; l < st.loops.size(); l++) {
        if (!st.loops[l].is_rvar && bounds[l].extent() > 1) wide.push_back(l);
    }
    std::vector<sf::StageTiling> out;
    for (int64_t budget : {threads, std::min<int64_t>(threads, 128)}) {
        std::vector<int64_t> shape(st.loops.size(), 1);
        int64_t left = budget;
        for (size_t l : wide) {
            const int64_t take = std::min(floor_pow2(bounds[l].extent()), left);
            shape[l] = take;
            left /= take;
        }
        sf::StageTiling t = with_threads(st, bounds, shape, std::vector<int64_t>(st.loops.size(), 1));
        if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    }
    return out;
}

namespace {

struct State {
    sf::LoopNest nest;
    double cost = 0;
    std::vector<sf::GpuStageFeatures> features;
};

class GpuSearch {
public:
    GpuSearch(const sf::FunctionDAG &dag, const sf::GpuDevice &device)
        : dag_(dag), device_(device), ops_(sf::stage_ops(dag)) {}

    // With `random`, each decision takes a child at random instead (the beam is one state).
    GpuSearchResult run(const sf::LoopNest &cpu, int beam_size, int threads, std::mt19937_64 *random = nullptr) {
        tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
        std::vector<State> beam = {{sf::LoopNest(dag_), 0, {}}};
        beam[0].features = sf::compute_gpu_features(dag_, beam[0].nest, ops_);
        std::vector<int> changed; // decided since the beam's features were computed
        for (size_t i = 0; i < dag_.nodes.size(); i++) {
            const int n = int(i);
            if (dag_.nodes[i].is_input) continue;
            changed.push_back(n);
            if (cpu.inlined(n)) { // decided already; its readers are
                for (State &s : beam) s.nest.funcs[i].compute = s.nest.funcs[i].store = sf::Site::inlined();
                continue;
            }
            // Each parent's children on a thread of its own, gathered in the beam's order.
            std::vector<std::vector<State>> per_parent(beam.size());
            arena.execute([&] {
                tbb::parallel_for(size_t(0), beam.size(), [&](size_t p) {
                    common::pause_point(); // the benchmark runner may be timing a schedule
                    expand(beam[p], n, changed, per_parent[p]);
                });
            });
            std::vector<State> children;
            for (std::vector<State> &c : per_parent) std::move(c.begin(), c.end(), std::back_inserter(children));
            if (children.empty()) throw std::logic_error("the GPU search has no schedule for " + dag_.nodes[i].name);
            if (random) { // one child, any
                State pick = std::move(children[size_t((*random)() % children.size())]);
                children.assign(1, std::move(pick));
            }
            std::stable_sort(children.begin(), children.end(),
                             [](const State &a, const State &b) { return a.cost < b.cost; });
            if (int(children.size()) > beam_size) children.resize(size_t(beam_size));
            beam = std::move(children);
            changed.clear();
        }
        if (!changed.empty()) { // trailing inlined Funcs
            for (State &s : beam) s.features = sf::update_gpu_features(dag_, s.nest, ops_, s.features, changed);
        }
        GpuSearchResult r;
        r.nest = beam.front().nest;
        r.features = beam.front().features;
        r.seconds = gpu_cost(r.features, device_).seconds;
        r.states = states_;
        if (random) return r;
        // The rules' schedule is in the space, but a beam may lose it: the model's own pick of the two.
        const sf::LoopNest rules = gpu_nest(dag_, cpu);
        std::vector<sf::GpuStageFeatures> rules_features = sf::compute_gpu_features(dag_, rules, ops_);
        const double rules_seconds = gpu_cost(rules_features, device_).seconds;
        if (rules_seconds < r.seconds) {
            r.nest = rules;
            r.features = std::move(rules_features);
            r.seconds = rules_seconds;
        }
        return r;
    }

private:
    void add(const State &parent, const std::vector<int> &changed, sf::LoopNest nest, std::vector<State> &out) {
        if (!nest.validate(dag_).empty()) return;
        states_++;
        std::vector<sf::GpuStageFeatures> features =
            sf::update_gpu_features(dag_, nest, ops_, parent.features, changed);
        const double cost = gpu_cost(features, device_).seconds;
        if (cost < std::numeric_limits<double>::infinity()) out.push_back({std::move(nest), cost, std::move(features)});
    }

    // Every child of `nest` that decides Func `n`.
    void expand(const State &parent, int n, const std::vector<int> &changed, std::vector<State> &out) {
        const sf::LoopNest &nest = parent.nest;
        const sf::Node &node = dag_.nodes[size_t(n)];
        const size_t stages = node.stages.size();
        // At root: a kernel per stage (the pure stage's tilings; updates take the rules'), or the host.
        {
            sf::LoopNest child = nest;
            sf::FuncSchedule &fs = child.funcs[size_t(n)];
            fs.compute = fs.store = sf::Site::root();
            fs.stages.assign(stages, sf::StageTiling{});
            std::vector<std::vector<sf::StageTiling>> options(stages);
            {
                sf::LoopNestBounds bounds(dag_, child);
                for (size_t s = 0; s < stages; s++) {
                    const sf::Region &pb = bounds.production_bounds({n, int(s)});
                    options[s] = node.is_extern ? std::vector<sf::StageTiling>{} : kernel_tilings(node.stages[s], pb);
                    if (options[s].empty()) options[s] = {sf::StageTiling{}}; // the host's
                }
            }
            for (size_t s = 1; s < stages; s++) fs.stages[s] = options[s].front();
            // Coarse to fine: every thread shape at one point per thread, then several points
            // per thread on the kRefinedShapes cheapest shapes.
            std::vector<State> shapes;
            for (const sf::StageTiling &t : options[0]) {
                if (t.tiles.size() > 1) continue;
                fs.stages[0] = t;
                add(parent, changed, child, shapes);
            }
            std::stable_sort(shapes.begin(), shapes.end(),
                             [](const State &a, const State &b) { return a.cost < b.cost; });
            std::vector<std::vector<int64_t>> refined;
            for (size_t i = 0; i < shapes.size() && i < kRefinedShapes; i++)
                refined.push_back(sf::gpu_thread_extents(node.stages[0], shapes[i].nest.funcs[size_t(n)].stages[0]));
            for (const sf::StageTiling &t : options[0]) {
                if (t.tiles.size() < 2 || std::find(refined.begin(), refined.end(),
                                                    sf::gpu_thread_extents(node.stages[0], t)) == refined.end())
                    continue;
                fs.stages[0] = t;
                add(parent, changed, child, out);
            }
            for (State &state : shapes) out.push_back(std::move(state));
        }
        // Per block or per thread of the kernel that reads it.
        for (const sf::Site &site : sf::legal_compute_sites(dag_, nest, n)) {
            if (site.kind != sf::Site::At || node.is_output || node.is_extern) continue;
            const sf::StageTiling &host = nest.funcs[size_t(site.stage.node)].stages[size_t(site.stage.stage)];
            if (!host.gpu || nest.compute_site(site.stage).kind != sf::Site::Root) continue;
            sf::LoopNest child = nest;
            sf::FuncSchedule &fs = child.funcs[size_t(n)];
            fs.compute = fs.store = site;
            fs.stages.assign(stages, sf::StageTiling{});
            if (site.level == 0) {
                const int64_t threads = sf::gpu_threads_per_block(
                    dag_.nodes[size_t(site.stage.node)].stages[size_t(site.stage.stage)], host);
                std::vector<std::vector<sf::StageTiling>> options(stages);
                {
                    sf::LoopNestBounds bounds(dag_, child);
                    for (size_t s = 0; s < stages; s++)
                        options[s] = block_tilings(node.stages[s], bounds.production_bounds({n, int(s)}), threads);
                }
                for (size_t s = 1; s < stages; s++) fs.stages[s] = options[s].front();
                for (const sf::StageTiling &t : options[0]) {
                    fs.stages[0] = t;
                    add(parent, changed, child, out);
                }
            } else if (site.level == 1 && host.tiles.size() == 2) {
                sf::LoopNestBounds bounds(dag_, child);
                if (sf::region_points(bounds.region(n, site)) <= kMaxRegisterPoints) add(parent, changed, child, out);
            }
        }
    }

    const sf::FunctionDAG &dag_;
    const sf::GpuDevice &device_;
    const sf::StageOps ops_;
    std::atomic<int64_t> states_{0};
};

} // namespace

GpuSearchResult gpu_search(const sf::FunctionDAG &dag, const sf::LoopNest &cpu, const sf::GpuDevice &device,
                           int beam_size, int threads) {
    return GpuSearch(dag, device).run(cpu, std::max(1, beam_size), threads);
}

sf::LoopNest random_gpu_nest(const sf::FunctionDAG &dag, const sf::LoopNest &cpu, uint64_t seed) {
    std::mt19937_64 random(seed);
    return GpuSearch(dag, sf::gpu_device_named("a100")).run(cpu, 1, 1, &random).nest;
}

} // namespace schedforge::sampler
