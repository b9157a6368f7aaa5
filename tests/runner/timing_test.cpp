// The timing protocol retakes samples taken while other processes hold the CPUs (a sustained
// competitor makes every sample of a parallel run uniformly slower, and "stable"), and says so
// when the retakes run out. No speed is asserted: only what the protocol saw and did.
#include "runner/timing.h"

#include "common/timing_note.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace schedforge::runner {
namespace {

// Processes that spin on every core until destroyed.
class CpuHogs {
public:
    explicit CpuHogs(int n) {
        for (int i = 0; i < n; i++) {
            const pid_t pid = fork();
            if (pid == 0) {
                for (volatile unsigned long k = 0;; k = k + 1) {
                }
            }
            if (pid > 0) pids_.push_back(pid);
        }
    }
    ~CpuHogs() {
        for (pid_t p : pids_) ::kill(p, SIGKILL);
        for (pid_t p : pids_) ::waitpid(p, nullptr, 0);
    }

private:
    std::vector<pid_t> pids_;
};

void spin_for(std::chrono::milliseconds ms) {
    const auto end = std::chrono::steady_clock::now() + ms;
    while (std::chrono::steady_clock::now() < end) {
    }
}

// Threads that stay alive (the kernel forgets an exited thread's wait, as Halide's thread pool
// never exits): run() keeps the calling thread and n - 1 others busy for `ms` milliseconds.
class SpinPool {
public:
    SpinPool(int n, int ms) : ms_(ms) {
        for (int i = 1; i < n; i++) {
            threads_.emplace_back([this]() {
                for (int seen = 0; !quit_;) {
                    if (generation_ == seen) continue;
                    seen = generation_;
                    spin_for(std::chrono::milliseconds(ms_));
                    done_++;
                }
            });
        }
    }
    ~SpinPool() {
        quit_ = true;
        for (std::thread &t : threads_) t.join();
    }
    void run() {
        done_ = 0;
        generation_++;
        spin_for(std::chrono::milliseconds(ms_));
        while (done_ < int(threads_.size())) {
        }
    }

private:
    const int ms_;
    std::atomic<int> generation_{0}, done_{0};
    std::atomic<bool> quit_{false};
    std::vector<std::thread> threads_;
};

int cores() { return int(std::max(1u, std::thread::hardware_concurrency())); }

TimingProtocol short_protocol() {
    TimingProtocol p;
    p.warmup_runs = 0;
    p.min_samples = 3;
    p.max_samples = 10;
    p.max_seconds = 0.05;
    p.contended_seconds = 0.3;
    return p;
}

TEST(Timing, CpuWaitGrowsWhileOtherProcessesHoldTheCpus) {
    if (cpu_wait_seconds() < 0) GTEST_SKIP() << "this kernel reports no schedstat";
    SpinPool pool(cores(), 200);
    const CpuHogs hogs(cores());
    const double before = cpu_wait_seconds();
    pool.run();
    // Fair shares: each of our threads waits about half of the 200 ms.
    EXPECT_GT(cpu_wait_seconds() - before, 0.02 * cores());
}

TEST(Timing, ContendedSamplesAreRetakenThenKeptAndFlagged) {
    if (cpu_wait_seconds() < 0) GTEST_SKIP() << "this kernel reports no schedstat";
    SpinPool pool(cores(), 5);
    const CpuHogs hogs(cores());
    const TimingResult r = time_runs(short_protocol(), cores(), [&]() { pool.run(); });
    EXPECT_GT(r.retaken, 0);
    EXPECT_FALSE(r.samples.empty());
    if (r.contended) {
        EXPECT_GT(r.cpu_wait, 0.1);
        EXPECT_TRUE(common::timed_under_contention(contention_note(r)));
    } else {
        EXPECT_LE(r.cpu_wait, 0.1); // every kept sample is clean
    }
}

TEST(Timing, WithTheCheckOffEverySampleIsKept) {
    SpinPool pool(cores(), 5);
    const CpuHogs hogs(cores());
    TimingProtocol p = short_protocol();
    p.max_cpu_wait = 0;
    const TimingResult r = time_runs(p, cores(), [&]() { pool.run(); });
    EXPECT_EQ(r.retaken, 0);
    EXPECT_FALSE(r.contended);
    EXPECT_GE(r.samples.size(), 3u);
}

// Samples of scripted lengths, each waiting a scripted share of its time for a CPU (as the
// probe reports it): the protocol's decisions, on any kernel and any load.
struct ScriptedSamples {
    std::vector<int> milliseconds;
    std::vector<double> wait_shares;
    size_t next = 0;
    double waited = 0; // what the probe reports

    TimingResult time(TimingProtocol p) {
        p.warmup_runs = 0;
        p.min_samples = 100; // never "stable": the script's length decides
        p.max_seconds = 100;
        return time_runs(
            p, 1,
            [&]() {
                const size_t i = std::min(next++, milliseconds.size() - 1);
                std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds[i]));
                waited += wait_shares[i] * milliseconds[i] * 1e-3;
            },
            [&]() { return waited; });
    }
};

TEST(Timing, TheLabelIsContendedOnlyIfTheFastestSampleIs) {
    TimingProtocol p;
    p.contended_seconds = 0; // no retakes: every sample is kept
    p.max_samples = 3;
    ScriptedSamples slow_contended{{30, 3, 30}, {0.8, 0, 0}};
    const TimingResult clean = slow_contended.time(p);
    ASSERT_EQ(clean.samples.size(), 3u);
    EXPECT_EQ(clean.retaken, 0);
    EXPECT_FALSE(clean.contended);
    EXPECT_EQ(clean.cpu_wait, 0);

    ScriptedSamples fast_contended{{3, 30, 30}, {0.8, 0, 0}};
    const TimingResult contended = fast_contended.time(p);
    EXPECT_TRUE(contended.contended);
    EXPECT_GT(contended.cpu_wait, p.max_cpu_wait); // 0.8 scripted; a sleep that overruns under load shares less
    EXPECT_TRUE(common::timed_under_contention(contention_note(contended)));
}

