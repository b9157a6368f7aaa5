// The search stage of the benchmark runner (internal to runner/): jobs' describe() run on a TBB
// flow graph in the calling process, several at once, ahead of the workers that compile and
// time what they describe. The runner's event loop submits jobs in order, collects what each
// described (or why it failed), and pauses the searches while a schedule is timed: each search
// waits at its next pause point (common/pause_gate.h), so the timed job has the machine as a
// worker's compile has it stopped.
#pragma once

#include "runner/benchmark_runner.h"
#include "runner/worker_side.h"

#include "common/pause_gate.h"

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace schedforge::runner {

class DescribeGraph {
public:
    struct Described {
        JobSpec spec;
        std::optional<worker::JobFailure> failure; // describe() threw: the job's result
        double seconds = 0;                        // describe()'s wall time, less its pauses
    };

    // Up to `concurrency` describes at once, on threads of their own.
    DescribeGraph(const std::vector<BenchmarkJob> &jobs, int concurrency);
    // Waits for the describes in flight; those not started are skipped.
    ~DescribeGraph();
    DescribeGraph(const DescribeGraph &) = delete;
    DescribeGraph &operator=(const DescribeGraph &) = delete;

    void submit(size_t job);
    int in_flight() const; // submitted and not yet described
    bool done(size_t job) const;
    Described take(size_t job); // once done
    // Readable once a describe has finished since the last clear_wake().
    int wake_fd() const { return wake_fd_; }
    void clear_wake();

    // Stops the searches at their next pause point (returns once they wait there), and lets them go on.
    void pause();
    void resume();
    bool paused() const { return paused_; }

private:
    struct Graph; // TBB's objects, kept out of this header
    const std::vector<BenchmarkJob> &jobs_;
    int wake_fd_ = -1;
    common::PauseGate gate_;
    bool paused_ = false;
    mutable std::mutex mutex_;
    std::vector<std::optional<Described>> described_;
    int submitted_ = 0, finished_ = 0;
    std::unique_ptr<Graph> graph_;
};

} // namespace schedforge::runner
