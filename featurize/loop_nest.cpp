#include "featurize/loop_nest.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>

namespace schedforge::featurize {

namespace {

// Tiles of b covering a; none over an empty extent (a Func computed in an empty tile may have one).
int64_t ceil_div(int64_t a, int64_t b) { return a > 0 && b > 0 ? (a + b - 1) / b : 0; }

const Stage &stage_of(const FunctionDAG &dag, StageRef s) { return dag.nodes[size_t(s.node)].stages[size_t(s.stage)]; }

// The tiling level an RVar loop runs at: the first level whose tile is a single iteration.
int rvar_level(const StageTiling &t, size_t loop) {
    for (size_t k = 0; k < t.tiles.size(); k++) {
        if (t.tiles[k][loop] == 1) return int(k);
    }
    return int(t.tiles.size());
}

} // namespace

bool stage_within(const LoopNest &nest, StageRef r, const Site &site) {
    return (site.kind == Site::At && r == site.stage) || nest.contains(site, nest.compute_site(r));
}

void reading_stages(const FunctionDAG &dag, const LoopNest &nest, int node, std::vector<StageRef> &out) {
    for (int ei : dag.nodes[size_t(node)].outgoing_edges) {
        const Edge &e = dag.edges[size_t(ei)];
        if (nest.inlined(e.consumer_node)) {
            reading_stages(dag, nest, e.consumer_node, out);
        } else if (std::find(out.begin(), out.end(), StageRef{e.consumer_node, e.consumer_stage}) == out.end()) {
            out.push_back({e.consumer_node, e.consumer_stage});
        }
    }
}

std::string site_text(const FunctionDAG &dag, const Site &s) {
    switch (s.kind) {
    case Site::Unscheduled: return "unscheduled";
    case Site::Inline: return "inline";
    case Site::Root: return "root";
    case Site::At: break;
    }
    return "at " + stage_of(dag, s.stage).name + " level " + std::to_string(s.level);
}

std::vector<int64_t> gpu_thread_extents(const Stage &st, const StageTiling &t) {
    std::vector<int64_t> out(st.loops.size(), 1);
    for (size_t l = 0; l < st.loops.size(); l++) {
        if (st.loops[l].is_rvar || t.tiles.empty()) continue;
        out[l] = t.tiles.size() == 1 ? t.tiles[0][l] : ceil_div(t.tiles[0][l], t.tiles[1][l]);
    }
    return out;
}

int64_t gpu_threads_per_block(const Stage &st, const StageTiling &t) {
    int64_t threads = 1;
    for (int64_t e : gpu_thread_extents(st, t)) threads *= e;
    return threads;
}

Site gpu_site_around(const LoopNest &nest, const Site &site) {
    for (Site cur = site; cur.kind == Site::At; cur = nest.compute_site(cur.stage)) {
        if (nest.funcs[size_t(cur.stage.node)].stages.size() > size_t(cur.stage.stage) &&
            nest.funcs[size_t(cur.stage.node)].stages[size_t(cur.stage.stage)].gpu)
            return cur;
    }
    return Site::root();
}

namespace {

std::string validate_tiling(const FunctionDAG &dag, const LoopNest &nest, StageRef ref) {
    const Stage &st = stage_of(dag, ref);
    const StageTiling &t = nest.funcs[size_t(ref.node)].stages[size_t(ref.stage)];
    const std::string where = st.name + ": ";
    for (const auto &tile : t.tiles) {
        if (tile.size() != st.loops.size()) return where + "a tile has the wrong number of loops";
        for (size_t l = 0; l < tile.size(); l++) {
            if (tile[l] < 1) return where + "tile extents must be at least 1";
            if (st.loops[l].is_rvar && tile[l] != 1 && tile[l] != st.loop_bounds_at_root[l].extent()) {
                return where + "reduction loop " + st.loops[l].var + " can only be whole or 1 per tile";
            }
        }
    }
    for (size_t k = 1; k < t.tiles.size(); k++) {
        for (size_t l = 0; l < st.loops.size(); l++) {
            if (t.tiles[k][l] > t.tiles[k - 1][l]) return where + "tiles must nest (inner extents <= outer)";
        }
    }
    // RVars keep their order: an inner RVar never runs at an outer level than an outer one.
    int inner_rvar_level = -1;
    for (size_t l = 0; l < st.loops.size(); l++) {
        if (!st.loops[l].is_rvar || st.loop_bounds_at_root[l].extent() == 1) continue; // one iteration: no order
        const int level = rvar_level(t, l);
        if (inner_rvar_level >= 0 && level > inner_rvar_level) return where + "reduction loops cannot be reordered";
        inner_rvar_level = level;
    }
    if (t.vector_width < 1) return where + "the vector width must be at least 1";
    if (t.vector_width > 1) {
        if (t.vector_loop < 0 || t.vector_loop >= int(st.loops.size())) return where + "no vectorized loop";
        if (!st.loops[size_t(t.vector_loop)].is_pure || st.loops[size_t(t.vector_loop)].is_rvar) {
            return where + "only pure loops can be vectorized";
        }
    }
    if (t.unroll && t.tiles.empty()) return where + "only tiled loops can be unrolled (they need constant extents)";
    if (t.parallel && nest.funcs[size_t(ref.node)].compute.kind != Site::Root) {
        return where + "only Funcs at root run in parallel";
    }
    const Site &site = nest.funcs[size_t(ref.node)].compute;
    const Site inside = gpu_site_around(nest, site);
    if (inside.kind == Site::At && nest.compute_site(inside.stage).kind != Site::Root)
        return where + "computed inside a Func computed per GPU block (those host no Funcs)";
    const bool per_block = site.kind == Site::At && site == inside && site.level == 0;
    if (t.gpu) {
        if (site.kind != Site::Root && !per_block)
            return where + "only Funcs at root or at a GPU stage's block level run on GPU threads";
        if (t.parallel || t.vector_width > 1)
            return where + "a GPU tiling is not parallel or vectorized (its threads are)";
        if (site.kind == Site::Root ? t.tiles.size() != 1 && t.tiles.size() != 2 : t.tiles.size() != 1)
            return where + (site.kind == Site::Root ? "a GPU tiling at root has blocks, threads and optionally points "
                                                      "per thread (one or two tile levels)"
                                                    : "a GPU tiling in a block has one tile level (its threads)");
        if (t.unroll && t.tiles.size() != 2) return where + "only a thread's own points are unrolled";
        const int64_t threads = gpu_threads_per_block(st, t);
        if (threads > kMaxGpuThreads)
            return where + std::to_string(threads) + " GPU threads per block, over " + std::to_string(kMaxGpuThreads);
    } else if (inside.kind == Site::At) {
        if (site == inside && site.level == 0)
            return where + "a Func computed per GPU block needs a GPU tiling (the block's threads compute it)";
        if (t.parallel || t.vector_width > 1) return where + "inside a GPU thread loops are serial";
    }
    return "";
}

} // namespace

Halide::Target host_part(const Halide::Target &target) {
    Halide::Target host = target;
    for (Halide::Target::Feature f :
         {Halide::Target::CUDA, Halide::Target::OpenCL, Halide::Target::Metal, Halide::Target::D3D12Compute,
          Halide::Target::OpenGLCompute, Halide::Target::CUDACapability30, Halide::Target::CUDACapability32,
          Halide::Target::CUDACapability35, Halide::Target::CUDACapability50, Halide::Target::CUDACapability61,
          Halide::Target::CUDACapability70, Halide::Target::CUDACapability75, Halide::Target::CUDACapability80,
          Halide::Target::CUDACapability86}) {
        host = host.without_feature(f);
    }
    return host;
}

std::string storage_error(const LoopNest &nest, int node) {
    const FuncSchedule &fs = nest.funcs[size_t(node)];
    if (fs.store.kind != Site::Root && fs.store.kind != Site::At) return "no storage site";
    if (fs.store == fs.compute) return "";
    if (!nest.contains(fs.store, fs.compute)) return "storage must enclose the compute site";
    // Hoisted storage makes Halide slide windows, which Halide 14 gets wrong over our
    // overlapping (shifted-inwards) tiles: outputs differ. Not in the space until that is solved.
    return "hoisted storage (sliding windows) is not supported yet";
}

namespace {
bool reads_input(const FunctionDAG &dag, const LoopNest &nest, StageRef s) {
    for (int ei : stage_of(dag, s).incoming_edges) {
        const int p = dag.edges[size_t(ei)].producer;
        if (dag.nodes[size_t(p)].is_input || (nest.inlined(p) && reads_input(dag, nest, {p, 0}))) return true;
    }
    return false;
}
} // namespace

bool guards_tails(const FunctionDAG &dag, const LoopNest &nest, StageRef s) {
    return s.stage > 0 || reads_input(dag, nest, s);
}

std::vector<int> level0_pure_loops(const FunctionDAG &dag, const LoopNest &nest, LoopNestBounds &bounds, StageRef s) {
    const StageTiling &t = nest.funcs[size_t(s.node)].stages[size_t(s.stage)];
    const Stage &st = stage_of(dag, s);
    std::vector<int> out;
    for (size_t l = 0; l < st.loops.size(); l++) {
        if (st.loops[l].is_rvar) continue;
        if (t.tiles.empty() || t.tiles[0][l] == 1 || bounds.splits(s, 0, int(l))) out.push_back(int(l));
    }
    return out;
}

bool converts_float_to_integer(const FunctionDAG &dag, int node) {
    const Node &n = dag.nodes[size_t(node)];
    if (n.is_input || n.is_extern || n.func.values().size() != 1) return false;
    const Halide::Internal::Cast *cast = n.func.values()[0].as<Halide::Internal::Cast>();
    return cast && cast->value.type().is_float() && (cast->type.is_int() || cast->type.is_uint());
}

bool can_inline(const FunctionDAG &dag, int node) {
    const Node &n = dag.nodes[size_t(node)];
    // An extern stage reads its producers from buffers: they must be realized.
    const bool read_by_extern = std::any_of(n.outgoing_edges.begin(), n.outgoing_edges.end(), [&](int ei) {
        return dag.nodes[size_t(dag.edges[size_t(ei)].consumer_node)].is_extern;
    });
    return !n.is_input && !n.is_output && !n.is_extern && !read_by_extern && n.stages.size() == 1 &&
           n.stages[0].self_calls.empty() && n.types.size() == 1 && !converts_float_to_integer(dag, node);
}

bool is_input_wrapper(const FunctionDAG &dag, int node) {
    const Node &n = dag.nodes[size_t(node)];
    if (n.is_input || n.is_output || n.is_extern || n.stages.size() != 1 || n.func.values().size() != 1) return false;
    const Halide::Internal::Call *call = n.func.values()[0].as<Halide::Internal::Call>();
    return call && call->call_type == Halide::Internal::Call::Image && call->param.defined();
}

int native_vector_width(const FunctionDAG &dag, StageRef s, const Halide::Target &target) {
    int bytes = 8;
    for (const Halide::Type &t : dag.nodes[size_t(s.node)].types) bytes = std::min(bytes, t.bytes());
    for (int ei : stage_of(dag, s).incoming_edges) {
        for (const Halide::Type &t : dag.nodes[size_t(dag.edges[size_t(ei)].producer)].types) {
            bytes = std::min(bytes, t.bytes());
        }
    }
    return target.natural_vector_size(Halide::UInt(8 * bytes));
}

bool point_tile_divides(const Stage &st, const std::vector<std::vector<int64_t>> &tiles,
                        const std::vector<int64_t> &extents) {
    if (tiles.empty()) return true;
    const std::vector<int64_t> &enclosing = tiles.size() >= 2 ? tiles[tiles.size() - 2] : extents;
    for (size_t l = 0; l < st.loops.size(); l++) {
        if (!st.loops[l].is_rvar && enclosing[l] % tiles.back()[l] != 0) return false;
    }
    return true;
}

bool LoopNest::complete(const FunctionDAG &dag) const {
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        if (!dag.nodes[i].is_input && !scheduled(int(i))) return false;
    }
    return true;
}

