// The timing protocol: warm up, then take samples until the timing is stable or a cap is hit.
//
// Every sample is kept, except those taken while other processes held the CPUs: the runtime
// label of a job is the minimum (the least disturbed run), and the minimum is robust to a
// passing disturbance but not to a sustained one (a build beside a 2-core benchmark makes every
// sample of a parallel pipeline exactly 2x slower, and "stable" too). So a sample during which
// this process's threads waited for a CPU more than `max_cpu_wait` of their time (Linux
// schedstat) is retaken, for at most `contended_seconds`; after that the contended samples are
// kept, and the result says so when the fastest sample is one of them. The median is reported
// beside the minimum. "Stable" means the fastest `min_samples` samples lie within `accuracy` of
// the minimum, relative; it ends the sampling only after `min_sampling_seconds` (a cap, as
// max_samples and max_seconds, ends it in any case). The window is for small parallel
// pipelines: a whole series of a few samples (about 1 ms) could sit at exactly twice the level of
// another run's, and over 50 ms the minimum catches the fast state (corpora/README.md: two runs
// agree on 85.6% of schedule pairs against 82.0%).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace schedforge::sampler {

struct TimingProtocol {
    int warmup_runs = 1;
    int min_samples = 5;
    int max_samples = 200;
    double accuracy = 0.02;             // relative spread among the fastest min_samples samples
    double max_seconds = 2.0;           // stop sampling after this much time (at least min_samples taken)
    double min_sampling_seconds = 0.05; // and not before this much time, however stable (0: off)
    int threads = 0;                    // Halide runtime threads; 0: all cores
    double max_cpu_wait = 0.1;          // share of a sample's thread time spent waiting for a CPU; 0: off
    double contended_seconds = 10.0;    // how long to keep retaking contended samples
};

struct TimingResult {
    std::vector<double> samples; // seconds per run, in the order taken
    double min_seconds = 0, median_seconds = 0;
    int threads = 0;
    int retaken = 0;        // contended samples dropped and taken again
    bool contended = false; // the retakes ran out and the fastest sample (the label) is contended
    double cpu_wait = 0;    // the fastest sample's share of thread time spent waiting for a CPU
};

// Seconds this process's threads have spent runnable but waiting for a CPU (the kernel's
// schedstat run_delay, summed over /proc/self/task); negative where the kernel does not say.
double cpu_wait_seconds();

// Times `run` under `protocol`. `run` performs one complete execution.
TimingResult time_runs(const TimingProtocol &protocol, int threads, const std::function<void()> &run);

// The same, with the probe of cpu_wait_seconds() given (tests script it).
TimingResult time_runs(const TimingProtocol &protocol, int threads, const std::function<void()> &run,
                       const std::function<double()> &cpu_wait);

// One line for a result whose label (the fastest sample) is contended ("timed while other processes held
// the CPUs: ..."); a label to treat with care.
std::string contention_note(const TimingResult &result);

// The minimum and median of samples (both 0 for none).
void summarize(TimingResult *result);

} // namespace schedforge::sampler
