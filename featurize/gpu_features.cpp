#include "featurize/gpu_features.h"

#include "featurize/cost_terms.h"
#include "featurize/function_dag.h"
#include "featurize/loop_nest.h"
#include "featurize/pipeline_features.h"
#include "featurize/stage_loads.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

namespace schedforge::featurize {

SCHEDFORGE_DEFINE_FEATURE_LIST(GpuFeatures, SCHEDFORGE_GPU_FEATURES, kNumGpuFeatures)

namespace {

// name, SMs, threads/SM, blocks/SM, shared bytes/SM, FP32 lanes/SM, clock, DRAM, L2 bandwidth, L2
// bytes, host link: NVIDIA's data sheets; bandwidths sustained (about 90% of peak).
const std::vector<GpuDevice> &devices() {
    auto device = [](const char *name, int sms, int threads, int blocks, int64_t shared_kib, int lanes, double ghz,
                     double dram_gbs, double l2_gbs, double l2_mib, double link_gbs) {
        GpuDevice d;
        d.name = name;
        d.sms = sms;
        d.max_threads_per_sm = threads;
        d.max_blocks_per_sm = blocks;
        d.shared_bytes_per_sm = shared_kib * 1024;
        d.fp32_lanes_per_sm = lanes;
        d.clock_hz = ghz * 1e9;
        d.dram_bytes_per_second = dram_gbs * 1e9;
        d.l2_bytes_per_second = l2_gbs * 1e9;
        d.l2_bytes = l2_mib * 1024 * 1024;
        d.host_link_bytes_per_second = link_gbs * 1e9;
        return d;
    };
    static const std::vector<GpuDevice> all = {
        device("v100", 80, 2048, 32, 96, 64, 1.38, 800, 2200, 6, 12),
        device("t4", 40, 1024, 16, 64, 64, 1.25, 280, 1000, 4, 12),
        device("a100", 108, 2048, 32, 164, 64, 1.41, 1400, 4000, 40, 24),
        device("rtx3090", 82, 1536, 16, 100, 128, 1.70, 840, 2000, 6, 24),
        device("h100", 132, 2048, 32, 228, 128, 1.75, 3000, 7000, 50, 48),
        device("h200", 132, 2048, 32, 228, 128, 1.75, 4300, 7000, 50, 48),
    };
    return all;
}

std::string lower(std::string s) {
    for (char &c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

double points_of(const Region &r) { return double(region_points(r)); }

} // namespace

const GpuDevice &gpu_device_named(const std::string &name) {
    for (const GpuDevice &d : devices()) {
        if (d.name == lower(name)) return d;
    }
    std::string known;
    for (const std::string &n : gpu_device_names()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown GPU device '" + name + "' (known: " + known + ")");
}

std::vector<std::string> gpu_device_names() {
    std::vector<std::string> out;
    for (const GpuDevice &d : devices()) out.push_back(d.name);
    return out;
}

std::string gpu_device_matching(const std::string &cuda_name) {
    const std::string n = lower(cuda_name);
    // As nvidia-smi names them: "NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 3090", "Tesla T4".
    for (const char *key : {"h200", "h100", "a100", "v100", "rtx 3090", "t4"}) {
        if (n.find(key) == std::string::npos) continue;
        std::string name = key;
        name.erase(std::remove(name.begin(), name.end(), ' '), name.end());
        return name;
    }
    return "";
}

const GpuDevice &gpu_device_for(const Halide::Target &target) {
    using T = Halide::Target;
    if (target.has_feature(T::CUDACapability86)) return gpu_device_named("h100");
    if (target.has_feature(T::CUDACapability80)) return gpu_device_named("a100");
    if (target.has_feature(T::CUDACapability75)) return gpu_device_named("t4");
    if (target.has_feature(T::CUDACapability70)) return gpu_device_named("v100");
    return gpu_device_named("a100");
}

namespace {

enum class Memory { Global, Shared, Register };

class GpuFeaturizer {
public:
    GpuFeaturizer(const FunctionDAG &dag, const LoopNest &nest, const StageOps &ops)
        : dag_(dag), nest_(nest), ops_(ops), b_(dag, nest) {}

    // Every stage's features; with `parent`, only the stages a decision about `changed` nodes can
    // affect are computed (their own, those that read them, and the kernels all of those run in),
    // the others copied.
    std::vector<GpuStageFeatures> run(const std::vector<GpuStageFeatures> *parent, const std::vector<int> &changed) {
        std::vector<GpuStageFeatures> out;
        std::vector<std::vector<int>> row(dag_.nodes.size());
        for (size_t n = 0; n < dag_.nodes.size(); n++) {
            for (size_t s = 0; s < dag_.nodes[n].stages.size(); s++) {
                row[n].push_back(int(out.size()));
                out.push_back(parent ? (*parent)[out.size()] : GpuStageFeatures{int(n), int(s), false, -1, {}});
            }
        }
        std::vector<bool> affected(dag_.nodes.size(), parent == nullptr);
        for (int n : changed) {
            affected[size_t(n)] = true;
            std::vector<StageRef> readers;
            reading_stages(dag_, nest_, n, readers);
            for (StageRef r : readers) affected[size_t(r.node)] = true;
        }
        // The kernels the affected stages run in are recomputed whole (their footprints and
        // block-wide figures follow what runs inside them).
        for (size_t n = 0; n < dag_.nodes.size(); n++) {
            if (!affected[n] || dag_.nodes[n].is_input || !nest_.scheduled(int(n))) continue;
            for (size_t s = 0; s < dag_.nodes[n].stages.size(); s++) {
                const StageRef k = kernel_stage({int(n), int(s)});
                if (k.node >= 0) affected[size_t(k.node)] = true;
            }
        }
        // Totals for those and for their readers (an inlined Func's evaluations are its readers' points).
        std::vector<bool> wanted = affected;
        for (size_t n = 0; n < dag_.nodes.size(); n++) {
            if (!affected[n]) continue;
            for (int ei : dag_.nodes[n].outgoing_edges) wanted[size_t(dag_.edges[size_t(ei)].consumer_node)] = true;
        }
        totals_ = b_.run_totals(parent ? &wanted : nullptr);
        // Consumers come first in the DAG's order: an inlined Func's readers are done before it.
        for (size_t n = 0; n < dag_.nodes.size(); n++) {
            const Node &node = dag_.nodes[n];
            if (!affected[n] || node.is_input) continue;
            for (size_t s = 0; s < node.stages.size(); s++) {
                GpuStageFeatures &g = out[size_t(row[n][s])];
                g = {int(n), int(s), false, -1, {}};
                if (!nest_.scheduled(int(n))) continue;
                const StageRef ref{int(n), int(s)};
                g.scheduled = true;
                const StageRef k = kernel_stage(ref);
                g.kernel = k.node < 0 ? -1 : row[size_t(k.node)][size_t(k.stage)];
                if (nest_.inlined(int(n))) {
                    g.features.points = inlined_evaluations(int(n), out, row);
                    g.features.ops = g.features.points * ops_per_point(ref);
                    continue;
                }
                stage_features(ref, k.node >= 0, g.features);
                if (g.features.kernel_launches > 0) kernel_features(ref, g.features);
            }
        }
        // Block-wide figures from the stages inside each kernel: the most threads any uses, the
        // shared memory of Funcs computed per block, the registers of those computed per thread.
        for (GpuStageFeatures &g : out) {
            if (!g.scheduled || g.features.kernel_launches == 0) continue;
            g.features.block_threads = g.features.stage_threads;
            g.features.shared_bytes_per_block = 0;
            g.features.registers_per_thread = base_registers(g.node, g.features.points_per_thread);
        }
        for (GpuStageFeatures &g : out) {
            if (!g.scheduled || g.kernel < 0 || g.features.kernel_launches > 0 || nest_.inlined(g.node)) continue;
            GpuFeatures &k = out[size_t(g.kernel)].features;
            k.block_threads = std::max(k.block_threads, g.features.stage_threads);
            if (g.stage != 0) continue;
            const double bytes = points_of(b_.region(g.node, nest_.funcs[size_t(g.node)].store)) *
                                 double(dag_.nodes[size_t(g.node)].bytes_per_point());
            const Memory m = memory_of(g.node);
            if (m == Memory::Shared) k.shared_bytes_per_block += bytes;
            if (m == Memory::Register) k.registers_per_thread += std::ceil(bytes / 4);
        }
        for (GpuStageFeatures &g : out) {
            if (g.scheduled && g.features.kernel_launches > 0)
                g.features.registers_per_thread = std::min(255.0, g.features.registers_per_thread);
        }
        return out;
    }

private:
    const Stage &stage(StageRef s) const { return dag_.nodes[size_t(s.node)].stages[size_t(s.stage)]; }
    const StageTiling &tiling(StageRef s) const { return nest_.funcs[size_t(s.node)].stages[size_t(s.stage)]; }
    Site site_of(int node) const { return nest_.funcs[size_t(node)].compute; }

    double ops_per_point(StageRef s) const { return ops_[size_t(s.node)][size_t(s.stage)]; }

    // The kernel stage (a stage at root, GPU tiled) whose threads run `s`; node -1 on the host
    // (or where no reader of an inlined Func is scheduled yet).
    StageRef kernel_stage(StageRef s) const {
        const Site &site = site_of(s.node);
        if (site.kind == Site::Root) return tiling(s).gpu ? s : StageRef{-1, 0};
        if (site.kind == Site::At) {
            const Site g = gpu_site_around(nest_, site);
            return g.kind == Site::At ? g.stage : StageRef{-1, 0};
        }
        if (site.kind == Site::Inline) {
            for (int ei : dag_.nodes[size_t(s.node)].outgoing_edges) { // runs in its first reader's
                const Edge &e = dag_.edges[size_t(ei)];
                if (nest_.scheduled(e.consumer_node)) return kernel_stage({e.consumer_node, e.consumer_stage});
            }
        }
        return {-1, 0};
    }

    Memory memory_of(int node) const {
        const Node &n = dag_.nodes[size_t(node)];
        if (n.is_input || !nest_.scheduled(node) || nest_.inlined(node)) return Memory::Global;
        const Site &store = nest_.funcs[size_t(node)].store;
        if (store.kind != Site::At) return Memory::Global;
        const Site g = gpu_site_around(nest_, store);
        if (g.kind != Site::At) return Memory::Global; // inside a host Func's loops: host memory
        return g == store && store.level == 0 ? Memory::Shared : Memory::Register;
    }

    double inlined_evaluations(int node, const std::vector<GpuStageFeatures> &out,
                               const std::vector<std::vector<int>> &row) const {
        double e = 0;
        for (int ei : dag_.nodes[size_t(node)].outgoing_edges) {
            const Edge &edge = dag_.edges[size_t(ei)];
            if (!nest_.scheduled(edge.consumer_node)) continue;
            const double reader = nest_.inlined(edge.consumer_node)
                                      ? out[size_t(row[size_t(edge.consumer_node)][0])].features.points
                                      : totals_.points[size_t(edge.consumer_node)][size_t(edge.consumer_stage)];
            e += reader * double(edge.calls);
        }
        return e;
    }

    // A kernel thread's registers before the Funcs computed in it: a base for indices and
    // addresses, and its own points' values (an update accumulates them across its reduction).
    double base_registers(int node, double points_per_thread) const {
        return 24 + points_per_thread * std::ceil(double(dag_.nodes[size_t(node)].bytes_per_point()) / 4);
    }

    // Thread extents of a GPU stage's thread loops (innermost first; 1 for the others) and the
    // step in points between neighbouring threads along each.
    void thread_geometry(StageRef s, std::vector<int64_t> &extent, std::vector<int64_t> &step) const {
        const Stage &st = stage(s);
        const StageTiling &t = tiling(s);
        extent.assign(st.loops.size(), 1);
        step.assign(st.loops.size(), 1);
        if (!t.gpu) return;
        extent = gpu_thread_extents(st, t);
        for (size_t l = 0; l < st.loops.size() && t.tiles.size() == 2; l++) {
            if (!st.loops[l].is_rvar) step[l] = t.tiles[1][l];
        }
    }

    // Elements between neighbouring points of each dimension of `node`'s storage.
    std::vector<double> strides(int node) {
        const Node &n = dag_.nodes[size_t(node)];
        Region r = n.region_at_root;
        if (!n.is_input && nest_.scheduled(node) && !nest_.inlined(node))
            r = b_.region(node, nest_.funcs[size_t(node)].store);
        std::vector<double> out(r.size(), 1);
        for (size_t d = 1; d < r.size(); d++) out[d] = out[d - 1] * double(std::max<int64_t>(1, r[d - 1].extent()));
        return out;
    }

    // Sectors one warp-wide instruction of this access touches, and the threads that warp holds.
    // `jacobian` gives the accessed coordinates' slopes along the stage's loops.
    std::pair<double, double> sectors_per_request(StageRef s, const std::vector<std::vector<JacobianEntry>> &jacobian,
                                                  int node) {
        std::vector<int64_t> extent, step;
        thread_geometry(s, extent, step);
        const double bytes = double(dag_.nodes[size_t(node)].bytes_per_point());
        const std::vector<double> stride = strides(node);
        double lanes = 1, sectors = 1, first_offset = 0;
        bool first = true;
        for (size_t l = 0; l < extent.size() && lanes < 32; l++) {
            if (extent[size_t(l)] <= 1) continue;
            const double n = std::min<double>(double(extent[l]), std::ceil(32 / lanes));
            std::optional<double> offset = 0.0; // elements between neighbouring threads along l
            for (size_t d = 0; d < jacobian.size() && d < stride.size(); d++) {
                const JacobianEntry &e = jacobian[d][l];
                if (!e) {
                    offset.reset();
                    break;
                }
                *offset += e->value() * double(step[l]) * stride[d];
            }
            if (!offset) return {32 * std::ceil(bytes / 32), 32}; // a gather: a sector per thread
            const double off = std::fabs(*offset) * bytes;
            if (first) {
                // The innermost thread loop: a run of n accesses `off` bytes apart.
                sectors = off == 0    ? std::ceil(bytes / 32)
                          : off <= 32 ? ((n - 1) * off + bytes + 31) / 32
                                      : n * std::ceil(bytes / 32);
                first_offset = off;
                first = false;
            } else if (off != 0) {
                // The next rows continue the first where they start where it ends, else apart.
                const bool contiguous =
                    first_offset > 0 && first_offset <= 32 && std::fabs(off - lanes * first_offset) < 1e-9;
                sectors = contiguous ? ((n * lanes - 1) * first_offset + bytes + 31) / 32 : sectors * n;
            }
            lanes *= n;
        }
        return {sectors, std::min(32.0, lanes)};
    }

    void stage_features(StageRef s, bool on_gpu, GpuFeatures &f) {
        const FuncSchedule &fs = nest_.funcs[size_t(s.node)];
        const StageTiling &t = tiling(s);
        const Stage &st = stage(s);
        f.points = totals_.points[size_t(s.node)][size_t(s.stage)];
        f.ops = f.points * ops_per_point(s);
        if (!on_gpu) {
            // On the host: its data crosses to the host and back (Halide copies buffers a device
            // stage wrote before a host stage reads them, and back again).
            f.host_points = f.points;
            std::map<int, Region> read;
            stage_reads(dag_, nest_, s, b_.production_bounds(s), read);
            for (const auto &[p, r] : read)
                f.host_copy_bytes += points_of(r) * double(dag_.nodes[size_t(p)].bytes_per_point());
            f.host_copy_bytes +=
                points_of(b_.region(s.node, fs.store)) * double(dag_.nodes[size_t(s.node)].bytes_per_point());
            return;
        }
        const bool is_kernel = fs.compute.kind == Site::Root && t.gpu;
        if (is_kernel) f.kernel_launches = 1;
        if (t.gpu) {
            f.stage_threads = double(gpu_threads_per_block(st, t));
            f.points_per_thread = 1;
            if (is_kernel && t.tiles.size() == 2) {
                for (size_t l = 0; l < st.loops.size(); l++)
                    f.points_per_thread *= st.loops[l].is_rvar ? 1 : double(t.tiles[1][l]);
            }
            if (!is_kernel) {
                f.serial_rounds = 1;
                for (size_t l = 0; l < st.loops.size(); l++) {
                    if (!st.loops[l].is_rvar) f.serial_rounds *= double(b_.trips(s, 0, int(l)));
                }
                f.barriers = f.serial_rounds * b_.iterations(fs.compute);
                const double launched = f.serial_rounds * f.stage_threads * b_.iterations(fs.compute);
                f.idle_thread_fraction = launched > 0 ? std::max(0.0, 1 - f.points / launched) : 0;
            }
        }
        // Loads, by where the loaded data lives, each once per iteration of the loops it depends on.
        for (const Load &load : stage_loads(dag_, nest_, s)) {
            const double n = f.points / hoisting(s, load.jacobian.entries);
            switch (memory_of(load.producer)) {
            case Memory::Shared: f.shared_loads += n; break;
            case Memory::Register: f.register_loads += n; break;
            case Memory::Global: {
                f.global_loads += n;
                f.global_load_sectors += global_sectors(s, load.jacobian.entries, load.producer, n);
                break;
            }
            }
        }
        // Its own stores: an update's accumulator stays in a register across the reduction loops
        // its left-hand side does not move with.
        const std::vector<std::vector<JacobianEntry>> writes = write_jacobian(s);
        const double stores = f.points / hoisting(s, writes);
        switch (memory_of(s.node)) {
        case Memory::Shared: f.shared_stores += stores; break;
        case Memory::Register: break;
        case Memory::Global: f.global_store_sectors += global_sectors(s, writes, s.node, stores); break;
        }
    }

    // How a stage's writes move with its loops: a pure variable's loop by one along its dimension;
    // a left-hand side computed from reduction variables (a histogram's bins) unknown along them.
    std::vector<std::vector<JacobianEntry>> write_jacobian(StageRef s) const {
        const Stage &st = stage(s);
        const size_t dims = size_t(dag_.nodes[size_t(s.node)].dimensions);
        std::vector<std::vector<JacobianEntry>> j(dims, std::vector<JacobianEntry>(st.loops.size(), Rational{0, 1}));
        const std::vector<Halide::Expr> args =
            st.definition.defined() ? st.definition.args() : std::vector<Halide::Expr>{};
        for (size_t d = 0; d < dims; d++) {
            const auto *v = d < args.size() ? args[d].as<Halide::Internal::Variable>() : nullptr;
            bool found = false;
            for (size_t l = 0; l < st.loops.size() && (v || args.empty()); l++) {
                if (!st.loops[l].is_rvar && st.loops[l].dim == int(d) && (!v || v->name == st.loops[l].var)) {
                    j[d][l] = Rational{1, 1};
                    found = true;
                }
            }
            if (found) continue;
            for (size_t l = 0; l < st.loops.size(); l++) {
                if (st.loops[l].is_rvar) j[d][l] = std::nullopt;
            }
        }
        return j;
    }

    // The iterations of a thread's own loops an access is made once for: the innermost serial
    // loops it does not move with (the compiler hoists it out of them: an accumulator's load and
    // store leave a reduction loop), times the unrolled point loops it does not move with (their
    // copies load the same address once).
    double hoisting(StageRef s, const std::vector<std::vector<JacobianEntry>> &jacobian) {
        const Stage &st = stage(s);
        const StageTiling &t = tiling(s);
        auto moves = [&](size_t l) {
            return std::any_of(jacobian.begin(), jacobian.end(), [&](const std::vector<JacobianEntry> &row) {
                return l < row.size() && !(row[l] && row[l]->num == 0);
            });
        };
        // The loops at the point level run inside the thread: reduction loops innermost, then the
        // pure ones (serial only where the stage has no GPU threads, unrolled with two GPU levels).
        auto whole = [&](size_t l) {
            return std::all_of(t.tiles.begin(), t.tiles.end(), [&](const std::vector<int64_t> &tile) {
                return tile[l] == st.loop_bounds_at_root[l].extent();
            });
        };
        double divisor = 1;
        bool hoisting_on = true;
        for (size_t l = 0; l < st.loops.size() && hoisting_on; l++) {
            if (!st.loops[l].is_rvar || !whole(l)) continue;
            if (moves(l))
                hoisting_on = false;
            else
                divisor *= double(std::max<int64_t>(1, st.loop_bounds_at_root[l].extent()));
        }
        if (!t.gpu) { // a thread's serial loops: the pure ones go on outward
            const Region &pb = b_.production_bounds(s);
            for (size_t l = 0; l < st.loops.size() && hoisting_on && t.tiles.empty(); l++) {
                if (st.loops[l].is_rvar) continue;
                if (moves(l))
                    hoisting_on = false;
                else
                    divisor *= double(std::max<int64_t>(1, pb[l].extent()));
            }
        } else if (t.tiles.size() == 2) {
            for (size_t l = 0; l < st.loops.size(); l++) {
                if (!st.loops[l].is_rvar && !moves(l)) divisor *= double(t.tiles[1][l]);
            }
        }
        return divisor;
    }

    // The sectors `points` accesses of one call move: warp by warp inside GPU threads; a thread
    // alone inside a thread's serial loops (consecutive points along its innermost loop share sectors).
    double global_sectors(StageRef s, const std::vector<std::vector<JacobianEntry>> &jacobian, int node,
                          double points) {
        const double bytes = double(dag_.nodes[size_t(node)].bytes_per_point());
        if (tiling(s).gpu) {
            const auto [sectors, lanes] = sectors_per_request(s, jacobian, node);
            return points / lanes * sectors;
        }
        const std::vector<double> stride = strides(node);
        std::optional<double> offset = 0.0;
        for (size_t d = 0; d < jacobian.size() && d < stride.size() && !jacobian[d].empty(); d++) {
            if (!jacobian[d][0]) {
                offset.reset();
                break;
            }
            *offset += jacobian[d][0]->value() * stride[d];
        }
        const double step = offset ? std::fabs(*offset) * bytes : 32;
        return points * std::min(32.0, std::max(step, bytes)) / 32;
    }

    void kernel_features(StageRef k, GpuFeatures &f) {
        const Stage &st = stage(k);
        f.blocks = 1;
        for (size_t l = 0; l < st.loops.size(); l++) {
            if (!st.loops[l].is_rvar) f.blocks *= double(b_.trips(k, 0, int(l)));
        }
        const double launched = f.blocks * f.stage_threads * f.points_per_thread;
        f.idle_thread_fraction = launched > 0 ? std::max(0.0, 1 - f.points / launched) : 0;
        // The footprint: per block, the rows of each global buffer its stages read, in sectors:
        // the kernel's own, a Func's computed per block (its production), and a Func's computed
        // per thread over what the block's threads need of it together.
        std::map<int, Region> read;
        const Site block = Site::at(k, 0);
        stage_reads(dag_, nest_, k, b_.tile_bounds(k, 0), read);
        for (size_t n = 0; n < dag_.nodes.size(); n++) {
            const FuncSchedule &fs = nest_.funcs[n];
            if (!nest_.scheduled(int(n)) || fs.compute.kind != Site::At || !(kernel_stage({int(n), 0}) == k)) continue;
            const bool per_block = fs.compute == block;
            const Region &region = b_.region(int(n), block);
            for (size_t s = 0; s < dag_.nodes[n].stages.size(); s++) {
                const StageRef ref{int(n), int(s)};
                stage_reads(dag_, nest_, ref, per_block ? b_.production_bounds(ref) : b_.loop_bounds(ref, region),
                            read);
            }
        }
        for (const auto &[p, r] : read) {
            if (memory_of(p) != Memory::Global || r.empty()) continue;
            const double bytes = double(dag_.nodes[size_t(p)].bytes_per_point());
            const double row_sectors = (double(r[0].extent()) * bytes + 31) / 32;
            const double rows = points_of(r) / double(std::max<int64_t>(1, r[0].extent()));
            f.global_footprint_bytes += f.blocks * rows * row_sectors * 32;
            const Node &pn = dag_.nodes[size_t(p)];
            f.global_unique_bytes += std::min(points_of(pn.region_at_root) * bytes, f.blocks * points_of(r) * bytes);
        }
    }

    const FunctionDAG &dag_;
    const LoopNest &nest_;
    const StageOps &ops_;
    LoopNestBounds b_;
    LoopNestBounds::RunTotals totals_;
};

} // namespace

StageOps stage_ops(const FunctionDAG &dag) {
    StageOps out(dag.nodes.size());
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        for (size_t s = 0; s < dag.nodes[n].stages.size(); s++) {
            const auto values = compute_pipeline_features(dag, int(n), int(s)).values();
            out[n].push_back(ops_per_point<double>([&](int i) { return values[size_t(i)]; }));
        }
    }
    return out;
}

std::vector<GpuStageFeatures> compute_gpu_features(const FunctionDAG &dag, const LoopNest &nest, const StageOps &ops) {
    return GpuFeaturizer(dag, nest, ops).run(nullptr, {});
}

std::vector<GpuStageFeatures> update_gpu_features(const FunctionDAG &dag, const LoopNest &nest, const StageOps &ops,
                                                  const std::vector<GpuStageFeatures> &parent,
                                                  const std::vector<int> &changed) {
    return GpuFeaturizer(dag, nest, ops).run(&parent, changed);
}

std::vector<GpuStageFeatures> compute_gpu_features(const FunctionDAG &dag, const LoopNest &nest) {
    return compute_gpu_features(dag, nest, stage_ops(dag));
}

} // namespace schedforge::featurize