bool LoopNest::contains(const Site &outer, const Site &inner) const {
    if (outer.kind == Site::Root) return true;
    if (outer.kind != Site::At) return false;
    for (Site cur = inner; cur.kind == Site::At; cur = compute_site(cur.stage)) {
        if (cur.stage == outer.stage && cur.level >= outer.level) return true;
    }
    return false;
}

std::string LoopNest::validate(const FunctionDAG &dag) const {
    if (funcs.size() != dag.nodes.size()) return "the schedule is for a different pipeline";
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        const Node &n = dag.nodes[i];
        const FuncSchedule &fs = funcs[i];
        if (n.is_input) {
            if (fs.compute.kind != Site::Unscheduled) return "input " + n.name + " cannot be scheduled";
            continue;
        }
        if (fs.compute.kind == Site::Unscheduled) continue;
        const std::string where = n.name + ": ";
        std::vector<StageRef> readers;
        reading_stages(dag, *this, int(i), readers);
        for (StageRef r : readers) {
            if (!scheduled(r.node)) return where + "scheduled before its consumer " + dag.nodes[size_t(r.node)].name;
        }
        switch (fs.compute.kind) {
        case Site::Inline:
            if (!can_inline(dag, int(i))) return where + "cannot be inlined";
            if (fs.store.kind != Site::Inline) return where + "an inlined Func has no storage";
            continue;
        case Site::Root:
            if (fs.store.kind != Site::Root) return where + "stored inside a loop but computed at root";
            break;
        case Site::At: {
            const Site &c = fs.compute;
            if (n.is_output) return where + "outputs are computed at root";
            if (c.stage.node < 0 || c.stage.node >= int(dag.nodes.size()) || c.stage.node == int(i) ||
                c.stage.stage < 0 || c.stage.stage >= int(dag.nodes[size_t(c.stage.node)].stages.size())) {
                return where + "computed at a stage that does not exist";
            }
            const FuncSchedule &host = funcs[size_t(c.stage.node)];
            if (host.compute.kind != Site::Root && host.compute.kind != Site::At) {
                return where + "computed in the loops of an unscheduled or inlined Func";
            }
            if (size_t(c.stage.stage) >= host.stages.size() || c.level < 0 ||
                c.level >= int(host.stages[size_t(c.stage.stage)].tiles.size())) {
                return where + "computed at a tiling level that does not exist";
            }
            for (StageRef r : readers) {
                if (!stage_within(*this, r, c)) {
                    return where + "computed at " + site_text(dag, c) + ", outside which " + stage_of(dag, r).name +
                           " reads it";
                }
            }
            const std::string bad = storage_error(*this, int(i));
            if (!bad.empty()) return where + bad;
            break;
        }
        case Site::Unscheduled: break;
        }
        if (fs.stages.size() != n.stages.size()) return where + "one tiling per stage is needed";
        for (size_t s = 0; s < n.stages.size(); s++) {
            const std::string bad = validate_tiling(dag, *this, {int(i), int(s)});
            if (!bad.empty()) return bad;
        }
    }
    return "";
}

