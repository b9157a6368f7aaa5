#include "featurize/schedule_features.h"

#include "featurize/cost_terms.h"
#include "featurize/glibc_heap.h"
#include "featurize/loop_nest.h"
#include "featurize/stage_loads.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>

namespace schedforge::featurize {

SCHEDFORGE_DEFINE_FEATURE_LIST(ScheduleFeatures, SCHEDFORGE_SCHEDULE_FEATURES, kNumScheduleFeatures)

const std::array<double ScheduleFeatures::*, kNumScheduleFeatures> &ScheduleFeatures::members() {
#define SCHEDFORGE_MEMBER(name, doc) &ScheduleFeatures::name,
    static const std::array<double ScheduleFeatures::*, kNumScheduleFeatures> m = {
        SCHEDFORGE_SCHEDULE_FEATURES(SCHEDFORGE_MEMBER)};
#undef SCHEDFORGE_MEMBER
    return m;
}

namespace {

// The unit of traffic between cache levels on x86 (bytes_read_past_cache).
constexpr double kCacheLineBytes = 64;
constexpr double kPageBytes = 4096;

double points(const Region &r) { return double(region_points(r)); }
double lines(const Region &r) { return r.empty() ? 1 : points(r) / double(r[0].extent()); }
double innermost(const Region &r) { return r.empty() ? 1 : double(r[0].extent()); }

bool is_zero(const JacobianEntry &e) { return e && e->num == 0; }
// Whether Halide 14 takes a buffer of `bytes` at most kStackAllocationBytes, sized as `size`
// says, from halide_malloc: sized at run time, unless Halide bounds it by 128 bytes.
bool small_buffer_on_heap(LoopNestBounds::Size size, double bytes) {
    return size == LoopNestBounds::Size::Unbounded ||
           (size == LoopNestBounds::Size::Bounded && bytes > kBoundedAllocationBytes);
}
// Whether a call's coordinates move with the stage's loop `loop` (an unknown slope moves).
bool moves_with(const Jacobian &j, size_t loop) {
    return std::any_of(j.entries.begin(), j.entries.end(), [&](const auto &row) { return !is_zero(row[loop]); });
}

// Vector registers of the target: 32 with AVX-512 and on 64-bit ARM, 16 on other x86 targets.
int vector_registers(const Halide::Target &t) {
    if (t.arch != Halide::Target::X86) return 32;
    return t.has_feature(Halide::Target::AVX512) ? 32 : 16;
}

class Featurizer {
public:
    Featurizer(const FunctionDAG &dag, const LoopNest &nest, const Halide::Target &target, const CacheSizes &caches)
        : dag_(dag), nest_(nest), target_(target), caches_(caches), b_(dag, nest), points_total_(dag.nodes.size()) {
        for (size_t i = 0; i < dag.nodes.size(); i++) {
            points_total_[i].assign(dag.nodes[i].stages.size(), 0.0);
            const FuncSchedule &fs = nest.funcs[i];
            if (dag.nodes[i].is_output || (fs.store.kind != Site::Root && fs.store.kind != Site::At)) continue;
            const Region &r = b_.region(int(i), fs.store);
            allocations_.push_back(
                {int(i), fs.store,
                 points(allocated_region(dag.nodes[i], fs.store, r)) * double(dag.nodes[i].bytes_per_point())});
        }
    }

    // Every stage's features; with `parent`, those of nodes not marked in `affected` are copied
    // from it (parent[k] is the k-th stage, as here).
    std::vector<StageFeatures> run(const std::vector<StageFeatures> *parent = nullptr,
                                   const std::vector<bool> *affected = nullptr, int64_t *reused = nullptr) {
        std::vector<StageFeatures> out;
        out.reserve(size_t(std::accumulate(dag_.nodes.begin(), dag_.nodes.end(), size_t(0),
                                           [](size_t n, const Node &node) { return n + node.stages.size(); })));
        totals_ = b_.run_totals(affected);
        // Both depend on every allocation: kept stages get them afresh.
        const double at_root = working_set_within(Site::root());
        const std::vector<double> refaulted = heap_bytes_refaulted();
        for (size_t i = 0; i < dag_.nodes.size(); i++) {
            for (size_t s = 0; s < dag_.nodes[i].stages.size(); s++) {
                StageFeatures sf;
                sf.node = int(i);
                sf.stage = int(s);
                sf.scheduled = nest_.scheduled(int(i));
                if (sf.scheduled && parent && !(*affected)[i]) {
                    sf.features = (*parent)[out.size()].features;
                    if (!nest_.inlined(int(i))) sf.features.working_set_at_root = at_root;
                    if (reused) ++*reused;
                } else if (sf.scheduled) {
                    featurize({int(i), int(s)}, sf.features);
                }
                // The allocation is the Func's: its first stage carries it.
                if (sf.scheduled && !nest_.inlined(int(i)))
                    sf.features.heap_bytes_refaulted = s == 0 ? refaulted[i] : 0;
                if (sf.scheduled) points_total_[i][s] = sf.features.points_computed_total;
                out.push_back(sf);
            }
        }
        return out;
    }

    // The nodes whose features a decision about `changed` can change (see update_schedule_features).
    std::vector<bool> affected_by(int changed) const {
        std::vector<bool> affected(dag_.nodes.size(), false);
        affected[size_t(changed)] = true;
        // Everything in the root-level loop nest that contains `node` (working sets, loop bounds).
        auto mark_group = [&](int node) {
            const int group = root_node(node);
            for (size_t n = 0; n < dag_.nodes.size(); n++) {
                if (nest_.scheduled(int(n)) && !nest_.inlined(int(n)) && root_node(int(n)) == group) affected[n] = true;
            }
        };
        // Inlining a Func that reads an input makes the stages it is inlined into guard their
        // tails (guards_tails): their loops change, and with them what is computed inside.
        const bool retiles_readers = nest_.inlined(changed) && guards_tails(dag_, nest_, {changed, 0});
        // Readers, looking through inlined readers to theirs.
        std::vector<int> work{changed};
        while (!work.empty()) {
            const int n = work.back();
            work.pop_back();
            for (int ei : dag_.nodes[size_t(n)].outgoing_edges) {
                const int c = dag_.edges[size_t(ei)].consumer_node;
                if (affected[size_t(c)]) continue;
                affected[size_t(c)] = true;
                if (nest_.inlined(c)) {
                    work.push_back(c);
                } else if (retiles_readers) {
                    mark_group(c);
                }
            }
        }
        // And the Funcs inlined into affected stages: their calls and parallelism follow those loops.
        for (bool grew = true; grew;) {
            grew = false;
            for (size_t n = 0; n < dag_.nodes.size(); n++) {
                if (affected[n] || !nest_.inlined(int(n))) continue;
                for (int ei : dag_.nodes[n].outgoing_edges) {
                    if (affected[size_t(dag_.edges[size_t(ei)].consumer_node)]) {
                        affected[n] = grew = true;
                        break;
                    }
                }
            }
        }
        // Computed inside a root-level loop nest: everything in that nest (working sets).
        const FuncSchedule &fs = nest_.funcs[size_t(changed)];
        if (fs.compute.kind == Site::At || fs.store.kind == Site::At) mark_group(changed);
        return affected;
    }

private:
    struct Allocation {
        int node;
        Site store;
        double bytes;
        bool heap = false; // from halide_malloc, not the stack (set by heap_bytes_refaulted)
    };

