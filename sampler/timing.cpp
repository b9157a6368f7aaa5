#include "sampler/timing.h"

#include <algorithm>
#include <chrono>

namespace schedforge::sampler {

void summarize(TimingResult *r) {
    if (r->samples.empty()) {
        r->min_seconds = r->median_seconds = 0;
        return;
    }
    std::vector<double> sorted = r->samples;
    std::sort(sorted.begin(), sorted.end());
    r->min_seconds = sorted.front();
    const size_t n = sorted.size();
    r->median_seconds = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

namespace {

// Are the fastest k samples within `accuracy` of the fastest?
bool stable(std::vector<double> samples, int k, double accuracy) {
    if (int(samples.size()) < k) return false;
    std::partial_sort(samples.begin(), samples.begin() + k, samples.end());
    return samples[size_t(k) - 1] <= samples[0] * (1 + accuracy);
}

} // namespace

TimingResult time_runs(const TimingProtocol &p, int threads, const std::function<void()> &run) {
    using Clock = std::chrono::steady_clock;
    TimingResult result;
    result.threads = threads;
    for (int i = 0; i < p.warmup_runs; i++) run();
    const auto start = Clock::now();
    while (int(result.samples.size()) < p.max_samples) {
        const auto t0 = Clock::now();
        run();
        result.samples.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        const int taken = int(result.samples.size());
        if (taken < p.min_samples) continue;
        if (stable(result.samples, p.min_samples, p.accuracy)) break;
        if (std::chrono::duration<double>(Clock::now() - start).count() >= p.max_seconds) break;
    }
    summarize(&result);
    return result;
}

} // namespace schedforge::sampler