std::string LoopNest::describe(const FunctionDAG &dag) const {
    std::ostringstream o;
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        if (dag.nodes[i].is_input) continue;
        const FuncSchedule &fs = funcs[i];
        o << dag.nodes[i].name << ": compute " << site_text(dag, fs.compute);
        if (fs.store != fs.compute) o << ", store " << site_text(dag, fs.store);
        o << "\n";
        if (fs.compute.kind == Site::Inline || fs.compute.kind == Site::Unscheduled) continue;
        for (size_t s = 0; s < fs.stages.size(); s++) {
            const StageTiling &t = fs.stages[s];
            o << "  " << dag.nodes[i].stages[s].name << " tiles";
            for (const auto &tile : t.tiles) {
                o << " [";
                for (size_t l = 0; l < tile.size(); l++) o << (l ? "x" : "") << tile[l];
                o << "]";
            }
            if (t.vector_width > 1)
                o << " vector " << dag.nodes[i].stages[s].loops[size_t(t.vector_loop)].var << "x" << t.vector_width;
            if (t.parallel) o << " parallel";
            if (t.unroll) o << " unroll";
            o << "\n";
        }
    }
    return o.str();
}

std::vector<Site> legal_compute_sites(const FunctionDAG &dag, const LoopNest &nest, int node) {
    std::vector<StageRef> readers;
    reading_stages(dag, nest, node, readers);
    std::vector<Site> sites{Site::root()};
    if (dag.nodes[size_t(node)].is_output) return sites;
    for (size_t g = 0; g < dag.nodes.size(); g++) {
        if (int(g) == node || (nest.funcs[g].compute.kind != Site::Root && nest.funcs[g].compute.kind != Site::At)) {
            continue;
        }
        for (size_t s = 0; s < nest.funcs[g].stages.size(); s++) {
            for (size_t k = 0; k < nest.funcs[g].stages[s].tiles.size(); k++) {
                const Site site = Site::at({int(g), int(s)}, int(k));
                if (std::all_of(readers.begin(), readers.end(),
                                [&](StageRef r) { return stage_within(nest, r, site); })) {
                    sites.push_back(site);
                }
            }
        }
    }
    return sites;
}

LoopNestBounds::LoopNestBounds(const FunctionDAG &dag, const LoopNest &nest) : dag_(dag), nest_(nest), root_(this) {}

LoopNestBounds::LoopNestBounds(const LoopNestBounds &outer, PinnedTile pin)
    : dag_(outer.dag_), nest_(outer.nest_), root_(outer.root_), outer_(&outer), pin_(std::move(pin)) {}

const LoopNestBounds::Cached &LoopNestBounds::cached(int node, const Site &site) {
    const Node &n = dag_.nodes[size_t(node)];
    for (const auto &c : regions_) {
        if (c->node == node && c->site == site) return *c;
    }
    // Inside a parallel loop fused from the host's own variables, Halide 14 bounds the
    // allocation (not the computation) of a Func computed there, at any level, loosely: along a
    // variable fused in unsplit when some variable fused outside it, the outermost aside, is
    // unsplit too, the realized region covers the host's whole production. (Measured on every
    // pattern of split and unsplit variables in fuses of three and four.)
    std::vector<int> loose;
    const StageTiling &host = nest_.funcs[size_t(site.stage.node)].stages[size_t(site.stage.stage)]; // an At site
    if (host.parallel) {
        const std::vector<int> fused = level0_pure_loops(dag_, nest_, *this, site.stage); // innermost first
        bool unsplit_outside = false;
        for (size_t i = fused.size(); i-- > 0;) {
            const bool unsplit = host.tiles[0][size_t(fused[i])] == 1;
            if (unsplit && unsplit_outside) loose.push_back(fused[i]);
            if (unsplit && i + 1 < fused.size()) unsplit_outside = true;
        }
    }
    Region r, wide;
    bool used = false, loaded = false;
    for (int ei : n.outgoing_edges) {
        const Edge &e = dag_.edges[size_t(ei)];
        const StageRef c{e.consumer_node, e.consumer_stage};
        if (!nest_.scheduled(c.node)) continue;
        if (c == site.stage && !nest_.inlined(c.node)) {
            Region tile = tile_bounds(c, site.level);
            used = used || e.use.eval(tile);
            loaded = true;
            unite(r, e.required(tile));
            for (int l : loose) tile[size_t(l)] = production_bounds(c)[size_t(l)];
            unite(wide, e.required(tile));
        } else {
            const Region loops = loop_bounds_at(c, site);
            // A consumer computed (or inlined) here reads only where it is itself produced (its
            // own reads are skipped with it, selects or not); one nested deeper is taken as produced.
            const bool here = nest_.inlined(c.node) || nest_.compute_site(c) == site;
            const Cached *at = here ? &cached(c.node, site) : nullptr;
            used = used || (e.use.eval(loops) && (!at || at->used));
            loaded = loaded || !at || (nest_.inlined(c.node) ? at->loaded : at->used);
            const Region need = e.required(loops);
            unite(r, need);
            // An inlined consumer's expressions sit in the host's loops: its loose bounds are ours.
            const bool loose_too = !loose.empty() && nest_.inlined(c.node);
            unite(wide, loose_too ? e.required(loop_bounds(c, cached(c.node, site).realized)) : need);
        }
    }
    if (r.empty()) {
        regions_.push_back(std::make_unique<Cached>(
            Cached{node, site, n.region_at_root, n.region_at_root, true, true})); // nothing scheduled reads it here
    } else {
        Region realized = std::move(wide);
        n.add_update_footprints(realized, true);
        regions_.push_back(
            std::make_unique<Cached>(Cached{node, site, std::move(r), std::move(realized), used, loaded}));
    }
    return *regions_.back();
}

const Region &LoopNestBounds::region(int node, const Site &site) {
    return site.kind == Site::At ? cached(node, site).realized : dag_.nodes[size_t(node)].region_at_root;
}

LoopNestBounds::Realization LoopNestBounds::realization(int node, const Site &site) {
    if (site.kind != Site::At) return {dag_.nodes[size_t(node)].region_at_root, true, true};
    const Cached &c = cached(node, site);
    return {c.realized, c.loaded, c.used};
}

const Region &LoopNestBounds::required(int node, const Site &site) {
    return site.kind == Site::At ? cached(node, site).required : dag_.nodes[size_t(node)].region_at_root;
}

Region LoopNestBounds::loop_bounds_at(StageRef s, const Site &site) {
    if (site.kind != Site::At) return stage_of(dag_, s).loop_bounds_at_root;
    Region r = required(s.node, site);
    if (s.stage == 0) dag_.nodes[size_t(s.node)].add_update_footprints(r, false);
    return loop_bounds(s, r);
}

Region LoopNestBounds::loop_bounds(StageRef s, const Region &region) const {
    return stage_of(dag_, s).loops_over(region);
}

const Region &LoopNestBounds::production_bounds(StageRef s) {
    for (const auto &p : production_) {
        if (p->stage == s) return p->bounds;
    }
    Region bounds = loop_bounds_at(s, nest_.compute_site(s));
    production_.push_back(std::make_unique<Production>(Production{s, std::move(bounds)}));
    return production_.back()->bounds;
}

namespace {

// The tiles of `inner` iterations that cover `outer` along one loop, numbered from 0. All are
// whole but the last: partial where tails are guarded, shifted inwards to end at outer.max
// otherwise (TailStrategy::GuardWithIf / ShiftInwards). A guarded split of a tail tile keeps
// the trip count of a whole one (`trips`): its tiles past outer.max are empty (min > max).
struct LoopSplit {
    Span outer;
    int64_t inner = 1;
    bool guarded = false;
    int64_t trips = 0; // 0: as many as cover `outer`

    int64_t count() const { return trips > 0 ? trips : ceil_div(outer.extent(), inner); }
    int64_t middle() const { return (count() - 1) / 2; } // an interior tile where there are three or more
    Span tile(int64_t i) const {
        if (guarded) return {outer.min + i * inner, std::min(outer.min + i * inner + inner - 1, outer.max)};
        // Shifted inwards: past the min too where the tile is wider than the span.
        const int64_t min = outer.min + std::min(i * inner, outer.extent() - inner);
        return {min, min + inner - 1};
    }
};

} // namespace

