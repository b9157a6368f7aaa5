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
//
// Rounds. A shared virtual machine changes speed for seconds at a time (on the Intel Xeon VMs of
// corpora/README.md, one schedule's samples sit at 10.4 ms for three seconds and at 15.0 ms for
// the next three, in one process), so a label taken in one window depends on when it was taken:
// two labellings of the same schedules, 0.5 s each, agreed on only 79% of the pairs within a
// pipeline. With `rounds` > 1 a job's timing is split into that many slices, and the benchmark
// runner interleaves the slices of the jobs of one group (the schedules of one pipeline) round
// by round, so that slow and fast spells fall on all of them alike; the label is then the
// median of the rounds' minima (each round's minimum drops the passing disturbances, the
// median the spells that only some rounds saw). Each round runs in a process of its own
// (`fresh_processes`), since some schedules' times also depend on the process.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace schedforge::runner {

struct TimingProtocol {
    // Runs before the samples, in each round. Three: glibc's malloc settles its thresholds in a
    // process's first run (each large block freed raises them) and faults its arenas' new top in
    // the second, so a sample after one warm-up paid page faults that a process running the
    // pipeline again and again does not (harris's nest: 3,856 pages in the second run, 11 ms
    // against 6), and that the features' heap model (the fourth run) does not count.
    int warmup_runs = 3;
    int min_samples = 5;
    int max_samples = 200;
    double accuracy = 0.02;             // relative spread among the fastest min_samples samples
    double max_seconds = 2.0;           // stop sampling after this much time (at least min_samples taken)
    double min_sampling_seconds = 0.05; // and not before this much time, however stable (0: off)
    int threads = 0;                    // Halide runtime threads; 0: the CPUs the worker may use
    double max_cpu_wait = 0.1;          // share of a sample's thread time spent waiting for a CPU; 0: off
    double contended_seconds = 10.0;    // how long to keep retaking contended samples
    int rounds = 5;                     // slices the sampling is split into (above); 1: one window
    // Each round in a process of its own, forked from the compiled worker (round_process.h), so
    // that a time that depends on the process (the allocator's arenas) is drawn once per round,
    // not once per job. CPU targets only (a GPU job's rounds share its worker).
    bool fresh_processes = true;
};

// The protocol of one of p.rounds slices: the samples, seconds and windows divided among them
// (at least one sample each), the warm-up and the accuracy as in p (each slice starts cold).
TimingProtocol round_protocol(const TimingProtocol &p);

struct TimingResult {
    std::vector<double> samples; // seconds per run, in the order taken
    // Minor page faults of the whole process during each sample (getrusage), beside `samples`: what
    // the allocator's trims and fresh mappings cost a run (featurize/glibc_heap.h models them).
    std::vector<double> page_faults;
    double median_page_faults = 0;
    double min_seconds = 0, median_seconds = 0;
    int threads = 0;
    int retaken = 0;        // contended samples dropped and taken again
    bool contended = false; // the retakes ran out and the fastest sample (the label) is contended
    double cpu_wait = 0;    // the fastest sample's share of thread time spent waiting for a CPU
    // Samples per round, in order (empty: one round); summarize() fills the rest.
    std::vector<int> round_sizes;
    double label_seconds = 0; // the label: min_seconds with one round, else the median of the rounds' minima
};

// The rounds' results of one job as one: samples in order, their round sizes, retakes summed;
// contended when at least half of the rounds' labels were.
TimingResult merge_rounds(const std::vector<TimingResult> &rounds);

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

// The minimum, median and label of the samples, and the median of their page faults (all 0 for none).
void summarize(TimingResult *result);

} // namespace schedforge::runner
