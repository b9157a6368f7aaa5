// The timing protocol: warm up, then take samples until the timing is stable or a cap is hit.
//
// Every sample is kept. The runtime label of a job is the minimum (the least disturbed run);
// the median is reported beside it. "Stable" means the fastest `min_samples` samples lie within
// `accuracy` of the minimum, relative.
#pragma once

#include <functional>
#include <vector>

namespace schedforge::sampler {

struct TimingProtocol {
    int warmup_runs = 1;
    int min_samples = 5;
    int max_samples = 200;
    double accuracy = 0.02;   // relative spread among the fastest min_samples samples
    double max_seconds = 2.0; // stop sampling after this much time (at least min_samples taken)
    int threads = 0;          // Halide runtime threads; 0: all cores
};

struct TimingResult {
    std::vector<double> samples; // seconds per run, in the order taken
    double min_seconds = 0, median_seconds = 0;
    int threads = 0;
};

// Times `run` under `protocol`. `run` performs one complete execution.
TimingResult time_runs(const TimingProtocol &protocol, int threads, const std::function<void()> &run);

// The minimum and median of samples (both 0 for none).
void summarize(TimingResult *result);

} // namespace schedforge::sampler