int64_t LoopNestBounds::tile_extent(StageRef s, int k, size_t l, int64_t outer) {
    const StageTiling &t = nest_.funcs[size_t(s.node)].stages[size_t(s.stage)];
    if (k < int(t.tiles.size())) {
        // apply() decides on each split once, from the middle production: a loop it leaves
        // unsplit there runs whole in every production, even where it would take two tiles.
        // A split Halide gets runs whole tiles, even over a span narrower than one; tiles one
        // wide are the loop itself, running here whatever its extent.
        const int64_t tile = t.tiles[size_t(k)][l];
        return tile == 1 || splits(s, k, int(l)) ? tile : outer;
    }
    return int(l) == t.vector_loop ? t.vector_width : 1;
}

std::pair<Region, int> LoopNestBounds::tiling_start(StageRef s, int level) {
    const PinnedTile *deepest = nullptr;
    for (const LoopNestBounds *b = this; b; b = b->outer_) {
        const PinnedTile *p = b->pin_ ? &*b->pin_ : nullptr;
        if (p && p->stage == s && p->level <= level && (!deepest || p->level > deepest->level)) deepest = p;
    }
    if (deepest) return {deepest->bounds, deepest->level + 1};
    return {production_bounds(s), 0};
}

Region LoopNestBounds::tile_bounds(StageRef s, int level) {
    auto [b, first] = tiling_start(s, level);
    const StageTiling &t = nest_.funcs[size_t(s.node)].stages[size_t(s.stage)];
    // Descend through the levels, taking the middle tile of each. Regions near the edges of
    // clamped accesses shrink, so an interior tile is the one most tiles look like.
    const int deepest = std::min(level, int(t.tiles.size()));
    const bool guarded = guards_tails(dag_, nest_, s);
    for (size_t l = 0; l < b.size(); l++) {
        for (int k = first; k <= deepest; k++) {
            const LoopSplit split{b[l], tile_extent(s, k, l, b[l].extent()), guarded};
            b[l] = split.tile(split.middle());
        }
    }
    return b;
}

namespace {
// Tiles of equal span merged into one class (counts summed), in order of first appearance. With
// windows at several levels there are hundreds, so they are sorted rather than searched; a few
// (no window: at most eight per class) are searched in place, without allocating.
std::vector<LoopNestBounds::TileClass> merge_classes(std::vector<LoopNestBounds::TileClass> tiles) {
    if (tiles.size() <= 32) {
        size_t kept = 0;
        for (size_t i = 0; i < tiles.size(); i++) {
            size_t j = 0;
            while (j < kept && !(tiles[j].span == tiles[i].span)) j++;
            if (j < kept) {
                tiles[j].count += tiles[i].count;
            } else {
                tiles[kept++] = tiles[i];
            }
        }
        tiles.resize(kept);
        return tiles;
    }
    std::vector<uint32_t> order(tiles.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        const Span &x = tiles[a].span, &y = tiles[b].span;
        return x.min != y.min ? x.min < y.min : x.max < y.max;
    });
    std::vector<bool> first(tiles.size(), false);
    for (size_t i = 0; i < order.size();) {
        const uint32_t head = order[i]; // the first to appear: stable_sort keeps it ahead
        first[head] = true;
        for (i++; i < order.size() && tiles[order[i]].span == tiles[head].span; i++)
            tiles[head].count += tiles[order[i]].count;
    }
    size_t kept = 0;
    for (size_t i = 0; i < tiles.size(); i++) {
        if (first[i]) tiles[kept++] = tiles[i];
    }
    tiles.resize(kept);
    return tiles;
}
} // namespace

std::vector<std::vector<LoopNestBounds::TileClass>> LoopNestBounds::tile_classes(StageRef s, int level,
                                                                                 int64_t window) {
    const auto [b, first] = tiling_start(s, level);
    const StageTiling &t = nest_.funcs[size_t(s.node)].stages[size_t(s.stage)];
    const bool guarded = guards_tails(dag_, nest_, s);
    const int deepest = std::min(level, int(t.tiles.size()));
    std::vector<std::vector<TileClass>> out(b.size());
    for (size_t l = 0; l < b.size(); l++) {
        std::vector<TileClass> cur{{b[l], 1}};
        for (int k = first; k <= deepest; k++) {
            std::vector<TileClass> next; // every tile, merged into classes below
            next.reserve(cur.size() * size_t(9 + std::max<int64_t>(window, 1))); // ends, window, empties
            auto add = [&](const Span &span, int64_t count) { next.push_back({span, count}); };
            // Halide tests a guarded bound in the loop's innermost tile loop: where that is
            // further in, this level's loop keeps the trips of a whole tile in a tail tile, and
            // those past the bound run empty (unless they do nothing: RunTotalsWalk::pinned).
            int64_t whole = guarded && k > 0 ? extent_above(s, k, int(l)) : 0;
            if (whole > 0 && tile_extent(s, k, l, whole) <= 1) whole = 0; // the innermost: guarded here
            for (const TileClass &c : cur) {
                const int64_t step = std::max<int64_t>(1, tile_extent(s, k, l, whole > 0 ? whole : c.span.extent()));
                const LoopSplit split{c.span, step, guarded, whole > 0 ? ceil_div(whole, step) : 0};
                const int64_t n = ceil_div(std::max<int64_t>(c.span.extent(), 0), step); // not empty
                // The two tiles at each end on their own (clamps reach past the first), the
                // interior as `window` consecutive tiles around the middle one, its count spread.
                const int64_t ends = std::min<int64_t>(2, n / 2), inner = n - 2 * ends;
                for (int64_t i = 0; i < ends; i++) add(split.tile(i), c.count);
                const int64_t w = std::min(inner, std::max<int64_t>(window, 1));
                const int64_t first = (n - 1) / 2 - (w - 1) / 2;
                for (int64_t i = 0; i < w; i++) add(split.tile(first + i), c.count * (inner / w + (i < inner % w)));
                for (int64_t i = n - ends; i < n; i++) add(split.tile(i), c.count);
                // Empty tiles: the two nearest on their own (a stencil may still read from them),
                // the farthest standing for the rest.
                const int64_t empty = split.count() - n;
                for (int64_t i = n; i < n + std::min<int64_t>(empty, 2); i++) add(split.tile(i), c.count);
                if (empty > 2) add(split.tile(split.count() - 1), c.count * (empty - 2));
            }
            cur = merge_classes(std::move(next));
        }
        out[l] = std::move(cur);
    }
    return out;
}

bool LoopNestBounds::splits(StageRef s, int k, int l) {
    if (root_ != this) return root_->splits(s, k, l);
    if (splits_.empty()) splits_.resize(dag_.nodes.size());
    auto &stages = splits_[size_t(s.node)];
    if (stages.empty()) stages.resize(dag_.nodes[size_t(s.node)].stages.size());
    auto &memo = stages[size_t(s.stage)];
    const size_t loops = stage_of(dag_, s).loops.size();
    const StageTiling &t = nest_.funcs[size_t(s.node)].stages[size_t(s.stage)];
    if (memo.empty()) memo.assign(t.tiles.size() * loops, -1);
    signed char &m = memo[size_t(k) * loops + size_t(l)];
    if (m < 0) m = trips_if_split(s, k, l) > 1 || (k == t.levels() - 2 && unrolls(s));
    return m;
}

bool LoopNestBounds::unrolls(StageRef s) {
    if (root_ != this) return root_->unrolls(s);
    if (unrolls_.empty()) unrolls_.resize(dag_.nodes.size());
    auto &stages = unrolls_[size_t(s.node)];
    if (stages.empty()) stages.assign(dag_.nodes[size_t(s.node)].stages.size(), -1);
    signed char &m = stages[size_t(s.stage)];
    if (m < 0) m = decide_unroll(s);
    return m;
}

