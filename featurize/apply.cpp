#include "featurize/apply.h"

#include "featurize/codegen_guard.h"

#include <Halide.h>

#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace schedforge::featurize {

namespace {

using VarName = Directive::VarName;

// The loops of one stage after splitting, per tiling level (innermost first within a level).
struct StageLoops {
    std::vector<std::vector<VarName>> levels;
    // The innermost loop of level k, where a Func computed at level k goes: the nearest
    // non-empty level at or outside k (their extra iterations are 1), else the outermost.
    VarName site_var(int k) const {
        for (; k >= 0; k--) {
            if (!levels[size_t(k)].empty()) return levels[size_t(k)].front();
        }
        return {Halide::Var::outermost().name(), false};
    }
};

StageLoops tile_stage(const FunctionDAG &dag, const LoopNest &nest, LoopNestBounds &bounds, StageRef s,
                      std::vector<Directive> &out) {
    const Stage &st = dag.nodes[size_t(s.node)].stages[size_t(s.stage)];
    const StageTiling &t = nest.funcs[size_t(s.node)].stages[size_t(s.stage)];
    const int last = t.levels() - 1;
    // Halide 14 only finds compute_at loops given without a stage index, by name: every new
    // loop of an update gets a name of its own.
    const std::string suffix = s.stage == 0 ? "" : "_s" + std::to_string(s.stage);
    const bool guard = guards_tails(dag, nest, s);
    const bool unroll = bounds.unrolls(s);
    StageLoops loops;
    loops.levels.resize(size_t(t.levels()));
    std::vector<std::vector<VarName>> pure(size_t(t.levels())); // rvars go first in each level
    VarName lane;
    for (size_t l = 0; l < st.loops.size(); l++) {
        const Loop &loop = st.loops[l];
        if (loop.is_rvar) {
            int level = last;
            for (int k = 0; k < last; k++) {
                if (t.tiles[size_t(k)][l] == 1) {
                    level = k;
                    break;
                }
            }
            loops.levels[size_t(level)].push_back({loop.var, true});
            continue;
        }
        VarName current{loop.var, false};
        const size_t first_split = out.size();
        int level = last; // where `current` runs
        for (int k = 0; k < last; k++) {
            if (t.tiles[size_t(k)][l] == 1) {
                // Tiles one wide: the loop itself runs at this level, unsplit (Halide 14
                // mis-bounds guarded splits by 1 over clamped regions).
                level = k;
                break;
            }
            // Unrolled loops need a constant extent: the last split makes one even when it
            // has a single iteration.
            if (!t.gpu && !bounds.splits(s, k, int(l))) continue;
            const VarName outer{loop.var + suffix + "_" + std::to_string(k), false};
            const VarName inner{loop.var + suffix + "_t" + std::to_string(k), false};
            out.push_back({Directive::Split, s, {current, outer, inner}, t.tiles[size_t(k)][l], guard, {}});
            pure[size_t(k)].push_back(outer);
            current = inner;
        }
        if (int(l) == t.vector_loop && t.vector_width > 1) {
            const VarName outer{loop.var + suffix + "_p", false};
            lane = {loop.var + suffix + "_v", false};
            out.push_back({Directive::Split, s, {current, outer, lane}, t.vector_width, guard, {}});
            current = outer;
        }
        if (guard && out.size() - first_split >= 2) {
            // Halide 14 drops the guard of a guarded split whose inner loop is split again by a
            // divisor, when the loop keeps its Func's dimension name (f.s0.y): bounds of the
            // let f.s0.y get named f.s0.y.min/max, the Func's own bounds, and loop partitioning
            // proves the guard true (the tiles then write past the allocation). A renamed loop
            // keeps its guard; the loops split from it keep their names.
            const VarName renamed{loop.var + suffix + "_r", false};
            out[first_split].vars[0] = renamed;
            out.insert(out.begin() + std::ptrdiff_t(first_split),
                       {Directive::Rename, s, {{loop.var, false}, renamed}, 0, false, {}});
        }
        pure[size_t(level)].push_back(current);
    }
    for (size_t k = 0; k < pure.size(); k++) {
        loops.levels[k].insert(loops.levels[k].end(), pure[k].begin(), pure[k].end());
    }
    Directive reorder{Directive::Reorder, s, {}, 0, false, {}};
    if (!lane.name.empty()) reorder.vars.push_back(lane);
    for (int k = last; k >= 0; k--) {
        reorder.vars.insert(reorder.vars.end(), loops.levels[size_t(k)].begin(), loops.levels[size_t(k)].end());
    }
    if (reorder.vars.size() > 1) out.push_back(reorder);
    if (!lane.name.empty()) out.push_back({Directive::Vectorize, s, {lane}, 0, false, {}});
    if (unroll) {
        for (const VarName &v : pure[size_t(last)]) out.push_back({Directive::Unroll, s, {v}, 0, false, {}});
    }
    // Fuses a level's pure loops (innermost first, outermost in the level) from the `keep`-th on
    // into one loop, and gives the level its new loops.
    auto fuse_from = [&](int level, size_t keep, const std::string &name) {
        std::vector<VarName> &loops_k = pure[size_t(level)];
        if (loops_k.size() <= keep + 1) return;
        VarName fused = loops_k[keep];
        for (size_t i = keep + 1; i < loops_k.size(); i++) {
            const VarName next{name + suffix + "_" + std::to_string(i), false};
            out.push_back({Directive::Fuse, s, {fused, loops_k[i], next}, 0, false, {}});
            fused = next;
        }
        std::vector<VarName> &level_loops = loops.levels[size_t(level)];
        level_loops.resize(level_loops.size() - (loops_k.size() - keep)); // the rvars stay, innermost
        loops_k.resize(keep);
        loops_k.push_back(fused);
        level_loops.insert(level_loops.end(), loops_k.begin() + std::ptrdiff_t(keep), loops_k.end());
    };
    if (t.parallel && !pure[0].empty()) {
        fuse_from(0, 0, "fused");
        out.push_back({Directive::Parallel, s, {pure[0][0]}, 0, false, {}});
    }
    if (t.gpu) { // CUDA grids and blocks have three dimensions; level 1 is the threads (loop_nest.h)
        const bool blocks = nest.compute_site(s).kind == Site::Root;
        if (blocks) fuse_from(0, 2, "blocks");
        fuse_from(1, 2, "threads");
        if (blocks)
            for (const VarName &v : pure[0]) out.push_back({Directive::GpuBlocks, s, {v}, 0, false, {}});
        for (const VarName &v : pure[1]) out.push_back({Directive::GpuThreads, s, {v}, 0, false, {}});
    }
    return loops;
}

Halide::VarOrRVar var(const VarName &v) { return Halide::VarOrRVar(v.name, v.rvar); }

Halide::Stage halide_stage(const FunctionDAG &dag, StageRef s) {
    Halide::Func f(dag.nodes[size_t(s.node)].func);
    return s.stage == 0 ? Halide::Stage(f) : f.update(s.stage - 1);
}

Halide::LoopLevel loop_level(const FunctionDAG &dag, const Directive &d) {
    return Halide::LoopLevel(dag.nodes[size_t(d.host.node)].func, var(d.vars[0]));
}

std::string identifier(const std::string &name) {
    std::string id;
    for (char c : name) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return id;
}

// The names schedule source uses, the same in every process that builds the pipeline: Halide
// tells Funcs of one name apart, and names RDoms, by process-wide counters ("blur$3", "r317$x"),
// so a source written with those would differ from run to run (and a dataset's records with it).
// Funcs go by their stable_name (with the node's index where two share one); an RDom's counter
// becomes its rank among the pipeline's RDoms in the DAG's stage order ("r$0$x": a form Halide
// never gives a name, so a Var named so cannot meet one of the pipeline's own).
class SourceNames {
public:
    explicit SourceNames(const FunctionDAG &dag) {
        std::map<std::string, int> uses;
        for (const Node &n : dag.nodes) uses[identifier(stable_name(n.name))]++;
        for (size_t i = 0; i < dag.nodes.size(); i++) {
            const std::string id = identifier(stable_name(dag.nodes[i].name));
            funcs_.push_back(uses[id] > 1 ? id + "_" + std::to_string(i) : id);
        }
        for (const Node &n : dag.nodes) {
            for (const Stage &st : n.stages) {
                for (const auto &loop : st.loops) {
                    if (loop.is_rvar) rdoms_.emplace(rdom_of(loop.var), int(rdoms_.size()));
                }
            }
        }
    }