    const Stage &stage(StageRef s) const { return dag_.nodes[size_t(s.node)].stages[size_t(s.stage)]; }
    const StageTiling &tiling(StageRef s) const { return nest_.funcs[size_t(s.node)].stages[size_t(s.stage)]; }
    double bpp(int node) const { return double(dag_.nodes[size_t(node)].bytes_per_point()); }
    bool is_float(int node) const {
        const std::vector<Halide::Type> &types = dag_.nodes[size_t(node)].types;
        return std::any_of(types.begin(), types.end(), [](const Halide::Type &t) { return t.is_float(); });
    }
    double vector_register_bytes() const { return double(target_.natural_vector_size(Halide::UInt(8))); }

    std::map<int, Region> reads(StageRef s, const Region &loop_bounds) {
        std::map<int, Region> out;
        stage_reads(dag_, nest_, s, loop_bounds, out);
        return out;
    }
    // The row length of the buffer a region of p lies in, in points: an input's, or a Func's
    // allocation at its store site; an unscheduled Func's is assumed the region's (optimistic).
    double buffer_row_points(int p, const Region &r) {
        const Node &n = dag_.nodes[size_t(p)];
        if (n.is_input) return double(n.region_at_root[0].extent());
        if (nest_.scheduled(p) && !nest_.inlined(p))
            return double(b_.region(p, nest_.funcs[size_t(p)].store)[0].extent());
        return double(r[0].extent());
    }
    // The bytes a region of p's buffer moves through the caches: where its rows are narrower
    // than the buffer's they are runs of their own, each of W bytes spanning (W - size) / 64 + 1
    // lines on average at an offset not known (a column tile 8 floats wide moves whole lines).
    double cached_bytes(int p, const Region &r) {
        const double bytes = points(r) * bpp(p);
        if (r.empty() || r[0].extent() <= 0 || double(r[0].extent()) >= buffer_row_points(p, r)) return bytes;
        return lines(r) * (double(r[0].extent()) * bpp(p) + kCacheLineBytes - bpp(p));
    }
    // The pages a region of p's buffer spans: its rows (innermost two dimensions) a page or more
    // apart span their own, (W - size) / 4096 + 1 each on average; closer ones share; planes
    // further out are apart.
    double pages_spanned(int p, const Region &r) {
        if (r.empty() || r[0].extent() <= 0) return 1;
        const double row = double(r[0].extent()) * bpp(p);
        const double pitch = std::max(double(r[0].extent()), buffer_row_points(p, r)) * bpp(p);
        const double rows = r.size() > 1 ? double(r[1].extent()) : 1.0;
        const double planes = lines(r) / rows;
        const double per_plane =
            pitch >= kPageBytes ? rows * ((row - bpp(p)) / kPageBytes + 1) : (rows * pitch - bpp(p)) / kPageBytes + 1;
        return planes * per_plane;
    }
    double cached_bytes(const std::map<int, Region> &rs) {
        double bytes = 0;
        for (const auto &[p, r] : rs) bytes += cached_bytes(p, r);
        return bytes;
    }
    std::pair<double, double> bytes_and_lines(const std::map<int, Region> &rs) const {
        double bytes = 0, n = 0;
        for (const auto &[p, r] : rs) bytes += points(r) * bpp(p), n += lines(r);
        return {bytes, n};
    }

    std::vector<Load> loads(StageRef s) const { return stage_loads(dag_, nest_, s); }