bool LoopNestBounds::decide_unroll(StageRef s) {
    const StageTiling &t = nest_.funcs[size_t(s.node)].stages[size_t(s.stage)];
    const bool guarded = guards_tails(dag_, nest_, s);
    if (!t.unroll || t.tiles.empty() || (s.stage == 0 && guarded)) return false;
    // The search unrolls only dividing tiles already, but a nest from elsewhere (a file, a random
    // sampler) may not, and the regions a decision was made on may differ from Halide's. Each
    // point tile must divide what runs around it: the production, narrowed by every level above.
    const Region &b = production_bounds(s);
    const std::vector<int64_t> &point = t.tiles.back();
    std::vector<int64_t> around;
    for (size_t l = 0; l < b.size(); l++) {
        around.push_back(b[l].extent());
        for (size_t k = 0; k + 1 < t.tiles.size(); k++) around[l] = std::min(around[l], t.tiles[k][l]);
    }
    if (!point_tile_divides(stage_of(dag_, s), {point}, around)) return false;
    if (!guarded || t.vector_loop < 0) return true;
    // Guarded tails: an unrolled vector wholly past the guard, in a tile Halide's loop
    // partitioning makes constant, is a store predicated on a constant false, and Halide 14 then
    // drops the whole pipeline's body (dataset train-3001: pipeline seed 15626688281249951677,
    // sample 13, ran nothing). So every point tile along the vector loop, tails of the levels
    // above included, must reach into its last vector.
    const size_t l = size_t(t.vector_loop);
    std::set<int64_t> sizes = {b[l].extent()}; // point tile sizes along l, level by level
    int64_t whole = b[l].extent();
    for (const std::vector<int64_t> &level : t.tiles) {
        const int64_t tile = level[l];
        std::set<int64_t> next;
        for (int64_t n : sizes) {
            next.insert(std::min(n, tile));
            if (n > tile && n % tile != 0) next.insert(n % tile);
            // A guarded split of a tail keeps a whole tile's trip count: its last tiles are empty.
            if (n > 0 && ceil_div(n, tile) < ceil_div(whole, tile)) next.insert(0);
        }
        sizes = std::move(next);
        whole = std::min(whole, tile);
    }
    const int64_t last_vector = (ceil_div(point[l], int64_t(t.vector_width)) - 1) * t.vector_width;
    return std::all_of(sizes.begin(), sizes.end(), [&](int64_t n) { return n == point[l] || n > last_vector; });
}

int64_t LoopNestBounds::extent_above(StageRef s, int level, int loop) {
    int64_t outer = production_bounds(s)[size_t(loop)].extent();
    for (int k = 0; k < level; k++) outer = tile_extent(s, k, size_t(loop), outer);
    return outer;
}

std::vector<LoopNestBounds::Size> LoopNestBounds::span_sizes(StageRef s, int level) {
    const Stage &st = stage_of(dag_, s);
    const StageTiling &t = nest_.funcs[size_t(s.node)].stages[size_t(s.stage)];
    const Site &site = nest_.compute_site(s);
    // The production's spans: at root, a pure loop runs over the pipeline's size, a run-time
    // value; inside a consumer, over a region sized as that site sizes it. Reduction domains
    // have constant extents in the pipelines we generate.
    std::vector<Size> v(st.loops.size(), Size::Constant);
    const std::vector<Size> *dims = site.kind == Site::At ? &dim_sizes(s.node, site) : nullptr;
    for (size_t l = 0; l < st.loops.size(); l++) {
        if (!st.loops[l].is_rvar) v[l] = dims ? (*dims)[size_t(st.loops[l].dim)] : Size::Unbounded;
    }
    // Down the levels: a loop one wide at a level spans one point there; a shifted split spans
    // whole tiles; a guarded one ends in a partial tile (at most a tile: bounded) unless its
    // tiles divide a constant span (Halide's simplifier then proves the guard away).
    const bool guarded = guards_tails(dag_, nest_, s);
    const int deepest = std::min(level, int(t.tiles.size()) - 1);
    for (size_t l = 0; l < st.loops.size(); l++) {
        for (int k = 0; k <= deepest; k++) {
            const int64_t tile = t.tiles[size_t(k)][l];
            if (tile == 1 || (splits(s, k, int(l)) && !guarded)) {
                v[l] = Size::Constant;
            } else if (splits(s, k, int(l))) {
                const bool divides = v[l] == Size::Constant && extent_above(s, k, int(l)) % tile == 0;
                v[l] = divides ? Size::Constant : Size::Bounded;
            }
        }
        if (level >= int(t.tiles.size())) v[l] = Size::Constant; // the point level: one vector or point
    }
    return v;
}

namespace {
// The reader's loops that a read's bounds along dimension d move with (bit l: loop l).
uint64_t loops_read(const Edge &e, size_t d) {
    return e.region[d].first.loops_read() | e.region[d].second.loops_read();
}

LoopNestBounds::Size loosest(const std::vector<LoopNestBounds::Size> &sizes) {
    return sizes.empty() ? LoopNestBounds::Size::Constant : *std::max_element(sizes.begin(), sizes.end());
}
} // namespace

void LoopNestBounds::size_reads(int node, const Site &site, std::vector<Size> &dims) {
    auto raise = [](Size &d, Size to) { d = std::max(d, to); };
    for (int ei : dag_.nodes[size_t(node)].outgoing_edges) {
        const Edge &e = dag_.edges[size_t(ei)];
        const StageRef c{e.consumer_node, e.consumer_stage};
        const bool host = site.kind == Site::At && c == site.stage && !nest_.inlined(c.node);
        if (!nest_.scheduled(c.node) ||
            (site.kind == Site::At && !host && !nest_.inlined(c.node) && !stage_within(nest_, c, site)))
            continue;
        const Stage &st = stage_of(dag_, c);
        uint64_t pure = 0;
        for (size_t l = 0; l < st.loops.size() && l < 64; l++) {
            if (!st.loops[l].is_rvar) pure |= uint64_t(1) << l;
        }
        // A bound on a run-time value (an input's extent, a data-dependent index clamped to one).
        for (size_t d = 0; d < dims.size() && d < e.region.size(); d++) {
            if (e.region[d].first.reads_run_time_values() || e.region[d].second.reads_run_time_values())
                raise(dims[d], Size::Unbounded);
        }
        if (site.kind != Site::At) {
            for (size_t d = 0; d < dims.size() && d < e.region.size(); d++) {
                if (loops_read(e, d) & pure) raise(dims[d], Size::Unbounded);
            }
            continue;
        }
        // A reader realized within the site passes on how its own region is sized, along the
        // loops the bound reads.
        if (!host) {
            const std::vector<Size> &reader = dim_sizes(c.node, nest_.inlined(c.node) ? site : nest_.compute_site(c));
            for (size_t d = 0; d < dims.size() && d < e.region.size(); d++) {
                const uint64_t loops = loops_read(e, d);
                for (size_t l = 0; l < st.loops.size() && l < 64; l++) {
                    const int cd = st.loops[l].dim;
                    if ((loops >> l & 1) && cd >= 0 && size_t(cd) < reader.size()) raise(dims[d], reader[size_t(cd)]);
                }
            }
        }
        // Bounds that are not affine (a division, a clamp) give a constant extent only where it
        // is the same wherever the tile starts (the pipeline's own origin is a run-time value):
        // compare the reader's tile here with it shifted by one to three points.
        const Region loops = host ? tile_bounds(c, site.level) : loop_bounds_at(c, site);
        const Region here = e.required(loops);
        for (int64_t shift = 1; shift <= 3; shift++) {
            Region moved = loops;
            for (size_t l = 0; l < moved.size(); l++) {
                if (pure >> l & 1) moved[l].min += shift, moved[l].max += shift;
            }
            const Region there = e.required(moved);
            for (size_t d = 0; d < dims.size() && d < e.region.size(); d++) {
                const bool affine = e.region[d].first.is_affine() && e.region[d].second.is_affine();
                if (!affine && here[d].extent() != there[d].extent()) raise(dims[d], Size::Bounded);
            }
        }
    }
}

