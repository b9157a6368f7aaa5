// Stage profile: how a compiled schedule's run time splits among its Funcs, from Halide's own
// sampling profiler. The cost model predicts a cost per stage; this measures one, so a schedule
// whose total is mispriced shows which stage's price is wrong.
//
// Under JIT, Target::Profile makes every realize() print a report (per Func: the time of the
// profiler's samples that found it running, sampled every millisecond) and reset the counts. A
// run shorter than a millisecond gets one sample or none, so the reports of many runs are summed:
// over a second or two of runs the split is stable.
//
// The profile runs on one thread: parallel loops run their tasks one after another. Halide 14's
// profiler keeps a single "running Func" per pipeline that every thread overwrites, so with
// several threads a sample finds whichever Func last started a production, and Funcs that start
// many small ones take samples that belong to others (a boundary Func computed per 64-point strip
// measured 26% of a run on two threads, 18.5% on one).
//
// Its runs allocate from glibc's heap, as the runner's timed runs do (system_allocator.h): under
// the programs' jemalloc, unsharp_mask's 16 MB tiles were handed fresh pages every run, 57% of a
// run in the boundary Func that the runner's timing never saw.
//
// The instrumentation (each production records which Func runs) cost 2% or less on the held-out
// schedules tried, but a schedule of very many small productions could pay more, and its Funcs
// of many productions would then take more of the samples than of the unprofiled run: the
// profile also times the same runs unprofiled, so a report can show the difference.
#pragma once

#include <Halide.h>

#include <map>
#include <string>

namespace schedforge::runner {

struct StageProfile {
    int runs = 0;                          // realizations profiled
    double seconds_per_run = 0;            // wall time of one profiled realization, averaged
    double unprofiled_seconds_per_run = 0; // the same without the profiler's instrumentation
    std::map<std::string, double> sampled; // Func name -> sampled seconds, summed over all runs
    double sampled_total() const;
};

// Realizes `pipeline` (scheduled, not yet compiled for `target` with Profile) into `output` for
// at least `seconds` (and at least 3 runs) on the calling thread only, and sums its profiler
// reports; then times as many runs compiled without the profiler. Both times are one-thread.
StageProfile profile_stages(Halide::Pipeline pipeline, Halide::Buffer<> output, const Halide::Target &target,
                            double seconds);

// Adds the per-Func times of Halide profiler reports in `text` (one or more) to `profile`;
// returns how many reports it read. Lines of the runtime's own entries (halide_malloc, ...) and
// the headers are skipped.
int add_profiler_reports(const std::string &text, StageProfile &profile);

} // namespace schedforge::runner
