// Retiming a dataset: the same pipelines and schedules (the stored loop nests), compiled and timed
// again by this build on this machine under a given protocol, with this build's features. The
// quick path to labels for new hardware, since no search runs again (a held-out set labelled on
// one machine says little about a model's ranking on another), and the way to measure label
// noise: two retimes of one file.
#pragma once

#include "runner/benchmark_runner.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

namespace schedforge::datagen {

struct RetimeReport {
    uint64_t pipelines = 0, schedules = 0;
    uint64_t timed = 0;        // schedules compiled and timed again
    uint64_t ok = 0;           // of those, ok now (output checked against compute_root's)
    uint64_t without_nest = 0; // schedules with no stored nest (the search failed): kept as they were
    uint64_t resumed = 0;      // schedules a stopped or killed run had written (resume): kept
    bool stopped = false;      // `stop` turned true first: OUT.partial holds what was finished
};

// Writes `out` (which must not exist) from `input`: each pipeline's compute_root reference and
// each stored nest run in the benchmark runner's workers under `runner`. Statuses, runtimes,
// timing samples and the file's hardware, target and timing protocol are this run's; the rest of
// each record is the input's. A schedule whose output differs from compute_root's is
// wrong_output, unless its input record was admitted as fast-math rounding (its output matched
// under StrictFloat when it was labelled). UserError when the file cannot be read back into
// schedules (as refeaturize_dataset).
//
// Written as it goes: each pipeline, once all its jobs are done, goes to `out`.partial (in input
// order, each record flushed), which is compacted and renamed to `out` at the end. A run stopped
// by `stop` or killed leaves the partial file; `resume` continues it (UserError if it was left
// with other features or on another machine, protocol or input; a later build with the same
// features may continue it), timing only the schedules it lacks, while
// without `resume` a partial file there is a UserError. `progress(done, total)` is called as each
// job finishes. Must be called before this process runs JIT code or starts threads (run_jobs()).
RetimeReport retime_dataset(const std::string &input, const std::string &out, const runner::RunnerOptions &runner,
                            bool resume = false, const std::atomic<bool> *stop = nullptr,
                            const std::function<void(uint64_t, uint64_t)> &progress = {});

} // namespace schedforge::datagen