    // The node computed at root whose loops contain `node`'s computation.
    int root_node(int node) const {
        Site cur = nest_.funcs[size_t(node)].compute;
        while (cur.kind == Site::At) node = cur.stage.node, cur = nest_.compute_site(cur.stage);
        return node;
    }
    // Whether a Func is computed inside every loop of the stage's tiling level `level` (at that
    // level, whose site is its innermost loop, or deeper).
    bool computes_inside(StageRef s, int level) const {
        return std::any_of(nest_.funcs.begin(), nest_.funcs.end(), [&](const FuncSchedule &fs) {
            return fs.compute.kind == Site::At && fs.compute.stage == s && fs.compute.level >= level;
        });
    }
    // The stage whose loops at root contain `site` (the stage itself when the Func is at root).
    StageRef root_stage(StageRef s) const {
        for (Site cur = nest_.compute_site(s); cur.kind == Site::At; cur = nest_.compute_site(cur.stage)) s = cur.stage;
        return s;
    }
    double parallel_trips(StageRef s) {
        if (!tiling(s).parallel) return 1;
        double n = 1;
        for (size_t l = 0; l < stage(s).loops.size(); l++) {
            if (!stage(s).loops[l].is_rvar) n *= double(b_.trips(s, 0, int(l)));
        }
        return n;
    }
    // The share of a producer's data evicted from the last level before a read `distance` bytes
    // after it was written or read: none within the core's share of that level, all past twice
    // that, linear between (caches are not LRU, and the other cores' shares are not walls).
    double evicted_share(double distance) const {
        const double share = caches_.shared_bytes_per_core;
        return std::clamp((distance - share) / share, 0.0, 1.0);
    }
    // What one iteration of a site writes: its allocations, and what the stage whose loops hold
    // it writes of its own Func there (the output's tile, which is no allocation of the site).
    double touched_within(const Site &site) {
        return working_set_within(site) +
               cached_bytes(site.stage.node, written_by(site.stage, b_.tile_bounds(site.stage, site.level)));
    }
    // The region of its Func that a box of a stage's loops covers: an update's left-hand side
    // over those loops (a scan's step writes one row, not the column: iir_blur's passes down
    // the rows were priced 1.9e9 page walks, 100x their run); a pure stage's pure loops'
    // dimensions, the rest whole.
    Region written_by(StageRef s, const Region &loops) const {
        const Stage &st = stage(s);
        if (!st.writes.empty()) {
            Region out;
            eval_region(st.writes, loops, out);
            return out;
        }
        Region out = dag_.nodes[size_t(s.node)].region_at_root;
        for (size_t l = 0; l < st.loops.size(); l++) {
            if (st.loops[l].dim >= 0) out[size_t(st.loops[l].dim)] = loops[l];
        }
        return out;
    }
    double working_set_within(const Site &site) const {
        double sum = 0;
        for (const Allocation &a : allocations_) {
            if (nest_.contains(site, a.store)) sum += a.bytes;
        }
        return sum;
    }
    // The header's rule for heap_bytes_refaulted, per node: glibc's arena simulated over a run
    // (glibc_heap.h). Allocations of a constant size up to kStackAllocationBytes are on the stack;
    // those sized at run time come from halide_malloc however small (LoopNestBounds::
    // allocation_size): such a block, freed, waits in the thread's cache, and one that lies above
    // large blocks keeps them from the top and from any trim (a 268-byte block per row of a
    // reduction's tile kept a held-out schedule's five 0.4-1.5 MB blocks a task, which the model
    // trimmed at 2,848 pages a run, from faulting in any). A partial state counts
    // with the allocations placed so far, as if the Funcs still to place added none: no bound
    // (a large allocation placed later raises the thresholds), but counting none until the last
    // step let the beam fill with states whose trims only that step priced (unsharp_mask,
    // harris, camera_pipe and max_filter: 1.3-2.7x slower).
    std::vector<double> heap_bytes_refaulted() {
        for (Allocation &a : allocations_) {
            a.heap =
                a.bytes > kStackAllocationBytes || small_buffer_on_heap(b_.allocation_size(a.node, a.store), a.bytes);
        }
        std::vector<HeapScope> scopes;
        heap_scope(Site::root(), scopes);
        return glibc_faults_per_run(scopes, int(dag_.nodes.size()), caches_.threads);
    }
    // The heap events of one iteration of `site`'s body, as Halide 14 lowers it: the Funcs
    // computed there, producers first (and then, inside a stage's loops, the rest of them); a
    // Func stored there is allocated before the first of these that computes it and freed after
    // the last that reads it. Returns the scope's index in `scopes`, or -1 if it touches no heap.
    int heap_scope(const Site &site, std::vector<HeapScope> &scopes) {
        struct Statement {
            int node; // a Func's production, or -1: the stage's own loops from `level` in
            int level;
        };
        std::vector<Statement> body;
        for (size_t i = dag_.nodes.size(); i-- > 0;) {
            if (nest_.scheduled(int(i)) && !nest_.inlined(int(i)) && nest_.funcs[i].compute == site)
                body.push_back({int(i), 0});
        }
        if (site.kind == Site::At) body.push_back({-1, site.level + 1});
        auto runs = [&](const Statement &st, StageRef r) {
            if (st.node < 0) return stage_within(nest_, r, Site::at(site.stage, st.level));
            for (size_t s = 0; s < dag_.nodes[size_t(st.node)].stages.size(); s++) {
                if (stage_within(nest_, r, Site::at({st.node, int(s)}, 0))) return true;
            }
            return false;
        };
        // The first and last statement of each heap block stored here, producers first.
        struct Lifetime {
            int node, first, last;
            double bytes;
        };
        std::vector<Lifetime> blocks;
        std::vector<StageRef> readers;
        for (auto a = allocations_.rbegin(); a != allocations_.rend(); ++a) {
            if (!a->heap || !(a->store == site)) continue;
            const double bytes =
                task_bytes_.empty() || task_bytes_[size_t(a->node)] < 0 ? a->bytes : task_bytes_[size_t(a->node)];
            if (bytes <= 0) continue; // not allocated in this task
            Lifetime l{a->node, -1, -1, bytes};
            readers.clear();
            reading_stages(dag_, nest_, a->node, readers);
            for (int k = 0; k < int(body.size()); k++) {
                if (l.first < 0 && runs(body[size_t(k)], {a->node, 0})) l.first = k;
                for (StageRef r : readers) {
                    if (nest_.scheduled(r.node) && runs(body[size_t(k)], r)) l.last = k;
                }
            }
            if (l.first < 0) continue;
            l.last = std::max(l.last, l.first);
            blocks.push_back(l);
        }
        const int index = int(scopes.size());
        scopes.emplace_back();
        HeapScope scope;
        auto inner = [&](StageRef s, int level) {
            if (level >= tiling(s).levels()) return;
            // A parallel root stage's outer level: its tasks, shared among the threads.
            if (level == 0 && nest_.compute_site(s).kind == Site::Root && tiling(s).parallel) {
                std::vector<HeapScope::Run> runs = task_runs(s, scopes);
                if (!runs.empty()) scope.repeat(std::move(runs), true);
                return;
            }
            const int child = heap_scope(Site::at(s, level), scopes);
            if (child >= 0) scope.repeat(child, b_.level_trips(s, level));
        };
        for (int k = 0; k < int(body.size()); k++) {
            for (const Lifetime &l : blocks) {
                if (l.first == k) scope.allocate(l.node, int64_t(l.bytes));
            }
            const Statement &st = body[size_t(k)];
            if (st.node < 0) {
                inner(site.stage, st.level);
            } else {
                for (size_t s = 0; s < dag_.nodes[size_t(st.node)].stages.size(); s++) inner({st.node, int(s)}, 0);
            }
            for (const Lifetime &l : blocks) {
                if (l.last == k) scope.free(l.node);
            }
        }
        if (scope.events.empty() && index > 0) {
            scopes.resize(size_t(index)); // nothing inside was kept either
            return -1;
        }
        scopes[size_t(index)] = std::move(scope);
        return index;
    }
    // A parallel root stage's tasks as runs of heap scopes in task order (Halide fuses the
    // stage's outer loops into one, the innermost running fastest). Halide sizes a task's buffers
    // by that task's region, which changes at the image's edges and, where a Func is read both
    // directly and transposed, with the task's place: per class of the tiles along each loop
    // (tile_classes), the other loops at their middle tile, the sizes' ratios to the middle
    // tile's, combined as independent factors (as run_totals combines regions). Empty where no
    // task touches the heap.
    std::vector<HeapScope::Run> task_runs(StageRef s, std::vector<HeapScope> &scopes) {
        const Site task = Site::at(s, 0);
        std::vector<const Allocation *> inside;
        std::vector<int> nodes;
        for (const Allocation &a : allocations_) {
            if (!a.heap || !nest_.contains(task, a.store)) continue;
            inside.push_back(&a);
            nodes.push_back(a.node);
        }
        // Tasks alike: one run of the representative task.
        auto alike = [&]() -> std::vector<HeapScope::Run> {
            const int child = heap_scope(task, scopes);
            if (child < 0) return {};
            return {{child, b_.level_trips(s, 0), 1}};
        };
        if (inside.empty()) return alike();
        const std::vector<std::vector<LoopNestBounds::TileClass>> classes = b_.tile_classes(s, 0);
        // Per loop, its classes in order, with each one's ratios to the middle tile's sizes
        // (none where every class along the loop allocates alike).
        struct Class {
            int64_t count;
            std::vector<double> ratios;
        };
        std::vector<std::vector<Class>> loops(classes.size());
        bool varies = false;
        const Region mid = b_.tile_bounds(s, 0);
        for (size_t l = 0; l < classes.size(); l++) {
            int64_t count = 0;
            bool alike = true;
            for (const LoopNestBounds::TileClass &c : classes[l]) {
                Class k{c.count, std::vector<double>(inside.size(), 1.0)};
                count += c.count;
                if (!(c.span == mid[l])) {
                    Region tile = mid;
                    tile[l] = c.span;
                    const std::vector<int64_t> points = b_.allocated_points_in_tile(s, 0, tile, nodes);
                    for (size_t i = 0; i < inside.size(); i++) {
                        k.ratios[i] = double(points[i]) * bpp(inside[i]->node) / inside[i]->bytes;
                        alike = alike && k.ratios[i] == 1;
                    }
                }
                loops[l].push_back(std::move(k));
            }
            if (alike) loops[l] = {{count, {}}};
            varies = varies || !alike;
        }
        if (!varies) return alike();
        std::map<std::vector<int64_t>, int> leaves; // a task's sizes -> its scope
        auto append = [](std::vector<HeapScope::Run> &runs, const HeapScope::Run &r) {
            if (!runs.empty() && runs.back().scope == r.scope && runs.back().tasks == r.tasks) {
                runs.back().iterations += r.iterations;
            } else {
                runs.push_back(r);
            }
        };
        // The tasks of loops 0..l (the outer ones' classes fixed, their ratios multiplied in `ratios`).
        std::function<std::vector<HeapScope::Run>(int, const std::vector<double> &)> tasks =
            [&](int l, const std::vector<double> &ratios) -> std::vector<HeapScope::Run> {
            if (l < 0) {
                std::vector<int64_t> bytes(inside.size());
                for (size_t i = 0; i < inside.size(); i++) bytes[i] = std::llround(inside[i]->bytes * ratios[i]);
                auto it = leaves.find(bytes);
                if (it == leaves.end()) {
                    task_bytes_.assign(dag_.nodes.size(), -1);
                    for (size_t i = 0; i < inside.size(); i++) task_bytes_[size_t(inside[i]->node)] = double(bytes[i]);
                    int child = heap_scope(task, scopes);
                    task_bytes_.clear();
                    if (child < 0) { // this task touches no heap
                        child = int(scopes.size());
                        scopes.emplace_back();
                    }
                    it = leaves.emplace(std::move(bytes), child).first;
                }
                return {{it->second, 1, 1}};
            }
            std::vector<HeapScope::Run> out;
            for (const Class &c : loops[size_t(l)]) {
                std::vector<double> r = ratios;
                for (size_t i = 0; i < c.ratios.size(); i++) r[i] *= c.ratios[i];
                std::vector<HeapScope::Run> in = tasks(l - 1, r);
                if (in.size() == 1) {
                    in[0].iterations *= c.count;
                    append(out, in[0]);
                } else if (c.count == 1) {
                    for (const HeapScope::Run &run : in) append(out, run);
                } else { // a row of unlike tasks, repeated
                    int64_t row_tasks = 0;
                    for (const HeapScope::Run &run : in) row_tasks += run.iterations * run.tasks;
                    HeapScope row;
                    row.repeat(std::move(in));
                    append(out, {int(scopes.size()), c.count, row_tasks});
                    scopes.push_back(std::move(row));
                }
            }
            return out;
        };
        return tasks(int(loops.size()) - 1, std::vector<double>(inside.size(), 1.0));
    }
    // Allocations inside the loops of any stage of `node`, and its own.
    double working_set_of_func(int node) {
        double sum = 0;
        for (const Allocation &a : allocations_) {
            bool inside = false;
            for (size_t s = 0; s < dag_.nodes[size_t(node)].stages.size(); s++) {
                inside = inside || nest_.contains(Site::at({node, int(s)}, 0), a.store);
            }
            if (inside) sum += a.bytes;
        }
        const FuncSchedule &fs = nest_.funcs[size_t(node)];
        if (!dag_.nodes[size_t(node)].is_output) sum += points(b_.region(node, fs.store)) * bpp(node);
        return sum;
    }
    double working_set_at(const Site &site, int node) {
        return site.kind == Site::At ? working_set_within(site) : working_set_of_func(node);
    }
    // How an inlined Func is evaluated: the times in all (its readers' calls per point times their
    // points, or, a reader itself inlined, its evaluations), and the parallel tasks around the
    // reader that evaluates it most. One walk up the inlined chain for both.
    struct InlinedUse {
        double evaluations = 0, tasks = 1;
    };
    InlinedUse inlined_use(int node) {
        InlinedUse use;
        double most = -1;
        for (int ei : dag_.nodes[size_t(node)].outgoing_edges) {
            const Edge &e = dag_.edges[size_t(ei)];
            const bool inlined = nest_.inlined(e.consumer_node);
            const InlinedUse reader = inlined ? inlined_use(e.consumer_node) : InlinedUse{};
            const double n =
                double(e.calls) *
                (inlined ? reader.evaluations : points_total_[size_t(e.consumer_node)][size_t(e.consumer_stage)]);
            use.evaluations += n;
            if (n <= most) continue;
            most = n;
            use.tasks = inlined ? reader.tasks : parallel_trips(root_stage({e.consumer_node, e.consumer_stage}));
        }
        return use;
    }
    // The library calls per point of `st` by the loops they depend on: its own, and those of the
    // Funcs inlined into it (through inlined chains), which depend on the loops of `st` that their
    // call sites' coordinates move with (an unknown slope counts as moving).
    void library_calls_in(const Stage &st, std::vector<DependentCalls> &calls) const {
        calls.insert(calls.end(), st.library_calls.begin(), st.library_calls.end());
        for (int ei : st.incoming_edges) {
            const Edge &e = dag_.edges[size_t(ei)];
            if (!nest_.inlined(e.producer)) continue;
            const Stage &p = dag_.nodes[size_t(e.producer)].stages[0]; // an inlined Func has no updates
            std::vector<DependentCalls> inner;
            library_calls_in(p, inner);
            for (const DependentCalls &g : inner) {
                uint64_t loops = 0;
                for (const Jacobian &j : e.jacobians) {
                    for (size_t l = 0; l < p.loops.size(); l++) {
                        if (!(g.loops >> l & 1)) continue;
                        if (size_t(p.loops[l].dim) >= j.entries.size()) { // no slopes: all loops
                            loops = ~uint64_t(0);
                            continue;
                        }
                        const std::vector<JacobianEntry> &slopes = j.entries[size_t(p.loops[l].dim)];
                        for (size_t c = 0; c < slopes.size(); c++) {
                            if (!slopes[c] || slopes[c]->num != 0) loops |= uint64_t(1) << c;
                        }
                    }
                }
                calls.push_back({loops, double(e.calls) * g.per_point});
            }
        }
    }
    // How often an operation that depends on `loops` runs, of `lanes` computed in all.
    double evaluations(StageRef s, uint64_t loops, double lanes);
    std::pair<double, double> per_vector_footprint(StageRef s, const std::vector<Load> &stage_loads);
    void featurize(StageRef s, ScheduleFeatures &f);
    void load_features(StageRef s, const std::vector<Load> &stage_loads, ScheduleFeatures &f);
    struct PastCapacity {
        double bytes = 0, pages = 0; // bytes_read_past_cache, tlb_pages_rewalked
    };
    PastCapacity past_capacity(StageRef s, size_t num_loads, const ScheduleFeatures &f);
    double share_read_before(StageRef s, int producer);
    double accumulator_bytes_spilled(StageRef s, const std::vector<Load> &stage_loads, const ScheduleFeatures &f);
    bool accumulators_in_registers(StageRef s, const Region &block, double accumulators, int level,
                                   const std::vector<Load> &stage_loads, const ScheduleFeatures &f);
    // The point level's unrolled loops (pure, of more than one trip; none where the stage does
    // not unroll) and the vectors one unrolled block computes.
    struct UnrolledBlock {
        std::vector<int> loops;
        double vectors = 1;
    };
    UnrolledBlock unrolled_block(StageRef s) {
        const Stage &st = stage(s);
        const int last = tiling(s).levels() - 1;
        UnrolledBlock block;
        if (!b_.unrolls(s)) return block;
        for (size_t l = 0; l < st.loops.size(); l++) {
            const int64_t trips = b_.trips(s, last, int(l));
            if (st.loops[l].is_rvar || trips == 1) continue;
            block.loops.push_back(int(l));
            block.vectors *= double(trips);
        }
        return block;
    }
    // A load's copies in an unrolled block: one per iteration of the unrolled loops it moves with
    // (the others share it).
    double copies(StageRef s, const Load &load, const UnrolledBlock &block) {
        const int last = tiling(s).levels() - 1;
        double n = 1;
        for (int l : block.loops) {
            if (moves_with(load.jacobian, size_t(l))) n *= double(b_.trips(s, last, l));
        }
        return n;
    }