    const std::string &func(int node) const { return funcs_[size_t(node)]; }

    std::string stage(StageRef s) const {
        return s.stage == 0 ? func(s.node) : func(s.node) + ".update(" + std::to_string(s.stage - 1) + ")";
    }

    // A Var's or RVar's name, its RDom (if any) ranked.
    std::string name(const std::string &var) const {
        const std::string rdom = rdom_of(var);
        const auto it = rdom.empty() ? rdoms_.end() : rdoms_.find(rdom);
        return it == rdoms_.end() ? var : "r$" + std::to_string(it->second) + var.substr(rdom.size());
    }

    std::string var(const VarName &v) const {
        return v.name == Halide::Var::outermost().name() ? "Var::outermost()" : identifier(name(v.name));
    }

private:
    // "r317" of "r317$x" and of the loops split from it ("r317$x_0"); empty for other names.
    static std::string rdom_of(const std::string &var) {
        size_t i = 1;
        while (i < var.size() && std::isdigit(static_cast<unsigned char>(var[i]))) i++;
        return var.size() > 1 && var[0] == 'r' && i > 1 && i < var.size() && var[i] == '$' ? var.substr(0, i) : "";
    }

    std::vector<std::string> funcs_;
    std::map<std::string, int> rdoms_;
};

} // namespace

