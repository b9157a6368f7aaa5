// Pooled workers: jobs described as data run in worker processes started by exec, which live
// across jobs; a crash, hang or out-of-memory mid-stream is reported with its reason, its worker
// is replaced, and the jobs after it run; a compile error leaves its worker serving. The searches
// (describe) run on the runner's threads, and a failed one is its job's failure.
#include "runner/benchmark_runner.h"
#include "runner/job_worker.h"
#include "tests/support/faults.h"
#include "tests/support/pool_jobs.h"

#include "common/errors.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <unistd.h>

namespace schedforge::testing {
namespace {

namespace rn = runner;

rn::RunnerOptions pool_options(int compiles) {
    rn::RunnerOptions o;
    o.parallel_compiles = compiles;
    o.worker_program = SCHEDFORGE_FAULT_WORKER;
    o.compile_timeout_seconds = 5;
    o.memory_limit_bytes = int64_t(4) << 30;
    o.timing.warmup_runs = 1;
    o.timing.min_samples = o.timing.max_samples = 2;
    o.timing.rounds = 1;
    return o;
}

rn::BenchmarkJob described(const std::string &name, std::function<rn::JobSpec()> describe) {
    rn::BenchmarkJob job;
    job.name = name;
    job.describe = std::move(describe);
    job.return_output = true;
    return job;
}

rn::BenchmarkJob ramp(int k) {
    return described("ramp " + std::to_string(k), [k]() { return ramp_job(100, k); });
}

void expect_ramp(const rn::JobResult &r, int k) {
    ASSERT_EQ(r.status, rn::JobStatus::Ok) << r.name << ": " << r.message;
    ASSERT_TRUE(r.output.has_value());
    const Halide::Buffer<int32_t> out = *r.output;
    for (int x = 0; x < 100; x += 33) EXPECT_EQ(out(x), x * k) << r.name;
    EXPECT_EQ(r.payload, "ramp " + std::to_string(k)); // from describe(), in this process
    EXPECT_GT(r.worker, 0);
    EXPECT_NE(r.worker, ::getpid());
    EXPECT_FALSE(r.timing.samples.empty());
}

TEST(WorkerPool, DescribedJobsRunInWorkersThatLiveAcrossJobs) {
    std::vector<rn::BenchmarkJob> jobs;
    for (int k = 1; k <= 8; k++) jobs.push_back(ramp(k));
    const std::vector<rn::JobResult> results = rn::run_jobs(jobs, pool_options(2));
    ASSERT_EQ(results.size(), 8u);
    std::set<int> workers;
    for (int k = 1; k <= 8; k++) {
        expect_ramp(results[size_t(k - 1)], k);
        workers.insert(results[size_t(k - 1)].worker);
    }
    EXPECT_LE(workers.size(), 2u) << "two compile slots: two workers serve all eight jobs";
}

TEST(WorkerPool, FaultsMidStreamAreReportedAndThePoolRefills) {
    const std::vector<std::pair<FaultKind, rn::JobStatus>> faults = {
        {FaultKind::Crash, rn::JobStatus::Crash},
        {FaultKind::Hang, rn::JobStatus::Timeout},
        {FaultKind::OutOfMemory, rn::JobStatus::OutOfMemory},
        {FaultKind::CompileError, rn::JobStatus::CompileError},
    };
    std::vector<rn::BenchmarkJob> jobs{ramp(1)};
    for (size_t i = 0; i < faults.size(); i++) {
        const FaultKind kind = faults[i].first;
        jobs.push_back(described("fault " + std::to_string(i), [kind]() { return faulty(ramp_job(100, 7), kind); }));
        jobs.push_back(ramp(int(i) + 2));
    }
    // One compile slot: jobs run one after another, so each job's worker is known.
    const std::vector<rn::JobResult> results = rn::run_jobs(jobs, pool_options(1));
    ASSERT_EQ(results.size(), jobs.size());
    expect_ramp(results[0], 1);
    for (size_t i = 0; i < faults.size(); i++) {
        const rn::JobResult &fault = results[1 + 2 * i], &after = results[2 + 2 * i];
        SCOPED_TRACE(fault.name);
        EXPECT_EQ(fault.status, faults[i].second) << fault.message;
        EXPECT_FALSE(fault.message.empty());
        EXPECT_EQ(fault.payload, "ramp 7"); // the search's result, kept whatever the worker did
        expect_ramp(after, int(i) + 2);
        // A worker that crashed, hung or ran out of memory is gone; one that reported a compile
        // error itself serves on.
        if (faults[i].second == rn::JobStatus::CompileError) {
            EXPECT_EQ(after.worker, fault.worker);
        } else {
            EXPECT_NE(after.worker, fault.worker);
        }
        EXPECT_EQ(fault.worker, results[2 * i].worker) << "the job before it left its worker serving";
    }
}

TEST(WorkerPool, AFailedDescribeIsItsJobsFailureAndNoWorkerRunsIt) {
    std::vector<rn::BenchmarkJob> jobs{
        ramp(1),
        described("bad search", []() -> rn::JobSpec { throw std::runtime_error("no schedule for this pipeline"); }),
        described("unknown kind",
                  []() {
                      return rn::JobSpec{"no.such.kind", "", ""};
                  }),
        ramp(3)};
    const std::vector<rn::JobResult> results = rn::run_jobs(jobs, pool_options(2));
    expect_ramp(results[0], 1);
    EXPECT_EQ(results[1].status, rn::JobStatus::CompileError);
    EXPECT_EQ(results[1].message, "no schedule for this pipeline");
    EXPECT_EQ(results[1].worker, 0);
    EXPECT_EQ(results[2].status, rn::JobStatus::Crash);
    EXPECT_NE(results[2].message.find("no job kind 'no.such.kind'"), std::string::npos) << results[2].message;
    expect_ramp(results[3], 3);
}

TEST(WorkerPool, OneRunsJobsAreAllPreparedOrAllDescribed) {
    std::vector<rn::BenchmarkJob> jobs{ramp(1), ramp(2)};
    jobs[1].describe = nullptr;
    jobs[1].prepare = []() { return build_ramp(ramp_job(10, 2).data); };
    EXPECT_THROW(rn::run_jobs(jobs, pool_options(1)), std::invalid_argument);
}

TEST(WorkerPool, AMissingWorkerProgramIsAUserError) {
    rn::RunnerOptions o = pool_options(1);
    o.worker_program = "/nonexistent/schedforge-worker";
    EXPECT_THROW(rn::run_jobs({ramp(1)}, o), UserError);
}

TEST(WorkerPool, TheWorkerProgramRefusesToBeRunByHand) {
    const std::string command = std::string(SCHEDFORGE_FAULT_WORKER) + " > /dev/null 2>&1";
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2);
}

} // namespace
} // namespace schedforge::testing