const std::vector<LoopNestBounds::Size> &LoopNestBounds::dim_sizes(int node, const Site &site) {
    for (const auto &v : sizes_) {
        if (v->node == node && v->site == site) return v->dims;
    }
    const Region base = region(node, site);
    std::vector<Size> dims(base.size(), Size::Constant);
    size_reads(node, site, dims);
    const std::vector<Size> spans = span_sizes(site.stage, site.level);
    // An extent that moves with the widened spans together takes the loosest of their sizings.
    const Size spans_size = loosest(spans);
    if (spans_size != Size::Constant) {
        // Widen every varying span of the host's tile by one and see which extents follow.
        Region tile = tile_bounds(site.stage, site.level);
        for (size_t l = 0; l < tile.size(); l++) {
            if (spans[l] != Size::Constant) tile[l].max++;
        }
        LoopNestBounds widened(*this, PinnedTile{site.stage, site.level, std::move(tile)});
        const Region &r = widened.region(node, site);
        for (size_t d = 0; d < dims.size() && d < r.size(); d++) {
            if (r[d].extent() != base[d].extent()) dims[d] = std::max(dims[d], spans_size);
        }
    }
    sizes_.push_back(std::make_unique<Sizes>(Sizes{node, site, std::move(dims)}));
    return sizes_.back()->dims;
}

LoopNestBounds::Size LoopNestBounds::allocation_size(int node, const Site &site) {
    if (site.kind != Site::At) {
        std::vector<Size> dims(dag_.nodes[size_t(node)].region_at_root.size(), Size::Constant);
        size_reads(node, site, dims);
        return loosest(dims);
    }
    return loosest(dim_sizes(node, site));
}

int64_t LoopNestBounds::trips(StageRef s, int level, int loop) {
    const int64_t outer = extent_above(s, level, loop);
    return ceil_div(outer, tile_extent(s, level, size_t(loop), outer));
}

int64_t LoopNestBounds::trips_if_split(StageRef s, int level, int loop) {
    const StageTiling &t = nest_.funcs[size_t(s.node)].stages[size_t(s.stage)];
    const int64_t outer = extent_above(s, level, loop);
    return ceil_div(outer, std::min(outer, t.tiles[size_t(level)][size_t(loop)]));
}

int64_t LoopNestBounds::level_trips(StageRef s, int level) {
    int64_t n = 1;
    for (size_t l = 0; l < stage_of(dag_, s).loops.size(); l++) n *= trips(s, level, int(l));
    return n;
}

int64_t LoopNestBounds::iterations(const Site &site) {
    if (site.kind != Site::At) return 1;
    int64_t n = iterations(nest_.compute_site(site.stage));
    for (int k = 0; k <= site.level; k++) n *= level_trips(site.stage, k);
    return n;
}

LoopNestBounds::GuardedVectors LoopNestBounds::guarded_vectors(StageRef s) {
    const StageTiling &t = nest_.funcs[size_t(s.node)].stages[size_t(s.stage)];
    const size_t l = size_t(t.vector_loop);
    // The valid extents of the tiles of each level (with their counts), down to the vectors:
    // every tile loop runs the trips of a whole tile of the level above (the nominal extent).
    int64_t nominal = production_bounds(s)[l].extent();
    std::map<int64_t, int64_t> valid = {{std::max<int64_t>(nominal, 0), 1}};
    for (int k = 0; k < t.levels(); k++) {
        const int64_t tile = std::max<int64_t>(1, tile_extent(s, k, l, nominal));
        const int64_t trips = ceil_div(nominal, tile);
        std::map<int64_t, int64_t> next;
        for (const auto &[n, count] : valid) {
            const int64_t full = std::min(n / tile, trips), rest = n - full * tile;
            if (full > 0) next[tile] += full * count;
            if (full < trips) next[std::min(rest, tile)] += count;       // partial (or empty)
            if (full + 1 < trips) next[0] += (trips - full - 1) * count; // empty
        }
        valid = std::move(next);
        nominal = tile;
    }
    GuardedVectors v;
    for (const auto &[n, count] : valid) (n >= nominal ? v.whole : n > 0 ? v.partial : v.empty) += count;
    return v;
}

int64_t LoopNestBounds::points_per_production(StageRef s) {
    const Region &b = production_bounds(s);
    const StageTiling &t = nest_.funcs[size_t(s.node)].stages[size_t(s.stage)];
    const bool guarded = guards_tails(dag_, nest_, s);
    int64_t points = 1;
    for (size_t l = 0; l < b.size(); l++) {
        if (guarded) {
            points *= std::max<int64_t>(b[l].extent(), 0);
            continue;
        }
        int64_t rounded = int(l) == t.vector_loop ? t.vector_width : 1;
        for (int k = 0; k < t.levels(); k++) rounded *= trips(s, k, int(l));
        points *= rounded;
    }
    return points;
}

// Walks the compute sites from the root inwards. At each site, the hosted Funcs are measured
// in a child LoopNestBounds whose host tile is pinned to one class at a time; measurements are
// per iteration of the innermost pinned site.
class LoopNestBounds::RunTotalsWalk {
public:
    RunTotalsWalk(const FunctionDAG &dag, const LoopNest &nest, const std::vector<bool> *wanted)
        : dag_(dag), nest_(nest), offset_(dag.nodes.size() + 1, 0), hosted_(dag.nodes.size()),
          needed_(dag.nodes.size(), -1) {
        for (size_t i = 0; i < dag.nodes.size(); i++) {
            offset_[i + 1] = offset_[i] + dag.nodes[i].stages.size();
            hosted_[i].resize(dag.nodes[i].stages.size());
        }
        for (size_t i = 0; i < dag.nodes.size(); i++) {
            const Site &c = nest.funcs[i].compute;
            if (c.kind == Site::Root) roots_.push_back(int(i));
            if (c.kind != Site::At) continue;
            auto &levels = hosted_[size_t(c.stage.node)][size_t(c.stage.stage)];
            if (levels.size() <= size_t(c.level)) levels.resize(size_t(c.level) + 1);
            levels[size_t(c.level)].push_back(int(i));
        }
        for (size_t i = 0; i < dag.nodes.size(); i++) needed(int(i), wanted);
        may_skip_.assign(dag.nodes.size(), false);
        for (size_t i = 0; i < dag.nodes.size(); i++) { // consumers first: producers see theirs
            for (int ei : dag.nodes[i].outgoing_edges) {
                const Edge &e = dag.edges[size_t(ei)];
                if (!e.use.unconditional() || may_skip_[size_t(e.consumer_node)]) may_skip_[i] = true;
            }
        }
    }