std::vector<Directive> schedule_directives(const FunctionDAG &dag, const LoopNest &nest) {
    if (!nest.complete(dag)) throw std::invalid_argument("only a complete schedule can be applied");
    const std::string bad = nest.validate(dag);
    if (!bad.empty()) throw std::invalid_argument("illegal schedule: " + bad);
    LoopNestBounds bounds(dag, nest);
    std::vector<Directive> out;
    std::vector<std::vector<StageLoops>> loops(dag.nodes.size());
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        if (dag.nodes[i].is_input || nest.inlined(int(i))) continue;
        if (dag.nodes[i].is_extern) { // no loops to schedule: a Func computed at it goes outside it
            loops[i].push_back(StageLoops{{{}}});
            continue;
        }
        for (size_t s = 0; s < dag.nodes[i].stages.size(); s++) {
            const size_t before = out.size();
            loops[i].push_back(tile_stage(dag, nest, bounds, {int(i), int(s)}, out));
            // An update left in its default loop order, said so (else Halide warns it was forgotten).
            if (s > 0 && out.size() == before)
                out.push_back({Directive::Unscheduled, {int(i), int(s)}, {}, 0, false, {}});
        }
    }
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        if (dag.nodes[i].is_input) continue;
        const FuncSchedule &fs = nest.funcs[i];
        const StageRef self{int(i), 0};
        auto site_directive = [&](const Site &site, Directive::Kind root, Directive::Kind at) {
            if (site.kind == Site::Root) {
                out.push_back({root, self, {}, 0, false, {}});
            } else {
                const VarName v = loops[size_t(site.stage.node)][size_t(site.stage.stage)].site_var(site.level);
                out.push_back({at, self, {v}, 0, false, site.stage});
            }
        };
        if (fs.compute.kind == Site::Inline) {
            out.push_back({Directive::ComputeInline, self, {}, 0, false, {}});
            continue;
        }
        site_directive(fs.compute, Directive::ComputeRoot, Directive::ComputeAt);
        if (fs.store != fs.compute) site_directive(fs.store, Directive::StoreRoot, Directive::StoreAt);
        const Node &node = dag.nodes[i];
        const int64_t padding = storage_padding_at(node, fs.store, bounds.region(int(i), fs.store));
        if (padding > 1)
            out.push_back({Directive::AlignStorage, self, {{node.func.args()[0], false}}, padding, false, {}});
    }
    return out;
}

namespace {

// Applies `d` if it places a Func (compute and store sites): those need no Stage, which an
// extern Func does not have. False for the stage directives.
bool apply_func_directive(const FunctionDAG &dag, const Directive &d) {
    Halide::Func f(dag.nodes[size_t(d.stage.node)].func);
    switch (d.kind) {
    case Directive::ComputeInline: f.compute_inline(); return true;
    case Directive::ComputeRoot: f.compute_root(); return true;
    case Directive::ComputeAt: f.compute_at(loop_level(dag, d)); return true;
    case Directive::StoreRoot: f.store_root(); return true;
    case Directive::StoreAt: f.store_at(loop_level(dag, d)); return true;
    case Directive::AlignStorage: f.align_storage(Halide::Var(d.vars[0].name), int(d.factor)); return true;
    default: return false;
    }
}

} // namespace

void apply(const FunctionDAG &dag, const LoopNest &nest) {
    if (dag.pipeline.defined()) guard_codegen(dag.pipeline);
    for (const Directive &d : schedule_directives(dag, nest)) {
        if (apply_func_directive(dag, d)) continue;
        Halide::Stage s = halide_stage(dag, d.stage);
        const auto &v = d.vars;
        switch (d.kind) {
        case Directive::Split:
            s.split(var(v[0]), var(v[1]), var(v[2]), int(d.factor),
                    d.guard_tail ? Halide::TailStrategy::GuardWithIf : Halide::TailStrategy::ShiftInwards);
            break;
        case Directive::Reorder: {
            std::vector<Halide::VarOrRVar> order;
            for (const VarName &x : v) order.push_back(var(x));
            s.reorder(order);
            break;
        }
        case Directive::Fuse: s.fuse(var(v[0]), var(v[1]), var(v[2])); break;
        case Directive::Rename: s.rename(var(v[0]), var(v[1])); break;
        case Directive::Vectorize: s.vectorize(var(v[0])); break;
        case Directive::Parallel: s.parallel(var(v[0])); break;
        case Directive::Unroll: s.unroll(var(v[0])); break;
        case Directive::Unscheduled: s.unscheduled(); break;
        case Directive::GpuBlocks: s.gpu_blocks(var(v[0])); break;
        case Directive::GpuThreads: s.gpu_threads(var(v[0])); break;
        default: break; // the Func directives, applied above
        }
    }
}

