#include "sampler/successors.h"

#include <algorithm>
#include <cmath>

namespace schedforge::sampler {

namespace sf = schedforge::featurize;
using sf::LoopNest;
using sf::Site;
using sf::StageRef;
using sf::StageTiling;

namespace {

const sf::Stage &stage_of(const sf::FunctionDAG &dag, StageRef s) {
    return dag.nodes[size_t(s.node)].stages[size_t(s.stage)];
}

// Tile extents for a loop of extent `outer`: powers of two below it and all of it; with `odd`,
// also 3, 5 and 7 (register blocks of odd widths).
std::vector<int64_t> extents_within(int64_t outer, bool odd) {
    std::vector<int64_t> e;
    for (int64_t p = 1; p < outer; p *= 2) e.push_back(p);
    if (odd) {
        for (int64_t o : {3, 5, 7}) {
            if (o < outer) e.push_back(o);
        }
    }
    e.push_back(outer);
    return e;
}

// The combinations of per-loop choices, loop 0 varying slowest, cut to the first `cap`; held as
// indices and decoded on demand, as the search thins thousands of them to a few dozen.
class ShapeProduct {
public:
    ShapeProduct(const std::vector<std::vector<int64_t>> &choices, size_t cap) : choices_(choices) {
        size_t n = 1;
        for (const auto &c : choices) n = std::min(cap, n * c.size());
        size_ = n;
    }
    std::vector<int64_t> at(size_t i) const {
        std::vector<int64_t> shape(choices_.size());
        at(i, shape);
        return shape;
    }
    void at(size_t i, std::vector<int64_t> &shape) const {
        for (size_t l = choices_.size(); l-- > 0;) {
            shape[l] = choices_[l][i % choices_[l].size()];
            i /= choices_[l].size();
        }
    }
    size_t size() const { return size_; }
    // The index of `shape` (each extent one of its loop's choices), or size() where the cap cut it.
    size_t index_of(const std::vector<int64_t> &shape) const {
        size_t i = 0;
        for (size_t l = 0; l < choices_.size(); l++) {
            const auto &c = choices_[l];
            i = i * c.size() + size_t(std::find(c.begin(), c.end(), shape[l]) - c.begin());
        }
        return std::min(i, size_);
    }
    // Every index in order, but the one of `shape` (if any).
    std::vector<uint32_t> indices_but(const std::vector<int64_t> &shape) const {
        const size_t skip = index_of(shape);
        std::vector<uint32_t> out;
        out.reserve(size_);
        for (size_t i = 0; i < size_; i++) {
            if (i != skip) out.push_back(uint32_t(i));
        }
        return out;
    }

private:
    const std::vector<std::vector<int64_t>> &choices_;
    size_t size_;
};

// Keeps `n` of `items`: one from each of n equal runs, the first item of the first run, then at
// golden-ratio offsets within the runs. A fixed offset would alias with the candidates' periodic
// order (a fixed number of inner tilings per outer tile): at one offset, a 4-D output's runs of
// 34 tilings each kept only the untiled-inner one, and no two-level tiling survived. Runs
// shorter than about 2.6 items can put two offsets on one item: it is kept once (fewer than n
// are kept then; the copies were 8% of iir_blur's states, costed for nothing).
std::vector<size_t> thin_positions(size_t size, size_t n) {
    std::vector<size_t> kept;
    if (size <= n) {
        for (size_t i = 0; i < size; i++) kept.push_back(i);
        return kept;
    }
    const double run = double(size) / double(n), golden = 0.6180339887498949;
    for (size_t i = 0; i < n; i++) {
        const double offset = double(i) * golden - std::floor(double(i) * golden);
        const size_t at = std::min(size - 1, size_t((double(i) + offset) * run));
        if (kept.empty() || at != kept.back()) kept.push_back(at);
    }
    return kept;
}

template<typename T>
std::vector<T> thin(const std::vector<T> &items, size_t n) {
    std::vector<T> kept;
    for (size_t p : thin_positions(items.size(), n)) kept.push_back(items[p]);
    return kept;
}

// The pure loops (innermost first) whose extent in the point tile holds at least one vector of
// width `w`. With `storage_dense`, where the loop over the Func's innermost storage dimension
// holds a vector in the whole production (`production` extents), only that loop, and only if the
// point tile keeps a vector of it: vectors along it load and store densely, along any other they
// are strided (a point tile too narrow along it is left scalar).
std::vector<int> vectorizable_loops(const sf::Stage &st, const std::vector<int64_t> &point,
                                    const std::vector<int64_t> &production, int w, bool storage_dense) {
    std::vector<int> loops;
    for (size_t l = 0; l < st.loops.size(); l++) {
        const bool vector_loop = !st.loops[l].is_rvar && st.loops[l].is_pure;
        if (storage_dense && vector_loop && st.loops[l].dim == 0 && production[l] >= w) {
            return point[l] >= w ? std::vector<int>{int(l)} : std::vector<int>{};
        }
        if (vector_loop && point[l] >= w) loops.push_back(int(l));
    }
    return loops;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Register blocks within the tile `t0` of a pure stage vectorized along `vector_loop` at width
// `w`: one vector along it by 2-4 x 2-4 points of the next two loops.
std::vector<std::vector<int64_t>> register_blocks(const std::vector<int64_t> &t0, int vector_loop, int w) {
    std::vector<std::vector<int64_t>> blocks;
    if (vector_loop < 0 || w < 2 || t0[size_t(vector_loop)] < w) return blocks;
    std::vector<size_t> across;
    for (size_t l = 0; l < t0.size() && across.size() < 2; l++) {
        if (int(l) != vector_loop && t0[l] >= 2) across.push_back(l);
    }
    if (across.size() < 2) return blocks;
    for (const auto &[a, b] : {std::pair<int64_t, int64_t>{2, 2}, {4, 2}, {2, 4}, {4, 4}}) {
        if (a > t0[across[0]] || b > t0[across[1]]) continue;
        std::vector<int64_t> block(t0.size(), 1);
        block[size_t(vector_loop)] = w;
        block[across[0]] = a, block[across[1]] = b;
        if (block != t0) blocks.push_back(block);
    }
    return blocks;
}

// Whether a Func is a pure copy of one producer: f(x, y, ...) = p(x, y, ...).
bool identity_stage(const sf::Node &n) {
    if (n.is_input || n.is_extern || n.stages.size() != 1) return false;
    const std::vector<Halide::Expr> &values = n.stages[0].definition.values();
    if (values.size() != 1) return false;
    const auto *call = values[0].as<Halide::Internal::Call>();
    if (!call ||
        (call->call_type != Halide::Internal::Call::Halide && call->call_type != Halide::Internal::Call::Image))
        return false;
    const std::vector<std::string> args = n.func.args();
    if (call->args.size() != args.size()) return false;
    for (size_t i = 0; i < args.size(); i++) {
        const auto *v = call->args[i].as<Halide::Internal::Variable>();
        if (!v || v->name != args[i]) return false;
    }
    return true;
}

// A Func's bytes when computed at root (its consumers' whole region).
double root_bytes(const sf::Node &n) {
    double bytes = double(n.bytes_per_point());
    for (const sf::Span &span : n.region_at_root) bytes *= double(std::max<int64_t>(span.extent(), 1));
    return bytes;
}

} // namespace

SuccessorGenerator::SuccessorGenerator(const sf::FunctionDAG &dag, const Halide::Target &target,
                                       const SearchOptions &options)
    : dag_(dag), target_(target), options_(options), cores_(std::max(options.cores, 1)) {
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        identity_.push_back(identity_stage(dag.nodes[n]));
        root_bytes_.push_back(root_bytes(dag.nodes[n]));
        if (dag.nodes[n].is_input) continue;
        for (size_t s = 0; s < dag.nodes[n].stages.size(); s++) decisions_.push_back({int(n), int(s)});
    }
}

bool SuccessorGenerator::recomputes_too_much(const LoopNest &nest, const sf::StageFeatures &s) const {
    const double minimum = s.features.points_computed_minimum;
    if (s.stage != 0 || options_.pruning.max_recompute <= 0 || identity_[size_t(s.node)] || minimum <= 0) return false;
    const double points = nest.inlined(s.node) ? s.features.inlined_calls : s.features.points_computed_total;
    return points > options_.pruning.max_recompute * minimum;
}

double SuccessorGenerator::largest_reader_bytes(const LoopNest &nest, int node) const {
    double most = 0;
    for (int e : dag_.nodes[size_t(node)].outgoing_edges) {
        const int consumer = dag_.edges[size_t(e)].consumer_node;
        most = std::max(most,
                        nest.inlined(consumer) ? largest_reader_bytes(nest, consumer) : root_bytes_[size_t(consumer)]);
    }
    return most;
}

bool SuccessorGenerator::realizes_too_much_inside(const LoopNest &nest, const sf::StageFeatures &s) const {
    const double limit = options_.pruning.max_inner_realization_bytes;
    const Site::Kind store = nest.funcs[size_t(s.node)].store.kind;
    return s.stage == 0 && limit > 0 &&
           (store == Site::At || (store == Site::Root && options_.pruning.expanding_at_root)) &&
           s.features.bytes_at_realization > limit &&
           root_bytes_[size_t(s.node)] > options_.pruning.expansion * largest_reader_bytes(nest, s.node);
}

bool SuccessorGenerator::pruned(const LoopNest &nest, const sf::StageFeatures &s) const {
    return recomputes_too_much(nest, s) || realizes_too_much_inside(nest, s);
}

std::vector<StageTiling> SuccessorGenerator::tilings(const LoopNest &nest, StageRef s) const {
    const sf::Stage &st = stage_of(dag_, s);
    const size_t loops = st.loops.size();
    sf::LoopNestBounds bounds(dag_, nest);
    const sf::Region &b = bounds.production_bounds(s);
    std::vector<int64_t> extent(loops);
    for (size_t l = 0; l < loops; l++) extent[l] = std::max<int64_t>(b[l].extent(), 1);
    const bool root = nest.funcs[size_t(s.node)].compute.kind == Site::Root;
    const int native = sf::native_vector_width(dag_, s, target_);
    std::vector<int> widths{native};
    if (!options_.pruning.native_vector_width_only) {
        if (native >= 4) widths.push_back(native / 2);
        widths.push_back(1);
    }
    const size_t cap = size_t(options_.space.max_tile_shapes);

    // The level structures: {} (untiled), {T0}, for root Funcs {T0, T1}, and for reductions
    // inside a consumer the whole extent with the reduction outside (below).
    // With space.tiles_hold_a_vector, tiles along the loop that vectors must run along (the
    // storage-dense one, where the production holds a vector) are at least one vector wide:
    // narrower ones leave the whole Func scalar.
    const std::vector<int> dense = options_.space.vectorize_storage_dense && options_.space.tiles_hold_a_vector
                                       ? vectorizable_loops(st, extent, extent, native, true)
                                       : std::vector<int>{};
    const int vector_dense = dense.size() == 1 && st.loops[size_t(dense[0])].dim == 0 ? dense[0] : -1;
    auto tile_choices = [&](size_t l, int64_t around, bool odd) {
        if (st.loops[l].is_rvar) return std::vector<int64_t>{around};
        std::vector<int64_t> e = extents_within(around, odd);
        if (int(l) == vector_dense && around >= native)
            e.erase(std::remove_if(e.begin(), e.end(), [&](int64_t v) { return v < native; }), e.end());
        return e;
    };
    std::vector<std::vector<int64_t>> choices(loops);
    for (size_t l = 0; l < loops; l++) choices[l] = tile_choices(l, extent[l], false);
    const ShapeProduct outer_product(choices, cap);
    std::vector<uint32_t> outer = outer_product.indices_but(extent); // that is "untiled"
    if (root) {
        // Parallel tasks: keep the task counts in the window, or the most parallel if none is.
        std::vector<int64_t> t(loops);
        auto tasks = [&](uint32_t i) {
            outer_product.at(i, t);
            int64_t n = 1;
            for (size_t l = 0; l < loops; l++) n *= ceil_div(extent[l], t[l]);
            return n;
        };
        if (options_.pruning.limit_tasks) {
            const double lo = options_.pruning.min_tasks_per_core * cores_,
                         hi = options_.pruning.max_tasks_per_core * cores_;
            std::vector<uint32_t> in_window;
            std::vector<int64_t> counts(outer.size());
            int64_t most = 0;
            for (size_t k = 0; k < outer.size(); k++) {
                counts[k] = tasks(outer[k]);
                if (counts[k] >= lo && counts[k] <= hi) in_window.push_back(outer[k]);
                most = std::max(most, counts[k]);
            }
            if (in_window.empty()) {
                for (size_t k = 0; k < outer.size(); k++) {
                    if (counts[k] == most && double(most) < lo) in_window.push_back(outer[k]);
                }
            }
            outer = std::move(in_window);
        }
    }
    outer = thin(outer, size_t(options_.max_tilings));
    // The shapes, by position in `outer` (-1: untiled) and index in that outer tile's inner
    // product (-1: none); decoded where they are emitted, as most are thinned away.
    struct ShapeRef {
        int outer = -1, inner = -1;
    };
    std::vector<ShapeRef> shapes{{}};
    // An inner tile per task: cache or register blocks, odd widths allowed innermost.
    std::vector<std::vector<std::vector<int64_t>>> inner_choices(root ? outer.size() : 0);
    for (size_t p = 0; p < outer.size(); p++) {
        shapes.push_back({int(p), -1});
        if (!root) continue;
        const std::vector<int64_t> t0 = outer_product.at(outer[p]);
        for (size_t l = 0; l < loops; l++) inner_choices[p].push_back(tile_choices(l, t0[l], l < 2));
        // Every inner tile but t0 itself (when the cap has not cut it).
        const ShapeProduct inner(inner_choices[p], cap);
        const size_t self = inner.index_of(t0), others = inner.size() - (self < inner.size() ? 1 : 0);
        for (size_t k : thin_positions(others, size_t(options_.space.max_inner_tilings)))
            shapes.push_back({int(p), int(k < self ? k : k + 1)});
    }
    std::vector<std::vector<int64_t>> scratch;
    auto decode = [&](const ShapeRef &r) -> const std::vector<std::vector<int64_t>> & {
        scratch.resize(r.outer < 0 ? 0 : r.inner < 0 ? 1 : 2, std::vector<int64_t>(loops));
        if (r.outer >= 0) outer_product.at(outer[size_t(r.outer)], scratch[0]);
        if (r.inner >= 0) ShapeProduct(inner_choices[size_t(r.outer)], cap).at(size_t(r.inner), scratch[1]);
        return scratch;
    };
    // A reduction inside a consumer may also run outermost around its whole pure loops: one tile
    // of the full extent with the reduction outside it, so that producers computed at its level 0
    // are computed once per reduction step (a window of offsets, each over the whole tile).
    const bool has_rvars = std::any_of(st.loops.begin(), st.loops.end(), [](const sf::Loop &l) { return l.is_rvar; });
    // Appended after thinning, so that thinning never drops it.
    const bool whole_tile = has_rvars && !root && options_.space.reductions_outermost;
    // A root stage with enough work to share among the cores is never left serial (untiled):
    // its points, reduction steps included (a scan has few pure points but much work).
    double points = 1;
    for (size_t l = 0; l < loops; l++) points *= double(extent[l]);
    const double serial_limit = options_.pruning.max_serial_root_points;
    if (root && serial_limit > 0 && points > serial_limit && shapes.size() + (whole_tile ? 1 : 0) > 1) {
        shapes.erase(shapes.begin());
    }

    // A tiling of a shape, short of the shape's extents (a few bytes, where most are thinned away).
    struct Variant {
        uint32_t shape = 0;
        bool rvars_outside = false, parallel = false, unroll = false;
        int vector_loop = -1, vector_width = 1;
    };
    // The tilings of one shape, appended to `out`.
    auto emit = [&](const std::vector<std::vector<int64_t>> &shape, uint32_t index, std::vector<Variant> &out) {
        // Reductions run whole inside the point tile, or (tiled stages) outside it, at level 0;
        // the whole-extent tile exists only for the latter.
        const bool whole = !shape.empty() && shape.back() == extent;
        for (int rvars_outside = whole ? 1 : 0; rvars_outside <= (has_rvars && !shape.empty() ? 1 : 0);
             rvars_outside++) {
            // The point tile's extents, and whether it divides the loops around it evenly.
            const std::vector<int64_t> &point = shape.empty() ? extent : shape.back();
            const bool divides = sf::point_tile_divides(st, shape, extent);
            // A reduction's register block: the whole realization only (space.register_blocks_in_place).
            const bool block_ok = !has_rvars || (rvars_outside && (whole || !options_.space.register_blocks_in_place));
            const bool parallel = root && !shape.empty();
            for (int serial = 0; serial <= (parallel && !options_.pruning.parallel_outer_only ? 1 : 0); serial++) {
                Variant t;
                t.shape = index;
                t.rvars_outside = rvars_outside;
                t.parallel = parallel && !serial;
                size_t before = out.size();
                auto add = [&](Variant v) {
                    out.push_back(v);
                    // Unrolled point tiles: small constant extents only.
                    int64_t iterations = 1;
                    for (size_t k = 0; k < loops; k++) {
                        if (!st.loops[k].is_rvar) {
                            iterations *= int(k) == v.vector_loop ? point[k] / v.vector_width : point[k];
                        }
                    }
                    // Register blocks: the reduction (if any) runs outside the unrolled points. Only
                    // even tiles (point_tile_divides).
                    if (!shape.empty() && divides && iterations > 1 && iterations <= options_.space.max_unroll_points &&
                        block_ok) {
                        v.unroll = true;
                        out.push_back(v);
                    }
                };
                for (int w : widths) {
                    if (w == 1) {
                        add(t);
                        continue;
                    }
                    const std::vector<int> wide =
                        vectorizable_loops(st, point, extent, w, options_.space.vectorize_storage_dense);
                    for (size_t i = 0; i < std::min<size_t>(wide.size(), size_t(options_.space.vector_loops)); i++) {
                        Variant v = t;
                        v.vector_loop = wide[i];
                        v.vector_width = w;
                        add(v);
                    }
                }
                const int vector_options = int(out.size() - before);
                if (vector_options == 0) out.push_back(t); // nothing wide enough to vectorize
            }
        }
    };
    auto build = [&](const std::vector<std::vector<int64_t>> &shape, const Variant &v) {
        StageTiling t;
        t.tiles = shape;
        if (v.rvars_outside) {
            for (size_t l = 0; l < loops; l++) {
                if (st.loops[l].is_rvar) {
                    for (auto &level : t.tiles) level[l] = 1;
                }
            }
        }
        t.parallel = v.parallel;
        t.unroll = v.unroll;
        t.vector_loop = v.vector_loop;
        t.vector_width = v.vector_width;
        return t;
    };
    std::vector<Variant> variants;
    for (size_t i = 0; i < shapes.size(); i++) emit(decode(shapes[i]), uint32_t(i), variants);
    std::vector<StageTiling> out;
    for (size_t p : thin_positions(variants.size(), size_t(options_.max_tilings))) {
        const Variant &v = variants[p];
        out.push_back(build(decode(shapes[v.shape]), v));
    }
    if (whole_tile) {
        const std::vector<std::vector<int64_t>> whole{extent};
        variants.clear();
        emit(whole, 0, variants);
        for (const Variant &v : variants) out.push_back(build(whole, v));
    }
    return out;
}

std::vector<LoopNest> SuccessorGenerator::successors(const LoopNest &nest, int d, std::vector<uint32_t> *runs) const {
    const Decision &dec = decisions_[size_t(d)];
    std::vector<LoopNest> out;
    // Numbers the children appended since `first` as one site's tilings: runs of tiling_stride.
    uint32_t next_run = 0;
    auto close_runs = [&](size_t first) {
        if (!runs) return;
        const size_t stride = size_t(options_.tiling_stride);
        for (size_t i = first; i < out.size(); i++) runs->push_back(next_run + uint32_t((i - first) / stride));
        next_run += uint32_t((out.size() - first + stride - 1) / stride);
    };
    if (dec.stage > 0) { // an update's tiling
        for (StageTiling &t : tilings(nest, {dec.node, dec.stage})) {
            out.push_back(nest);
            out.back().funcs[size_t(dec.node)].stages[size_t(dec.stage)] = std::move(t);
        }
        close_runs(0);
        return out;
    }
    const sf::Node &n = dag_.nodes[size_t(dec.node)];
    if (n.is_extern) { // a C function over its whole region: at root, untiled
        out.push_back(nest);
        out.back().funcs[size_t(dec.node)] = {Site::root(), Site::root(), {StageTiling()}};
        close_runs(0);
        return out;
    }
    if (sf::can_inline(dag_, dec.node)) {
        out.push_back(nest);
        out.back().funcs[size_t(dec.node)] = {Site::inlined(), Site::inlined(), {}};
        close_runs(0);
        if (sf::is_input_wrapper(dag_, dec.node)) return out;
    }
    // The Func computed at `site` of `base` (a copy of the nest), each tiling of it appended.
    auto place = [&](LoopNest base, const Site &site) {
        sf::FuncSchedule &fs = base.funcs[size_t(dec.node)];
        fs.compute = fs.store = site;
        fs.stages.assign(n.stages.size(), StageTiling());
        // Updates keep a plain tiling until their own decision: untiled, vectorized if they can be.
        sf::LoopNestBounds bounds(dag_, base);
        for (size_t s = 1; s < n.stages.size(); s++) {
            const StageRef ref{dec.node, int(s)};
            const int w = sf::native_vector_width(dag_, ref, target_);
            std::vector<int64_t> extent;
            for (const sf::Span &span : bounds.production_bounds(ref)) extent.push_back(span.extent());
            const std::vector<int> wide =
                vectorizable_loops(n.stages[s], extent, extent, w, options_.space.vectorize_storage_dense);
            if (w > 1 && !wide.empty()) {
                fs.stages[s].vector_loop = wide.front();
                fs.stages[s].vector_width = w;
            }
        }
        const size_t first = out.size();
        for (StageTiling &t : tilings(base, {dec.node, 0})) {
            out.push_back(base);
            out.back().funcs[size_t(dec.node)].stages[0] = std::move(t);
        }
        close_runs(first);
    };
    const std::vector<Site> sites = sf::legal_compute_sites(dag_, nest, dec.node);
    for (const Site &site : sites) place(nest, site);
    // A consumer tiled once at root may also be split into register blocks, the Func computed
    // per block: the consumer's tiling was chosen before this Func's needs were known, and a
    // reduction computed per block keeps its accumulators in registers
    // (space.consumer_register_blocks).
    if (!options_.space.consumer_register_blocks) return out;
    for (const Site &site : sites) {
        // Per iteration of the consumer's innermost tile: blocks within that tile.
        if (site.kind != Site::At || site.stage.stage != 0) continue;
        const int c = site.stage.node;
        const StageTiling &ct = nest.funcs[size_t(c)].stages[0];
        if (nest.funcs[size_t(c)].compute.kind != Site::Root || nest.funcs[size_t(c)].stages.size() != 1 ||
            ct.tiles.empty() || site.level != int(ct.tiles.size()) - 1)
            continue;
        // Another Func already inside the consumer would change level with the new tiling.
        bool alone = true;
        for (size_t f = 0; f < nest.funcs.size(); f++) {
            for (const Site *s : {&nest.funcs[f].compute, &nest.funcs[f].store}) {
                if (s->kind == Site::At && s->stage.node == c) alone = false;
            }
        }
        if (!alone) continue;
        const sf::Stage &cst = dag_.nodes[size_t(c)].stages[0];
        for (const std::vector<int64_t> &block : register_blocks(ct.tiles.back(), ct.vector_loop, ct.vector_width)) {
            LoopNest base = nest;
            StageTiling &t = base.funcs[size_t(c)].stages[0];
            t.tiles.push_back(block);
            // Unrolled as the tilings' own register blocks are: even, within max_unroll_points.
            int64_t iterations = 1;
            for (int64_t e : block) iterations *= e;
            iterations /= ct.vector_width;
            t.unroll = sf::point_tile_divides(cst, t.tiles, {}) && iterations <= options_.space.max_unroll_points;
            place(std::move(base), Site::at(site.stage, site.level + 1));
        }
    }
    return out;
}

} // namespace schedforge::sampler
