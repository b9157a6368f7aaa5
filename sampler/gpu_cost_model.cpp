#include "sampler/gpu_cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace schedforge::sampler {

namespace sf = schedforge::featurize;

namespace {

// Per row, for kernel rows: the kernel's features with those of the stages inside it added (its
// per-block and per-thread Funcs, and the Funcs inlined into them), in one pass over the rows.
std::vector<sf::GpuFeatures> kernel_sums(const std::vector<sf::GpuStageFeatures> &features) {
    std::vector<sf::GpuFeatures> sums(features.size());
    for (size_t i = 0; i < features.size(); i++) {
        if (features[i].scheduled && features[i].features.kernel_launches > 0) sums[i] = features[i].features;
    }
    for (size_t i = 0; i < features.size(); i++) {
        const sf::GpuStageFeatures &g = features[i];
        if (!g.scheduled || g.kernel < 0 || size_t(g.kernel) == i) continue;
        sf::GpuFeatures &sum = sums[size_t(g.kernel)];
        const sf::GpuFeatures &f = g.features;
        sum.ops += f.ops;
        sum.global_loads += f.global_loads;
        sum.global_load_sectors += f.global_load_sectors;
        sum.shared_loads += f.shared_loads;
        sum.shared_stores += f.shared_stores;
        sum.register_loads += f.register_loads;
        sum.global_store_sectors += f.global_store_sectors;
        sum.barriers += f.barriers;
    }
    return sums;
}

KernelCost kernel_cost(const sf::GpuFeatures &own, const sf::GpuFeatures &sum, const sf::GpuDevice &d) {
    KernelCost c;
    const double inf = std::numeric_limits<double>::infinity();
    const double threads = std::max(1.0, own.block_threads);
    const double warps = std::ceil(threads / 32);
    double bps = std::min<double>(d.max_blocks_per_sm, std::floor(double(d.max_threads_per_sm) / (warps * 32)));
    if (own.shared_bytes_per_block > 0) {
        if (own.shared_bytes_per_block > double(d.shared_bytes_per_block)) bps = 0;
        bps = std::min(bps, std::floor(double(d.shared_bytes_per_sm) / own.shared_bytes_per_block));
    }
    const double regs = std::max(1.0, own.registers_per_thread) * warps * 32;
    bps = std::min(bps, std::floor(double(d.registers_per_sm) / regs));
    c.blocks_per_sm = bps;
    if (bps < 1) {
        c.seconds = inf;
        return c;
    }
    const double max_warps = double(d.max_threads_per_sm) / 32;
    const double resident_warps = std::min(bps, std::ceil(own.blocks / d.sms)) * warps;
    c.occupancy = bps * warps / max_warps;
    const double sms = double(d.sms);
    const double sm_share = std::min(1.0, own.blocks / sms);
    c.waves = own.blocks / (sms * bps);
    const double tail = c.waves >= 1 ? std::ceil(c.waves) / c.waves : 1;
    const double in_flight = resident_warps * std::min(std::max(1.0, own.points_per_thread), kIndependentPoints);
    const double memory_reach = std::min(1.0, in_flight / kWarpsForMemory);
    const double compute_reach = std::min(1.0, in_flight / kWarpsForCompute);

    const double launched_ops = sum.ops / std::max(0.05, 1 - own.idle_thread_fraction);
    c.compute = launched_ops / (sms * sm_share * d.fp32_lanes_per_sm * d.clock_hz * compute_reach) * tail;
    const double requested = 32 * (sum.global_load_sectors + sum.global_store_sectors);
    c.l1 = requested / (sms * sm_share * kL1BytesPerClock * d.clock_hz * memory_reach) * tail;
    const double l2_bytes = own.global_footprint_bytes + 32 * sum.global_store_sectors;
    c.l2 = l2_bytes / (d.l2_bytes_per_second * std::min(1.0, kL2ShareOfOneSm * sm_share) * memory_reach) * tail;
    const double reads = own.global_unique_bytes <= d.l2_bytes ? own.global_unique_bytes : own.global_footprint_bytes;
    const double dram_bytes = reads + 32 * sum.global_store_sectors;
    c.dram = dram_bytes / (d.dram_bytes_per_second * std::min(1.0, kDramShareOfOneSm * sm_share) * memory_reach) * tail;
    c.shared = 4 * (sum.shared_loads + sum.shared_stores) / (sms * sm_share * kSharedBytesPerClock * d.clock_hz) * tail;
    c.barriers = sum.barriers * kBarrierCycles / (d.clock_hz * sms * sm_share * bps);
    c.seconds = kLaunchSeconds + std::max({c.compute, c.dram, c.l2, c.l1, c.shared}) + c.barriers;
    return c;
}

} // namespace

GpuCost gpu_cost(const std::vector<sf::GpuStageFeatures> &features, const sf::GpuDevice &device) {
    GpuCost cost;
    const std::vector<sf::GpuFeatures> sums = kernel_sums(features);
    for (size_t i = 0; i < features.size(); i++) {
        const sf::GpuStageFeatures &g = features[i];
        if (!g.scheduled) continue;
        if (g.features.kernel_launches > 0) {
            KernelCost k = kernel_cost(g.features, sums[i], device);
            k.row = int(i);
            cost.seconds += k.seconds;
            cost.kernels.push_back(k);
        } else if (g.features.host_points > 0) {
            const double s = g.features.ops * kHostSecondsPerOp +
                             g.features.host_copy_bytes / device.host_link_bytes_per_second + kHostSyncSeconds;
            cost.host_seconds += s;
            cost.seconds += s;
        }
    }
    return cost;
}

} // namespace schedforge::sampler