    // The stage's own loops from one vector outward, as apply() nests them: level by level from
    // the innermost, within a level the reduction loops, then the pure loops in dimension order.
    // For each loop of more than one trip, visit(loop, the block of loops inside it, the block
    // with it, its level) until visit returns false; with `stop_at_level0_pure`, before level 0's
    // pure loops.
    template<typename Visit>
    void walk_own_loops(StageRef s, bool stop_at_level0_pure, Visit &&visit) {
        walk_loops(s, tiling(s).levels() - 1, 0, stop_at_level0_pure, visit);
    }
    // The same walk over levels `innermost` to `outermost` only, from one iteration of level
    // `innermost`'s loops (its innermost loop's body).
    template<typename Visit>
    void walk_loops(StageRef s, int innermost, int outermost, bool stop_at_level0_pure, Visit &&visit) {
        const Stage &st = stage(s);
        Region block = b_.tile_bounds(s, innermost);
        for (int k = innermost; k >= outermost; k--) {
            const Region outer = k > 0 ? b_.tile_bounds(s, k - 1) : b_.production_bounds(s);
            for (const bool rvars : {true, false}) {
                if (k == 0 && !rvars && stop_at_level0_pure) return;
                for (size_t l = 0; l < st.loops.size(); l++) {
                    if (st.loops[l].is_rvar != rvars) continue;
                    if (block[l].extent() == outer[l].extent()) { // one trip
                        block[l] = outer[l];
                        continue;
                    }
                    const Region inside = block;
                    block[l] = outer[l];
                    if (!visit(l, inside, block, k)) return;
                }
            }
        }
    }