std::string schedule_source(const FunctionDAG &dag, const LoopNest &nest) {
    const std::vector<Directive> directives = schedule_directives(dag, nest);
    std::ostringstream o;
    o << "// Generated by schedforge. Expects `pipeline`, the Halide::Pipeline (in a Generator's\n"
      << "// schedule(): Pipeline pipeline = get_pipeline();).\n"
      << "using namespace Halide;\n";
    // Pipeline::get_func counts Funcs producers first; the DAG lists them consumers first.
    size_t funcs = 0;
    for (const Node &n : dag.nodes) funcs += n.is_input ? 0 : 1;
    const SourceNames names(dag);
    for (size_t i = 0; i < funcs; i++) {
        o << "Func " << names.func(int(i)) << " = pipeline.get_func(" << funcs - 1 - i << ");\n";
    }
    // By their names in the source (not Halide's): listed in the same order in every process.
    std::map<std::string, std::pair<std::string, bool>> declared; // source name -> Halide's, is an RVar
    for (const Directive &d : directives) {
        for (const VarName &v : d.vars) {
            if (v.name != Halide::Var::outermost().name())
                declared.emplace(names.name(v.name), std::pair(v.name, v.rvar));
        }
    }
    // Pure Vars are matched by name. RVar names come from a per-process counter, so an RVar of a
    // definition is read from its stage's default loop order (Stage::loops is that order,
    // innermost first): the source then schedules the same pipeline built in any process.
    // Declared in the DAG's stage order, which (unlike their names) is the same in every process.
    std::set<std::string> from_stages;
    for (const Node &n : dag.nodes) {
        for (const Stage &st : n.stages) {
            for (size_t i = 0; i < st.loops.size(); i++) {
                const std::string name = names.name(st.loops[i].var);
                if (!st.loops[i].is_rvar || !declared.count(name) || !from_stages.insert(name).second) continue;
                o << "RVar " << identifier(name) << "(" << names.stage(StageRef{st.node, st.index})
                  << ".get_schedule().dims()[" << i << "].var);\n";
            }
        }
    }
    for (const auto &[name, var] : declared) {
        if (!from_stages.count(name))
            o << (var.second ? "RVar " : "Var ") << identifier(name) << "(\"" << name << "\");\n";
    }
    for (const Directive &d : directives) {
        std::vector<std::string> v;
        for (const VarName &x : d.vars) v.push_back(names.var(x));
        const std::string &f = names.func(d.stage.node);
        const std::string s = names.stage(d.stage);
        switch (d.kind) {
        case Directive::ComputeInline: o << f << ".compute_inline();\n"; break;
        case Directive::ComputeRoot: o << f << ".compute_root();\n"; break;
        case Directive::StoreRoot: o << f << ".store_root();\n"; break;
        case Directive::ComputeAt:
        case Directive::StoreAt:
            o << f << (d.kind == Directive::ComputeAt ? ".compute_at(" : ".store_at(") << names.func(d.host.node)
              << ", " << v[0] << ");\n";
            break;
        case Directive::Split:
            o << s << ".split(" << v[0] << ", " << v[1] << ", " << v[2] << ", " << d.factor
              << ", TailStrategy::" << (d.guard_tail ? "GuardWithIf" : "ShiftInwards") << ");\n";
            break;
        case Directive::Reorder: {
            o << s << ".reorder({";
            for (size_t i = 0; i < v.size(); i++) o << (i ? ", " : "") << v[i];
            o << "});\n";
            break;
        }
        case Directive::Fuse: o << s << ".fuse(" << v[0] << ", " << v[1] << ", " << v[2] << ");\n"; break;
        case Directive::Rename: o << s << ".rename(" << v[0] << ", " << v[1] << ");\n"; break;
        case Directive::Vectorize: o << s << ".vectorize(" << v[0] << ");\n"; break;
        case Directive::Parallel: o << s << ".parallel(" << v[0] << ");\n"; break;
        case Directive::Unroll: o << s << ".unroll(" << v[0] << ");\n"; break;
        case Directive::Unscheduled: o << s << ".unscheduled();\n"; break;
        case Directive::AlignStorage: o << f << ".align_storage(" << v[0] << ", " << d.factor << ");\n"; break;
        case Directive::GpuBlocks: o << s << ".gpu_blocks(" << v[0] << ");\n"; break;
        case Directive::GpuThreads: o << s << ".gpu_threads(" << v[0] << ");\n"; break;
        }
    }
    return o.str();
}

} // namespace schedforge::featurize
