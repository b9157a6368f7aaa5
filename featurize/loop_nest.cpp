#include "featurize/loop_nest.h"

#include <algorithm>
#include <sstream>

namespace schedforge::featurize {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

const Stage &stage_of(const FunctionDAG &dag, StageRef s) { return dag.nodes[size_t(s.node)].stages[size_t(s.stage)]; }

// The non-inlined stages that read `node`, looking through inlined consumers. Unscheduled
// consumers are listed too (validate() rejects them).
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

// Whether stage `r`'s loops run within `site`.
bool stage_within(const LoopNest &nest, StageRef r, const Site &site) {
    return (site.kind == Site::At && r == site.stage) || nest.contains(site, nest.compute_site(r));
}

// The tiling level an RVar loop runs at: the first level whose tile is a single iteration.
int rvar_level(const StageTiling &t, size_t loop) {
    for (size_t k = 0; k < t.tiles.size(); k++) {
        if (t.tiles[k][loop] == 1) return int(k);
    }
    return int(t.tiles.size());
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
    return "";
}

} // namespace

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

bool unrolls(const FunctionDAG &dag, const LoopNest &nest, StageRef s) {
    return nest.funcs[size_t(s.node)].stages[size_t(s.stage)].unroll && (s.stage > 0 || !guards_tails(dag, nest, s));
}

bool converts_float_to_integer(const FunctionDAG &dag, int node) {
    const Node &n = dag.nodes[size_t(node)];
    if (n.is_input || n.func.values().size() != 1) return false;
    const Halide::Internal::Cast *cast = n.func.values()[0].as<Halide::Internal::Cast>();
    return cast && cast->value.type().is_float() && (cast->type.is_int() || cast->type.is_uint());
}

bool can_inline(const FunctionDAG &dag, int node) {
    const Node &n = dag.nodes[size_t(node)];
    return !n.is_input && !n.is_output && n.stages.size() == 1 && n.stages[0].self_calls.empty() &&
           n.types.size() == 1 && !converts_float_to_integer(dag, node);
}

bool is_input_wrapper(const FunctionDAG &dag, int node) {
    const Node &n = dag.nodes[size_t(node)];
    if (n.is_input || n.is_output || n.stages.size() != 1 || n.func.values().size() != 1) return false;
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
            if (c.level < 0 || c.level >= int(host.stages[size_t(c.stage.stage)].tiles.size())) {
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

LoopNestBounds::LoopNestBounds(const FunctionDAG &dag, const LoopNest &nest)
    : dag_(dag), nest_(nest), regions_(dag.nodes.size()), production_(dag.nodes.size()) {
    for (size_t i = 0; i < dag.nodes.size(); i++) production_[i].resize(dag.nodes[i].stages.size());
}

const LoopNestBounds::Cached &LoopNestBounds::cached(int node, const Site &site) {
    const Node &n = dag_.nodes[size_t(node)];
    std::deque<Cached> &cache = regions_[size_t(node)];
    for (const Cached &c : cache) {
        if (c.site == site) return c;
    }
    std::vector<Span> r;
    for (int ei : n.outgoing_edges) {
        const Edge &e = dag_.edges[size_t(ei)];
        const StageRef c{e.consumer_node, e.consumer_stage};
        if (!nest_.scheduled(c.node)) continue;
        unite(r, e.required(c == site.stage && !nest_.inlined(c.node) ? tile_bounds(c, site.level)
                                                                      : loop_bounds_at(c, site)));
    }
    if (r.empty()) {
        cache.push_back({site, n.region_at_root, n.region_at_root}); // nothing scheduled reads it here
    } else {
        std::vector<Span> realized = r;
        n.add_update_footprints(realized, true);
        cache.push_back({site, std::move(r), std::move(realized)});
    }
    return cache.back();
}

const std::vector<Span> &LoopNestBounds::region(int node, const Site &site) {
    return site.kind == Site::At ? cached(node, site).realized : dag_.nodes[size_t(node)].region_at_root;
}

const std::vector<Span> &LoopNestBounds::required(int node, const Site &site) {
    return site.kind == Site::At ? cached(node, site).required : dag_.nodes[size_t(node)].region_at_root;
}

std::vector<Span> LoopNestBounds::loop_bounds_at(StageRef s, const Site &site) {
    if (site.kind != Site::At) return stage_of(dag_, s).loop_bounds_at_root;
    std::vector<Span> r = required(s.node, site);
    if (s.stage == 0) dag_.nodes[size_t(s.node)].add_update_footprints(r, false);
    return loop_bounds(s, r);
}

std::vector<Span> LoopNestBounds::loop_bounds(StageRef s, const std::vector<Span> &region) const {
    return stage_of(dag_, s).loops_over(region);
}

const std::vector<Span> &LoopNestBounds::production_bounds(StageRef s) {
    std::optional<std::vector<Span>> &bounds = production_[size_t(s.node)][size_t(s.stage)];
    if (!bounds) bounds = loop_bounds_at(s, nest_.compute_site(s));
    return *bounds;
}

std::vector<Span> LoopNestBounds::tile_bounds(StageRef s, int level) {
    std::vector<Span> b = production_bounds(s);
    const StageTiling &t = nest_.funcs[size_t(s.node)].stages[size_t(s.stage)];
    for (size_t l = 0; l < b.size(); l++) {
        // Descend through the levels, taking the middle tile of each: an interior tile where
        // there are three or more. Regions near the edges of clamped accesses shrink, so an
        // interior tile is the one the allocation must hold (Halide sizes it for the largest) and
        // the one most tiles look like. A middle tile is never a guarded partial tail.
        const int deepest = std::min(level, int(t.tiles.size()));
        for (int k = 0; k <= deepest; k++) {
            const int64_t outer = b[l].extent();
            const int64_t inner = k < int(t.tiles.size())   ? std::min(outer, t.tiles[size_t(k)][l])
                                  : int(l) == t.vector_loop ? std::min<int64_t>(outer, t.vector_width)
                                                            : 1;
            b[l].min += (ceil_div(outer, inner) - 1) / 2 * inner;
            b[l].max = b[l].min + inner - 1;
        }
    }
    return b;
}

int64_t LoopNestBounds::trips(StageRef s, int level, int loop) {
    const StageTiling &t = nest_.funcs[size_t(s.node)].stages[size_t(s.stage)];
    int64_t outer = production_bounds(s)[size_t(loop)].extent();
    for (int k = 0; k < int(t.tiles.size()); k++) {
        const int64_t inner = std::min(outer, t.tiles[size_t(k)][size_t(loop)]);
        if (k == level) return ceil_div(outer, inner);
        outer = inner;
    }
    return loop == t.vector_loop ? ceil_div(outer, t.vector_width) : outer;
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

int64_t LoopNestBounds::points_per_production(StageRef s) {
    const std::vector<Span> &b = production_bounds(s);
    const StageTiling &t = nest_.funcs[size_t(s.node)].stages[size_t(s.stage)];
    const bool guarded = guards_tails(dag_, nest_, s);
    int64_t points = 1;
    for (size_t l = 0; l < b.size(); l++) {
        if (guarded) {
            points *= b[l].extent();
            continue;
        }
        int64_t rounded = int(l) == t.vector_loop ? t.vector_width : 1;
        for (int k = 0; k < t.levels(); k++) rounded *= trips(s, k, int(l));
        points *= rounded;
    }
    return points;
}

} // namespace schedforge::featurize