    const FunctionDAG &dag_;
    const LoopNest &nest_;
    const Halide::Target &target_;
    const CacheSizes caches_;
    LoopNestBounds b_;
    std::vector<Allocation> allocations_; // every non-output Func with storage
    std::vector<double> task_bytes_; // per node while task_runs lays out one task: its bytes there (-1: as allocated)
    std::vector<std::vector<double>> points_total_; // per node and stage, once featurized
    LoopNestBounds::RunTotals totals_;              // over every tile of every site
    std::vector<DependentCalls> library_calls_;     // scratch: the stage's, by the loops they depend on
};

// The bytes and lines one vector step reads from its producers. Per producer, the box that holds
// what it reads (reads()) over-counts where a step reads it at places far apart: a Func
// multiplied by itself transposed reads its row r and its column y, and the box spans every row
// between (157 rows of 16 floats where 2 are read; num_vectors multiplies the error), and a
// mirrored index's box is its whole range (274 rows, where a vector's 16 lanes load 16 points).
// Each call's own footprint, from its slope along the vector (at most a point per lane where the
// slope is unknown), counts those right and overlapping calls (a stencil's taps) too often, so
// a producer counts the smaller of the two.
std::pair<double, double> Featurizer::per_vector_footprint(StageRef s, const std::vector<Load> &stage_loads) {
    const StageTiling &t = tiling(s);
    const std::map<int, Region> boxes = reads(s, b_.tile_bounds(s, t.levels() - 1));
    // Per producer, in the boxes' order: its calls' bytes and lines, summed; +inf where a call's
    // slopes do not match its dimensions (the box counts).
    std::vector<std::pair<double, double>> by_call(boxes.size());
    for (const Load &l : stage_loads) {
        const auto box = boxes.find(l.producer);
        if (box == boxes.end()) continue; // the stage's own Func: not a producer
        const Region &b = box->second;
        auto &[call_bytes, call_lines] = by_call[size_t(std::distance(boxes.begin(), box))];
        if (l.jacobian.entries.size() != b.size()) {
            call_bytes = call_lines = std::numeric_limits<double>::infinity();
            continue;
        }
        // Extents of one step's reads along each dimension: a known slope spans it; an unknown
        // one (a mirrored index, data) spans the box, but its lanes load one point each.
        double pts = 1, rows = 1;
        bool gathered = false;
        for (size_t d = 0; d < b.size(); d++) {
            double extent = 1;
            if (t.vector_loop >= 0 && t.vector_width > 1) {
                const JacobianEntry &slope = l.jacobian.entries[d][size_t(t.vector_loop)];
                extent =
                    slope ? std::floor(std::abs(slope->value()) * (t.vector_width - 1)) + 1 : double(b[d].extent());
                gathered |= !slope;
            }
            extent = std::min(extent, double(b[d].extent()));
            pts *= extent;
            if (d > 0) rows *= extent;
        }
        if (gathered) pts = std::min(pts, double(t.vector_width)), rows = std::min(rows, double(t.vector_width));
        call_bytes += pts * bpp(l.producer);
        call_lines += rows;
    }
    double total_bytes = 0, total_lines = 0;
    auto calls = by_call.begin();
    for (const auto &[p, r] : boxes) {
        // A producer reached by no load of loads() (none yet: every call is one) keeps its box.
        const auto [call_bytes, call_lines] = *calls++;
        total_bytes += call_bytes > 0 ? std::min(points(r) * bpp(p), call_bytes) : points(r) * bpp(p);
        total_lines += call_lines > 0 ? std::min(lines(r), call_lines) : lines(r);
    }
    return {total_bytes, total_lines};
}

void Featurizer::featurize(StageRef s, ScheduleFeatures &f) {
    const Node &n = dag_.nodes[size_t(s.node)];
    const Stage &st = stage(s);
    const FuncSchedule &fs = nest_.funcs[size_t(s.node)];
    f.points_computed_minimum = points(st.loop_bounds_at_root);
    f.bytes_at_root = points(n.region_at_root) * bpp(s.node);
    f.innermost_bytes_at_root = innermost(n.region_at_root) * bpp(s.node);
    f.native_vector_size = native_vector_width(dag_, s, target_);
    if (fs.compute.kind == Site::Inline) {
        // Its evaluations run in its readers' loops, on their cores: the compute terms divide by
        // the parallelism of the reader that calls it most (its library calls count as its readers').
        const InlinedUse use = inlined_use(s.node);
        f.inlined_calls = use.evaluations;
        f.inner_parallelism = 1;
        f.outer_parallelism = use.tasks;
        return;
    }
    const StageTiling &t = tiling(s);

    // Where and how often.
    // Summed over tile classes too: a host's trip counts vary with its own site's tiles.
    f.num_productions = totals_.productions[size_t(s.node)];
    // Halide skips a production no consumer reads in that iteration (a concat's input for the
    // other input's channels), but still allocates it.
    f.num_realizations =
        fs.store == fs.compute ? totals_.realizations[size_t(s.node)] : double(b_.iterations(fs.store));
    // Summed over every tile of the site (regions vary: tails, clamped edges); per production
    // and realization on average. Storage is never hoisted above the compute site yet
    // (storage_error), so no window slides.
    f.points_computed_total = totals_.points[size_t(s.node)][size_t(s.stage)];
    auto mean = [&](double count) { return count > 0 ? f.points_computed_total / count : 0.0; };
    f.points_computed_per_production = mean(f.num_productions); // never produced: 0
    f.points_computed_per_realization = mean(f.num_realizations);
    const Region stored = b_.region(s.node, fs.store);

    // The innermost tile.
    const Region tile = b_.tile_bounds(s, std::max(0, t.levels() - 2));
    const Region &inner = t.tiles.empty() ? b_.production_bounds(s) : tile;
    f.innermost_loop_extent = points(inner);
    f.innermost_pure_loop_extent = 1;
    for (size_t l = 0; l < st.loops.size(); l++) {
        if (!st.loops[l].is_rvar) f.innermost_pure_loop_extent *= double(inner[l].extent());
    }
    f.unrolled_loop_extent = b_.unrolls(s) ? f.innermost_pure_loop_extent : 1;

    // Parallelism and the task.
    const StageRef top = root_stage(s);
    f.inner_parallelism = fs.compute.kind == Site::Root ? parallel_trips(s) : 1;
    f.outer_parallelism = fs.compute.kind == Site::Root ? 1 : parallel_trips(top);
    Region task_loops, task_region;
    Site task_site = fs.compute;
    if (f.inner_parallelism > 1) {
        // A task is one iteration of the fused parallel loop: a tile, with all reduction loops.
        task_site = Site::at(s, 0);
        task_loops = b_.tile_bounds(s, 0);
        const Region &whole = b_.production_bounds(s);
        for (size_t l = 0; l < st.loops.size(); l++) {
            if (st.loops[l].is_rvar) task_loops[l] = whole[l];
        }
        task_region = written_by(s, task_loops);
    } else {
        if (f.outer_parallelism > 1) task_site = Site::at(top, 0);
        task_region = b_.region(s.node, task_site);
        task_loops = b_.loop_bounds(s, task_region);
    }

    // Footprints.
    const Region produced = b_.region(s.node, fs.compute);
    f.bytes_at_realization = totals_.realized_points[size_t(s.node)] * bpp(s.node); // the largest, as allocated
    // The output's buffer is the caller's; the size of one over 16 KiB does not matter.
    bool on_heap = !n.is_output && f.bytes_at_realization > kStackAllocationBytes;
    if (!n.is_output && !on_heap) {
        // A size that changes from tile to tile (a region clamped at an edge) is computed at run time.
        const bool varies = totals_.smallest_realized_points[size_t(s.node)] < totals_.realized_points[size_t(s.node)];
        const LoopNestBounds::Size size =
            std::max(b_.allocation_size(s.node, fs.store),
                     varies ? LoopNestBounds::Size::Bounded : LoopNestBounds::Size::Constant);
        on_heap = small_buffer_on_heap(size, f.bytes_at_realization);
    }
    f.heap_realizations = on_heap ? f.num_realizations : 0;
    f.innermost_bytes_at_realization = innermost(allocated_region(n, fs.store, stored)) * bpp(s.node);
    f.bytes_at_production = points(produced) * bpp(s.node);
    f.innermost_bytes_at_production = innermost(produced) * bpp(s.node);
    f.bytes_at_task = points(task_region) * bpp(s.node);
    f.innermost_bytes_at_task = innermost(task_region) * bpp(s.node);

    const std::map<int, Region> per_realization = reads(s, b_.loop_bounds(s, stored));
    std::tie(f.unique_bytes_read_per_realization, f.unique_lines_read_per_realization) =
        bytes_and_lines(per_realization);
    const std::map<int, Region> per_tile = reads(s, inner);
    const std::map<int, Region> per_task = reads(s, task_loops);
    const double tasks = f.inner_parallelism > 1 ? f.inner_parallelism : double(b_.iterations(task_site));
    for (const auto &[p, r] : per_realization) {
        const FuncSchedule &ps = nest_.funcs[size_t(p)];
        double allocation = 0, reuse_distance = 0;
        if (dag_.nodes[size_t(p)].is_input) {
            allocation = reuse_distance = points(dag_.nodes[size_t(p)].region_at_root) * bpp(p);
        } else if (ps.compute.kind == Site::Unscheduled) {
            allocation = points(per_tile.at(p)) * bpp(p); // optimistic
        } else {
            allocation = points(b_.region(p, ps.store)) * bpp(p);
            reuse_distance = ps.store.kind == Site::At ? touched_within(ps.store) : allocation;
        }
        f.allocation_bytes_read_per_realization += allocation;
        // Consecutive realizations in a task share much of what they read (a sliding window):
        // a byte comes from memory once per realization at most and once per task at least.
        const double evicted = evicted_share(reuse_distance);
        if (evicted > 0) {
            f.bytes_read_from_memory +=
                evicted * (1 - share_read_before(s, p)) *
                std::min(f.num_realizations * cached_bytes(p, r), tasks * cached_bytes(p, per_task.at(p)));
        }
    }
    std::tie(f.unique_bytes_read_per_task, f.unique_lines_read_per_task) = bytes_and_lines(per_task);

    // Vectors and scalars: with tails shifted inwards every vector is whole. Halide 14 makes a
    // guarded tail the vector's predicate, and a guarded loop split more than once keeps a whole
    // tile's trips in its tail tile, so each vector slot past the bound still runs, all lanes
    // off. A predicated vector, partial or empty, runs at about the price of its lanes as scalar
    // code (an accumulator updated under a mask goes through memory at every step: 5 ns of a
    // core per step, measured on a 322-wide stencil update tiled by 176/208/256/320, 0.54 to
    // 0.98 ms against 0.50 unsplit), so it counts as vector_width scalars.
    f.vector_size = t.vector_width;
    if (t.vector_width == 1) {
        f.num_scalars = f.points_computed_total;
    } else if (!guards_tails(dag_, nest_, s)) {
        f.num_vectors = f.points_computed_total / t.vector_width;
    } else {
        const double extent = double(b_.production_bounds(s)[size_t(t.vector_loop)].extent());
        const LoopNestBounds::GuardedVectors v = b_.guarded_vectors(s);
        const double rows = extent > 0 ? f.points_computed_total / extent : 0;
        f.num_vectors = rows * double(v.whole);
        f.num_scalars = rows * double(v.partial + v.empty) * t.vector_width;
    }
    // A library call runs on every lane its vector computes: a guarded tail's predicated vector
    // calls it for the lanes past the bound too (Halide 14 predicates the loads and stores only).
    const double lanes = f.num_vectors * t.vector_width + f.num_scalars;
    library_calls_.clear();
    library_calls_in(st, library_calls_);
    f.library_calls = 0;
    for (const DependentCalls &g : library_calls_) f.library_calls += g.per_point * evaluations(s, g.loops, lanes);
    const std::vector<Load> stage_loads = loads(s);
    std::tie(f.unique_bytes_read_per_vector, f.unique_lines_read_per_vector) = per_vector_footprint(s, stage_loads);
    load_features(s, stage_loads, f);

    // Working sets.
    f.working_set = working_set_within(Site::at(s, 0));
    f.working_set_at_task = working_set_at(task_site, s.node);
    f.working_set_at_production = working_set_at(fs.compute, s.node);
    f.working_set_at_realization = working_set_at(fs.store, s.node);
    f.working_set_at_root = working_set_within(Site::root());
    const PastCapacity past = past_capacity(s, stage_loads.size(), f);
    f.bytes_read_past_cache = past.bytes;
    f.tlb_pages_rewalked = past.pages;
    f.accumulator_bytes_spilled = accumulator_bytes_spilled(s, stage_loads, f);
}

// The header's rule: once per iteration of the loops an operation depends on and of those that
// enclose the innermost of them (Halide hoists it out of the others); along the vector, once per
// vector where it does not depend on the vectorized loop. An unrolled loop is copies of its body:
// the copies repeat an operation that depends on it, and share one that does not.
double Featurizer::evaluations(StageRef s, uint64_t loops, double lanes) {
    const StageTiling &t = tiling(s);
    const Stage &st = stage(s);
    double n = lanes;
    if (t.vector_loop < 0 || !(loops >> t.vector_loop & 1)) n /= t.vector_width;
    walk_own_loops(s, false, [&](size_t l, const Region &inside, const Region &around, int level) {
        if (loops >> l & 1) return t.unroll && level == t.levels() - 1 && !st.loops[l].is_rvar;
        n *= points(inside) / points(around);
        return true;
    });
    return n;
}

// The header's rule. apply() nests, within each tiling level from the innermost, the reduction
// loops innermost and then the pure loops: the block a reduction loop sweeps is the tile inside
// it, as far as the first reduction loop with more than one iteration.
double Featurizer::accumulator_bytes_spilled(StageRef s, const std::vector<Load> &stage_loads,
                                             const ScheduleFeatures &f) {
    const Stage &st = stage(s);
    if (st.self_calls.empty()) return 0;
    double spilled = 0;
    walk_own_loops(s, false, [&](size_t l, const Region &inside, const Region &around, int level) {
        if (!st.loops[l].is_rvar) return true;
        const double round_trips = 2 * f.points_computed_total * bpp(s.node);
        if (points(inside) * bpp(s.node) > kL1Bytes) {
            spilled = round_trips;
            return false;
        }
        // Accumulators are points the loop updates at every step: no call to the Func itself
        // moves with it (a scan's does: it writes a new point each step, read from the last).
        const bool accumulates = std::none_of(st.self_calls.begin(), st.self_calls.end(),
                                              [&](const Jacobian &j) { return moves_with(j, l); });
        if (!accumulates) return false;
        if (computes_inside(s, level)) { // a production in every step: the accumulators go to memory
            spilled = kL1RoundTripWeight * round_trips;
            return false;
        }
        const bool long_chain = around[l].extent() >= kMinExposedChain * inside[l].extent();
        if (!long_chain) return false;
        const double accumulators = std::ceil(points(inside) * bpp(s.node) / vector_register_bytes());
        if (!accumulators_in_registers(s, inside, accumulators, level, stage_loads, f)) {
            spilled = kL1RoundTripWeight * round_trips;
        } else if (is_float(s.node)) {
            spilled = kL1RoundTripWeight * round_trips * std::max(0.0, 1 - accumulators / kFloatAccumulatorChains);
        }
        return false;
    });
    return spilled;
}

// The header's rule for a block of accumulators that fits in L1: registers hold it only where it
// is the point tile of an unrolled stage and the Func's whole realization (constant indices into
// a small stack allocation, which LLVM turns into registers), and where the target has vector
// registers for the accumulators and the operands they reuse. A single vector or scalar (the
// reduction innermost) stays in a register.
bool Featurizer::accumulators_in_registers(StageRef s, const Region &block, double accumulators, int level,
                                           const std::vector<Load> &stage_loads, const ScheduleFeatures &f) {
    const StageTiling &t = tiling(s);
    const double points_in_block = points(block);
    if (points_in_block <= double(t.vector_width)) return true;
    if (level != t.levels() - 2 || !b_.unrolls(s)) return false; // the block is not an unrolled point tile
    if (points_in_block * bpp(s.node) < f.bytes_at_realization) return false;
    // Registers: the accumulators, the operands reused across the block (each load's copies)
    // but one group that is streamed through a scratch register, and one more for addresses
    // and broadcasts.
    const UnrolledBlock unrolled = unrolled_block(s);
    double operands = 0, largest = 0;
    for (const Load &load : stage_loads) {
        if (load.producer == s.node) continue; // the accumulator itself
        const double n = copies(s, load, unrolled);
        if (n >= unrolled.vectors) continue; // used once: streamed
        operands += n;
        largest = std::max(largest, n);
    }
    return accumulators + operands - largest + 2 <= vector_registers(target_);
}

// The header's rules for bytes_read_past_cache and tlb_pages_rewalked: blocks of loops from the
// innermost outward, each the union of its iterations' reads (and, for pages, its own writes);
// the first that passes the capacity is touched afresh per iteration. Both measures only grow
// from a block to the next, so that block is found by bisection.
Featurizer::PastCapacity Featurizer::past_capacity(StageRef s, size_t num_loads, const ScheduleFeatures &f) {
    const StageTiling &t = tiling(s);
    const FuncSchedule &fs = nest_.funcs[size_t(s.node)];
    // A block is a box of the stage's own loops, or a box of a consumer's loops around the
    // site, whose reads of this Func give the box of its own loops (found only when bisection
    // needs its bytes).
    struct Block {
        Region loop_bounds;
        double iterations; // over the whole run
        StageRef consumer{-1, 0};
    };
    std::vector<Block> blocks;
    auto add = [&](const Region &loop_bounds) {
        blocks.push_back({loop_bounds, f.points_computed_total / std::max(points(loop_bounds), 1.0)});
    };
    add(b_.tile_bounds(s, t.levels() - 1)); // one vector
    // A parallel root stage's pure loops of level 0 are its tasks, which run on other cores: the
    // walk ends inside them.
    const bool tasks_at_level0 = fs.compute.kind == Site::Root && f.inner_parallelism > 1;
    walk_own_loops(s, tasks_at_level0, [&](size_t, const Region &, const Region &around, int) {
        add(around);
        return true;
    });
    // The production is one iteration of the compute site; further out, the consumers' loops,
    // up to the task when a parallel loop encloses the site, else to the whole run. Within the
    // level of a site whose stage reads this Func (through inlined Funcs), loop by loop: a Func
    // computed per step of its consumer's innermost loops is re-read once per iteration of the
    // first of those loops whose steps together read more than the cache holds (a row of
    // output vectors, each reading the Func at 49 places far apart), not once per task.
    const Site end = f.outer_parallelism > 1 ? Site::at(root_stage(s), 0) : Site::root();
    for (Site site = fs.compute; site.kind == Site::At && site != end;) {
        const StageRef c = site.stage;
        const Region site_box = b_.tile_bounds(c, site.level);
        if (reads(c, site_box).count(s.node)) {
            const double per_site = double(b_.iterations(site)) * points(site_box);
            const bool tasks = site.level == 0 && nest_.compute_site(c).kind == Site::Root && tiling(c).parallel;
            walk_loops(c, site.level, site.level, tasks, [&](size_t, const Region &, const Region &around, int) {
                blocks.push_back({around, per_site / std::max(points(around), 1.0), c});
                return true;
            });
        }
        site = site.level > 0 ? Site::at(c, site.level - 1) : nest_.compute_site(c);
        if (site.kind == Site::At) {
            blocks.push_back({b_.loop_bounds(s, b_.region(s.node, site)), double(b_.iterations(site))});
        } else {
            blocks.push_back({b_.loop_bounds(s, dag_.nodes[size_t(s.node)].region_at_root), 1.0});
        }
    }
    // A block cannot bring in more than a cache line per load it makes: a gather's reads span its
    // whole table from the first vector on, but each load touches one line of it.
    const double bytes_per_point = double(num_loads) * kCacheLineBytes;
    auto resolve = [&](size_t i) -> const Region & {
        Block &b = blocks[i];
        if (b.consumer.node >= 0) {
            b.loop_bounds = b_.loop_bounds(s, reads(b.consumer, b.loop_bounds).at(s.node));
            b.consumer.node = -1;
        }
        return b.loop_bounds;
    };
    const size_t n = blocks.size();
    std::vector<double> bytes_of(n, -1), pages_of(n, -1); // computed once each, when needed
    auto bytes = [&](size_t i) {
        if (bytes_of[i] < 0) {
            const Region &loops = resolve(i);
            bytes_of[i] = std::min(cached_bytes(reads(s, loops)), points(loops) * bytes_per_point);
        }
        return bytes_of[i];
    };
    auto pages = [&](size_t i) {
        if (pages_of[i] < 0) {
            const Region &loops = resolve(i);
            pages_of[i] = pages_spanned(s.node, written_by(s, loops));
            for (const auto &[p, r] : reads(s, loops)) pages_of[i] += pages_spanned(p, r);
        }
        return pages_of[i];
    };
    // The first of blocks [0, end) whose measure passes `capacity`, or `end`.
    auto first_past = [](size_t end, auto &&measure, double capacity) {
        size_t lo = 0, hi = end; // blocks below lo fit; block hi passes, or hi == end
        while (lo < hi) {
            const size_t mid = (lo + hi) / 2;
            if (measure(mid) > capacity) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return hi;
    };
    PastCapacity out;
    const size_t last = n - 1; // read whole once per iteration if nothing inside passes
    const size_t spill = bytes(last) <= caches_.core_bytes ? last : first_past(last, bytes, caches_.core_bytes);
    out.bytes = blocks[spill].iterations * bytes(spill);
    // Walking each page once per iteration of the last block is the first touch, no re-walk.
    const size_t walked = first_past(last, pages, kTlbPages);
    if (walked < last) {
        out.pages = std::max(0.0, blocks[walked].iterations * pages(walked) - blocks[last].iterations * pages(last));
    }
    return out;
}

// The header's rule: a Func computed in the stage's loops runs, in each iteration of its site
// there, before the stage's body; what it reads of the producer in that iteration is still in the
// last-level cache when the stage reads it as far as those reads and what the iteration writes
// (touched_within) fit (evicted_share).
double Featurizer::share_read_before(StageRef s, int producer) {
    double best = 0;
    std::map<int, Region> mine; // the stage's reads of `producer` per iteration, by level
    for (size_t q = 0; q < nest_.funcs.size(); q++) {
        // The site in the stage's loops where q runs: its own, or that of the Func it runs in.
        Site site = nest_.funcs[q].compute;
        while (site.kind == Site::At && site.stage.node != s.node) site = nest_.compute_site(site.stage);
        if (int(q) == s.node || site.kind != Site::At || !(site.stage == s)) continue;
        if (!mine.count(site.level)) mine[site.level] = reads(s, b_.tile_bounds(s, site.level)).at(producer);
        const Region &wanted = mine.at(site.level);
        const double held = touched_within(site);
        const Region realized = b_.region(int(q), site);
        for (size_t k = 0; k < dag_.nodes[q].stages.size(); k++) {
            const StageRef qs{int(q), int(k)};
            const std::map<int, Region> theirs = reads(qs, b_.loop_bounds(qs, realized));
            const auto read = theirs.find(producer);
            const double kept =
                read == theirs.end() ? 0 : 1 - evicted_share(held + cached_bytes(producer, read->second));
            if (kept == 0) continue;
            Region both = wanted;
            for (size_t d = 0; d < both.size(); d++) {
                both[d].min = std::max(both[d].min, read->second[d].min);
                both[d].max = std::min(both[d].max, read->second[d].max);
            }
            const bool empty = std::any_of(both.begin(), both.end(), [](const Span &x) { return x.extent() <= 0; });
            if (!empty) best = std::max(best, kept * points(both) / points(wanted));
        }
    }
    return best;
}

// Loads per vector and per scalar. A load whose coordinates do not move along the vector loop
// is one scalar load (broadcast); one that moves along the producer's innermost dimension by s
// <= 4 per lane is s dense vector loads; anything else (larger strides, other dimensions,
// unknown Jacobians) gathers one scalar per lane. Unrolled loops share the loads that do not
// move with them.
void Featurizer::load_features(StageRef s, const std::vector<Load> &stage_loads, ScheduleFeatures &f) {
    const StageTiling &t = tiling(s);
    const UnrolledBlock block = unrolled_block(s);
    for (const Load &load : stage_loads) {
        const auto &J = load.jacobian.entries;
        const double share = copies(s, load, block) / block.vectors;
        f.scalar_loads_per_scalar += share;
        if (t.vector_width == 1) continue;
        const int v = t.vector_loop;
        if (!nest_.scheduled(load.producer) && !dag_.nodes[size_t(load.producer)].is_input) {
            f.vector_loads_per_vector += share; // unscheduled: assumed dense
            continue;
        }
        if (!moves_with(load.jacobian, size_t(v))) {
            f.scalar_loads_per_vector += share;
            continue;
        }
        bool dense = J[0][size_t(v)].has_value();
        for (size_t d = 1; d < J.size(); d++) dense = dense && is_zero(J[d][size_t(v)]);
        const double stride = dense ? std::abs(J[0][size_t(v)]->value()) : 0;
        if (dense && stride <= 4) {
            f.vector_loads_per_vector += share * std::max(1.0, std::ceil(stride));
        } else {
            f.scalar_loads_per_vector += share * t.vector_width;
        }
    }
}

} // namespace

CacheSizes machine_cache_sizes(double l2_bytes, double l3_bytes, double cores_sharing_l3) {
    CacheSizes sizes;
    if (l2_bytes > 0) sizes.core_bytes = l2_bytes;
    if (l3_bytes > 0) sizes.shared_bytes_per_core = l3_bytes / std::max(1.0, cores_sharing_l3);
    return sizes;
}

std::vector<StageFeatures> compute_schedule_features(const FunctionDAG &dag, const LoopNest &nest,
                                                     const Halide::Target &target, const CacheSizes &caches) {
    return Featurizer(dag, nest, target, caches).run();
}

std::vector<StageFeatures> update_schedule_features(const FunctionDAG &dag, const LoopNest &nest,
                                                    const Halide::Target &target,
                                                    const std::vector<StageFeatures> &parent_features, int changed_node,
                                                    int64_t *reused, const CacheSizes &caches) {
    Featurizer f(dag, nest, target, caches);
    if (parent_features.empty()) return f.run(); // the empty schedule has none to reuse
    const std::vector<bool> affected = f.affected_by(changed_node);
    return f.run(&parent_features, &affected, reused);
}

} // namespace schedforge::featurize