// A probe that cannot read every thread (-1) in the middle of a run says nothing of that sample:
// it is kept, neither retaken nor marked.
TEST(Timing, AProbeThatFailsMidRunLeavesTheSampleUnjudged) {
    TimingProtocol p;
    p.max_samples = 2;
    // Readings: the check that the probe works, then (before, after) each sample: the first
    // sample's first read fails, the second waits 0.5 s in 2 ms (retaken), the third none.
    const std::vector<double> readings = {0, -1, 1.0, 1.0, 1.5, 1.5};
    size_t next = 0;
    const TimingResult r = time_runs(
        p, 1, []() { std::this_thread::sleep_for(std::chrono::milliseconds(2)); },
        [&]() { return readings[std::min(next++, readings.size() - 1)]; });
    EXPECT_EQ(r.retaken, 1);
    EXPECT_FALSE(r.contended);
    EXPECT_EQ(r.samples.size(), 2u);
}

TEST(Timing, ContendedSamplesAreDroppedWhileRetakesLast) {
    TimingProtocol p;
    p.max_samples = 2;
    ScriptedSamples script{{1, 1, 4, 5}, {0.9, 0.9, 0, 0}};
    const TimingResult r = script.time(p);
    EXPECT_EQ(r.retaken, 2);
    ASSERT_EQ(r.samples.size(), 2u);
    EXPECT_GE(r.min_seconds, 0.004); // the two fast contended samples are not the label
    EXPECT_FALSE(r.contended);
}

// A stable run still samples for min_sampling_seconds: the label is the minimum over a window
// long enough to outlast a short slow spell (a whole series of a tiny parallel pipeline at 2x).
// Any three samples count as stable here (accuracy 100), so a loaded machine that stretches a
// sleep cannot change when the protocol would stop without the window.
TEST(Timing, StableRunsStillSampleForTheMinimumWindow) {
    TimingProtocol p = short_protocol();
    p.accuracy = 100, p.max_samples = 1000, p.max_seconds = 100, p.max_cpu_wait = 0;
    p.min_sampling_seconds = 0;
    auto five_ms = []() { std::this_thread::sleep_for(std::chrono::milliseconds(5)); };
    EXPECT_EQ(time_runs(p, 1, five_ms).samples.size(), 3u);
    p.min_sampling_seconds = 0.2;
    const TimingResult r = time_runs(p, 1, five_ms);
    EXPECT_GT(r.samples.size(), 3u);
    EXPECT_LE(r.samples.size(), 40u); // each sample lasts at least 5 ms: 40 of them reach 200 ms
    double sampled = 0;
    for (double s : r.samples) sampled += s;
    EXPECT_GE(sampled, 0.15); // the window less the loop's own bookkeeping
}

// With rounds, the label is the median of the rounds' minima: a spell that made one round fast
// (or slow) does not move it; with one round it is the minimum.
TEST(Timing, TheLabelOfRoundsIsTheMedianOfTheirMinima) {
    TimingResult r;
    r.samples = {5, 1.5, 3, 2, 9, 4, 4.5};
    summarize(&r);
    EXPECT_EQ(r.label_seconds, 1.5);
    EXPECT_EQ(r.min_seconds, 1.5);
    r.round_sizes = {3, 2, 2}; // minima 1.5, 2 and 4
    summarize(&r);
    EXPECT_EQ(r.label_seconds, 2);
    EXPECT_EQ(r.min_seconds, 1.5);
    EXPECT_EQ(r.median_seconds, 4);

    TimingResult a, b, c;
    a.samples = {3, 2};
    b.samples = {1};
    c.samples = {6, 5, 7};
    a.contended = b.contended = true;
    a.retaken = 2;
    c.retaken = 1;
    const TimingResult m = merge_rounds({a, b, c});
    EXPECT_EQ(m.samples, (std::vector<double>{3, 2, 1, 6, 5, 7}));
    EXPECT_EQ(m.round_sizes, (std::vector<int>{2, 1, 3}));
    EXPECT_EQ(m.label_seconds, 2);
    EXPECT_EQ(m.retaken, 3);
    EXPECT_TRUE(m.contended); // two of the three rounds' labels
    EXPECT_EQ(merge_rounds({c}).label_seconds, 5);
    EXPECT_TRUE(merge_rounds({c}).round_sizes.empty());
}

TEST(Timing, ARoundTakesItsShareOfTheSamplesAndSeconds) {
    TimingProtocol p;
    p.min_samples = 5;
    p.max_samples = 50;
    p.max_seconds = 0.5;
    p.min_sampling_seconds = 0.05;
    p.rounds = 5;
    const TimingProtocol r = round_protocol(p);
    EXPECT_EQ(r.rounds, 1);
    EXPECT_EQ(r.min_samples, 1);
    EXPECT_EQ(r.max_samples, 10);
    EXPECT_DOUBLE_EQ(r.max_seconds, 0.1);
    EXPECT_DOUBLE_EQ(r.min_sampling_seconds, 0.01);
    EXPECT_EQ(r.warmup_runs, p.warmup_runs); // each round starts cold
    EXPECT_EQ(r.accuracy, p.accuracy);
}

} // namespace
} // namespace schedforge::runner