    RunTotals run(LoopNestBounds &root) {
        Measures m = zero();
        funcs(root, roots_, Depth::Exact, m);
        RunTotals out;
        out.realized_points = std::move(m.realized);
        out.smallest_realized_points = std::move(m.smallest);
        for (size_t i = 0; i < dag_.nodes.size(); i++) {
            out.points.emplace_back(m.sums.begin() + std::ptrdiff_t(offset_[i]),
                                    m.sums.begin() + std::ptrdiff_t(offset_[i + 1]));
            out.productions.push_back(m.sums[productions(int(i))]);
            out.realizations.push_back(m.sums[realizations(int(i))]);
        }
        return out;
    }

private:
    struct Measures {
        // Summed over iterations: points per stage (offset_), then productions and realizations per node.
        std::vector<double> sums;
        std::vector<double> realized; // per node: the largest realization
        std::vector<double> smallest; // per node: the smallest (infinite where none)
    };
    Measures zero() const {
        return {std::vector<double>(offset_.back() + 2 * dag_.nodes.size(), 0.0),
                std::vector<double>(dag_.nodes.size(), 0.0),
                std::vector<double>(dag_.nodes.size(), std::numeric_limits<double>::infinity())};
    }
    // The smallest realizations of `q` into `m`'s.
    static void take_smallest(Measures &m, const Measures &q) {
        for (size_t i = 0; i < q.smallest.size(); i++) m.smallest[i] = std::min(m.smallest[i], q.smallest[i]);
    }
    size_t productions(int node) const { return offset_.back() + size_t(node); }
    size_t realizations(int node) const { return offset_.back() + dag_.nodes.size() + size_t(node); }

    // Whether node i or a Func computed inside its loops is wanted.
    bool needed(int i, const std::vector<bool> *wanted) {
        int &n = needed_[size_t(i)];
        if (n >= 0) return n;
        n = !wanted || (*wanted)[size_t(i)];
        for (const auto &levels : hosted_[size_t(i)]) {
            for (const auto &nodes : levels) {
                for (int h : nodes) n = needed(h, wanted) || n;
            }
        }
        return n;
    }

    // How far down hosted sites are measured: every tile class, the middle tile standing for
    // all, or not at all (the Funcs `nodes` alone).
    enum class Depth { Exact, Middle, Shallow };

    // The Funcs `nodes`, computed once per iteration of ctx's innermost pinned site, and what
    // their loops host, to `depth`.
    void funcs(LoopNestBounds &ctx, const std::vector<int> &nodes, Depth depth, Measures &m) {
        for (int n : nodes) {
            if (!needed_[size_t(n)]) continue;
            // Stored where computed (storage_error).
            const Site &store = nest_.funcs[size_t(n)].store;
            const LoopNestBounds::Realization here = ctx.realization(n, store);
            if (!here.allocated) continue; // only consumers that are skipped here load it
            m.sums[realizations(n)] += 1;
            double &realized = m.realized[size_t(n)];
            const int64_t allocated = region_points(allocated_region(dag_.nodes[size_t(n)], store, here.region));
            realized = std::max(realized, double(allocated));
            m.smallest[size_t(n)] = std::min(m.smallest[size_t(n)], double(allocated));
            if (!here.produced) continue; // allocated, but no consumer reads it here
            m.sums[productions(n)] += 1;
            for (size_t s = 0; s < dag_.nodes[size_t(n)].stages.size(); s++) {
                const StageRef ref{n, int(s)};
                m.sums[offset_[size_t(n)] + s] += double(ctx.points_per_production(ref));
                const auto &levels = hosted_[size_t(n)][s];
                for (size_t k = 0; depth != Depth::Shallow && k < levels.size(); k++) {
                    if (std::any_of(levels[k].begin(), levels[k].end(),
                                    [&](int h) { return needed_[size_t(h)] > 0; })) {
                        site(ctx, ref, int(k), levels[k], depth, m);
                    }
                }
            }
        }
    }

    // Sums (points, productions) and maximizes (realizations) the Funcs computed at level
    // `level` of `host` over all of its tiles there, per production of the host. The variations
    // along each loop are measured with the sites nested inside at their middle tile, and
    // applied as ratios to the middle tile's measures: exact along the middle path, without a
    // cost exponential in the depth of the nest.
    void site(LoopNestBounds &ctx, StageRef host, int level, const std::vector<int> &nodes, Depth depth, Measures &m) {
        const Region mid = ctx.tile_bounds(host, level);
        // The middle tile cannot stand for the others where it skips a Func they produce.
        if (depth == Depth::Middle &&
            std::any_of(nodes.begin(), nodes.end(), [&](int n) { return may_skip_[size_t(n)]; })) {
            const Measures q = pinned(ctx, host, level, mid, nodes, Depth::Shallow);
            if (std::any_of(nodes.begin(), nodes.end(), [&](int n) { return q.sums[productions(n)] == 0; }))
                depth = Depth::Exact;
        }
        std::vector<Missed> missed;
        Measures r = around(ctx, host, level, nodes, depth, mid, mid, &missed);
        // What the middle tile does not produce at all (Halide skips a Func no consumer reads
        // there) is measured again around a tile that produces it, so that the variations along
        // the other loops are seen.
        while (!missed.empty()) {
            const size_t loop = missed[0].loop;
            const Span span = missed[0].span;
            Region anchor = mid;
            anchor[loop] = span;
            const Measures q = around(ctx, host, level, nodes, depth, mid, anchor, nullptr);
            for (auto it = missed.begin(); it != missed.end();) {
                if (it->loop != loop || !(it->span == span)) {
                    ++it;
                    continue;
                }
                r.sums[it->index] = q.sums[it->index];
                it = missed.erase(it);
            }
        }
        for (size_t i = 0; i < r.sums.size(); i++) m.sums[i] += r.sums[i];
        for (size_t i = 0; i < r.realized.size(); i++) m.realized[i] = std::max(m.realized[i], r.realized[i]);
        take_smallest(m, r);
    }

    // A sum the anchor tile of site() has none of, and the first tile along `loop` that has most.
    struct Missed {
        size_t index, loop;
        Span span;
    };

    // site()'s measures with the host's tile at `anchor` (`mid`, the middle tile, or one near it)
    // standing for the others: every loop's variation is measured with the other loops at the anchor. With `missed`,
    // the sums the anchor has none of, though other tiles do, are listed there.
    Measures around(LoopNestBounds &ctx, StageRef host, int level, const std::vector<int> &nodes, Depth depth,
                    const Region &mid, const Region &anchor, std::vector<Missed> *missed) {
        const bool exact = depth == Depth::Exact;
        const auto classes = ctx.tile_classes(host, level);                         // only their counts when not exact
        const auto windows = exact ? ctx.tile_classes(host, level, kInteriorWindow) // read only when exact
                                   : std::vector<std::vector<TileClass>>{};
        const Measures at_anchor = pinned(ctx, host, level, anchor, nodes, depth);
        const bool nested = std::any_of(nodes.begin(), nodes.end(), [&](int h) { return hosts_sites(h); });
        const Measures coarse = exact && nested ? pinned(ctx, host, level, anchor, nodes, Depth::Middle) : at_anchor;
        double tiles = 1;
        for (const auto &c : classes) tiles *= double(loop_count(c));
        Measures r = at_anchor;
        for (double &p : r.sums) p *= tiles;
        std::optional<Measures> shallow_anchor; // the anchor tile without nested sites, for probes
        std::vector<bool> listed(missed ? r.sums.size() : 0, false);
        for (size_t l = 0; exact && l < classes.size(); l++) {
            if (classes[l].size() < 2) continue;
            Measures along = zero(); // the tiles along loop l, the other loops at the anchor
            auto add = [&](const Measures &q, int64_t count) {
                for (size_t i = 0; i < q.sums.size(); i++) along.sums[i] += double(count) * q.sums[i];
                for (size_t i = 0; i < q.realized.size(); i++)
                    along.realized[i] = std::max(along.realized[i], q.realized[i]);
                take_smallest(along, q);
            };
            // Tiles measured so far along loop l, the anchor first (a deque: `at` returns
            // references that must outlive later measurements).
            std::deque<std::pair<Span, Measures>> seen{{anchor[l], coarse}};
            auto at = [&](const Span &span) -> const Measures & {
                for (const auto &[sp, q] : seen) {
                    if (sp == span) return q;
                }
                Region tile = anchor;
                tile[l] = span;
                seen.emplace_back(span, pinned(ctx, host, level, tile, nodes, Depth::Middle));
                return seen.back().second;
            };
            // Probes measure the hosted Funcs alone where they host sites (those are measured
            // only where the probes find a difference).
            auto probe = [&](const Span &span) -> Measures {
                if (!nested) return at(span);
                if (span == anchor[l]) {
                    if (!shallow_anchor) shallow_anchor = pinned(ctx, host, level, anchor, nodes, Depth::Shallow);
                    return *shallow_anchor;
                }
                Region tile = anchor;
                tile[l] = span;
                return pinned(ctx, host, level, tile, nodes, Depth::Shallow);
            };
            for (const TileClass &c : interior_classes(classes[l], windows[l], mid[l], probe)) add(at(c.span), c.count);
            const double n = double(loop_count(classes[l]));
            for (size_t i = 0; i < r.sums.size(); i++) {
                const double base = coarse.sums[i];
                r.sums[i] = base > 0 ? r.sums[i] * along.sums[i] / (n * base) : r.sums[i] + along.sums[i] * tiles / n;
                if (missed && base == 0 && along.sums[i] > 0 && !listed[i]) {
                    listed[i] = true;
                    auto most = std::max_element(seen.begin(), seen.end(), [&](const auto &a, const auto &b) {
                        return a.second.sums[i] < b.second.sums[i];
                    });
                    missed->push_back({i, l, most->first});
                }
            }
            for (size_t i = 0; i < r.realized.size(); i++) {
                const double base = coarse.realized[i];
                r.realized[i] =
                    base > 0 ? r.realized[i] * along.realized[i] / base : std::max(r.realized[i], along.realized[i]);
            }
            take_smallest(r, along);
        }
        return r;
    }

    // Most interiors are uniform: the middle tile stands for all. Where a consumer resamples,
    // regions repeat with a period instead (an upsampling by 3 reads 1, 2, 2, 1, 2, 2, ...
    // rows per row); where an access clamps, tiles far from the edge can shrink. So a few
    // interior tiles are measured (the middle one's neighbours, and one a quarter of the way
    // in from each side): when one differs from the middle, a window of interior tiles stands
    // for the interior instead (all of them, or kInteriorWindow: exact for periods dividing it).
    static constexpr int64_t kInteriorWindow = 24;
    template<typename Probe>
    static const std::vector<TileClass> &interior_classes(const std::vector<TileClass> &classes,
                                                          const std::vector<TileClass> &window, const Span &middle,
                                                          const Probe &probe) {
        if (window.size() == classes.size()) return classes;
        Region extra; // the window's tiles not among the classes
        for (const TileClass &c : window) {
            if (std::none_of(classes.begin(), classes.end(), [&](const TileClass &k) { return k.span == c.span; }))
                extra.push_back(c.span);
        }
        Region probes{{middle.min - middle.extent(), middle.max - middle.extent()},
                      {middle.min + middle.extent(), middle.max + middle.extent()}};
        probes.push_back(extra[extra.size() / 4]);
        probes.push_back(extra[extra.size() * 3 / 4]);
        const Measures m = probe(middle);
        for (const Span &p : probes) {
            const bool in_window = std::any_of(extra.begin(), extra.end(), [&](const Span &e) { return e == p; });
            if (in_window && !same(probe(p), m)) return window;
        }
        return classes;
    }
    static bool same(const Measures &a, const Measures &b) {
        return a.sums == b.sums && a.realized == b.realized && a.smallest == b.smallest;
    }

    // The hosted Funcs measured with the host's tile at `level` pinned to `tile`.
    Measures pinned(const LoopNestBounds &ctx, StageRef host, int level, const Region &tile,
                    const std::vector<int> &nodes, Depth depth) {
        LoopNestBounds child(ctx, {host, level, tile});
        Measures q = zero();
        // Halide trims the iterations of a loop that store nothing (TrimNoOps): an empty tile
        // of a guarded split runs only where a Func computed in it has something to compute.
        const bool empty = std::any_of(tile.begin(), tile.end(), [](const Span &t) { return t.extent() <= 0; });
        if (empty && std::none_of(nodes.begin(), nodes.end(), [&](int n) { return computes(child, n); })) return q;
        funcs(child, nodes, depth, q);
        return q;
    }

    // Whether some stage of `node` has loops with iterations where `bounds` pin its site.
    bool computes(LoopNestBounds &bounds, int node) const {
        for (size_t s = 0; s < dag_.nodes[size_t(node)].stages.size(); s++) {
            const Region &b = bounds.production_bounds({node, int(s)});
            if (std::all_of(b.begin(), b.end(), [](const Span &l) { return l.extent() > 0; })) return true;
        }
        return false;
    }

    bool hosts_sites(int node) const {
        for (const auto &levels : hosted_[size_t(node)]) {
            for (const auto &nodes : levels) {
                if (!nodes.empty()) return true;
            }
        }
        return false;
    }

    static int64_t loop_count(const std::vector<TileClass> &classes) {
        int64_t n = 0;
        for (const TileClass &c : classes) n += c.count;
        return n;
    }

    const FunctionDAG &dag_;
    const LoopNest &nest_;
    std::vector<size_t> offset_;                                     // first stage index of each node
    std::vector<std::vector<std::vector<std::vector<int>>>> hosted_; // [node][stage][level]: Funcs computed there
    std::vector<int> roots_;                                         // Funcs computed at root
    std::vector<int> needed_;                                        // -1 unknown, 0, 1
    std::vector<bool> may_skip_; // read conditionally, maybe through its consumers: may not be produced
};

namespace {
std::string spans_text(const Region &r) {
    std::string out;
    for (size_t d = 0; d < r.size(); d++) {
        out += (d ? "x" : "") + std::string("[") + std::to_string(r[d].min) + "," + std::to_string(r[d].max) + "]";
    }
    return out;
}
} // namespace

std::string LoopNestBounds::describe() {
    std::ostringstream o;
    for (size_t i = 0; i < dag_.nodes.size(); i++) {
        const FuncSchedule &fs = nest_.funcs[i];
        if (fs.compute.kind != Site::Root && fs.compute.kind != Site::At) continue;
        o << dag_.nodes[i].name << ": region " << spans_text(region(int(i), fs.store)) << "\n";
        for (size_t s = 0; s < dag_.nodes[i].stages.size(); s++) {
            const StageRef ref{int(i), int(s)};
            o << "  " << dag_.nodes[i].stages[s].name << " loops " << spans_text(production_bounds(ref)) << "\n";
            for (int k = 0; k < int(fs.stages[s].tiles.size()); k++) {
                o << "    level " << k << " tiles:";
                for (const auto &loop : tile_classes(ref, k)) {
                    o << " {";
                    for (size_t c = 0; c < loop.size(); c++) {
                        o << (c ? " " : "") << loop[c].count << "x" << spans_text({loop[c].span});
                    }
                    o << "}";
                }
                o << "\n";
            }
        }
    }
    return o.str();
}

LoopNestBounds::RunTotals LoopNestBounds::run_totals(const std::vector<bool> *wanted) {
    return RunTotalsWalk(dag_, nest_, wanted).run(*this);
}

std::vector<int64_t> LoopNestBounds::allocated_points_in_tile(StageRef host, int level, const Region &tile,
                                                              const std::vector<int> &nodes) const {
    LoopNestBounds child(*this, {host, level, tile});
    std::vector<int64_t> out;
    out.reserve(nodes.size());
    for (int n : nodes) {
        const Site &store = nest_.funcs[size_t(n)].store;
        const Realization r = child.realization(n, store);
        out.push_back(r.allocated ? region_points(allocated_region(dag_.nodes[size_t(n)], store, r.region)) : 0);
    }
    return out;
}

} // namespace schedforge::featurize
