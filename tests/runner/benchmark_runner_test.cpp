// The benchmark runner survives bad jobs: each failure is reported with its reason and the job
// after it still runs. Timing of a job of known duration is right; outputs are checked.
#include "runner/benchmark_runner.h"
#include "runner/worker_side.h"

#include "tests/support/process.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <sched.h>
#include <unistd.h>

namespace schedforge::runner {
namespace {

using namespace Halide;

BenchmarkJob make_job(const std::string &name, std::function<PreparedJob()> prepare) {
    BenchmarkJob job;
    job.name = name;
    job.prepare = std::move(prepare);
    return job;
}

// A small, fast, correct job: out(x) = x * 2 + offset.
BenchmarkJob simple_job(const std::string &name, int offset = 0, bool tiled = false) {
    return make_job(name, [=]() {
        Func f("f");
        Var x("x"), xo("xo"), xi("xi");
        f(x) = x * 2 + offset;
        if (tiled) f.split(x, xo, xi, 8).vectorize(xi);
        return PreparedJob{Pipeline(f), Buffer<int>(1000)};
    });
}

RunnerOptions fast_options() {
    RunnerOptions o;
    o.timing.min_samples = 3;
    o.timing.max_seconds = 0.2;
    o.run_timeout_seconds = 5;
    o.compile_timeout_seconds = 60;
    o.memory_limit_bytes = int64_t(2) << 30;
    return o;
}

TEST(BenchmarkRunner, FailuresAreReportedWithReasonsAndTheNextJobRuns) {
    std::vector<BenchmarkJob> jobs;
    jobs.push_back(simple_job("ok_first"));
    jobs.push_back(make_job("segfault", []() {
        // Generated code reads through a bogus host pointer.
        ImageParam in(UInt(8), 1, "in");
        Buffer<uint8_t> bogus(reinterpret_cast<uint8_t *>(uintptr_t(16)), 1 << 20);
        in.set(bogus);
        Func f("f");
        Var x("x");
        f(x) = in(x) + 1;
        return PreparedJob{Pipeline(f), Buffer<uint8_t>(1 << 20)};
    }));
    jobs.push_back(simple_job("ok_after_segfault"));
    jobs.push_back(make_job("endless", []() {
        // A recurrence over 2^60 iterations that no compiler can fold away.
        Func f("f");
        RDom r(0, 1 << 30, 0, 1 << 30);
        f() = 1;
        f() = f() * 3 + (r.x ^ r.y);
        return PreparedJob{Pipeline(f), Buffer<int>::make_scalar()};
    }));
    jobs.push_back(simple_job("ok_after_timeout"));
    jobs.push_back(make_job("memory_blowup", []() {
        // Two ~1.97 GB intermediates (Halide caps one allocation below 2^31 bytes) under a
        // 2 GiB address-space limit.
        Func g("g"), h("h"), f("f");
        Var x("x"), y("y");
        g(x, y) = cast<float>(x + y);
        h(x, y) = cast<float>(x - y);
        RDom r(0, 16384, 0, 30000);
        f() = 0.0f;
        f() += g(r.x, r.y) + h(r.x, r.y);
        g.compute_root();
        h.compute_root();
        return PreparedJob{Pipeline(f), Buffer<float>::make_scalar()};
    }));
    jobs.push_back(simple_job("ok_after_oom"));
    jobs.push_back(make_job("rejected_schedule", []() {
        Func f("f");
        Var x("x"), z("z");
        f(x) = x;
        f.vectorize(z, 8); // z is not a dimension of f
        return PreparedJob{Pipeline(f), Buffer<int>(16)};
    }));
    jobs.push_back(simple_job("ok_last"));

    const std::vector<JobResult> results = run_jobs(jobs, fast_options());
    ASSERT_EQ(results.size(), jobs.size());
    auto expect = [&](size_t i, JobStatus status, const std::string &fragment) {
        EXPECT_EQ(results[i].name, jobs[i].name);
        EXPECT_EQ(status_name(results[i].status), std::string(status_name(status)))
            << results[i].name << ": " << results[i].message;
        EXPECT_NE(results[i].message.find(fragment), std::string::npos)
            << results[i].name << ": " << results[i].message;
    };
    expect(0, JobStatus::Ok, "");
    expect(1, JobStatus::Crash, "SIGSEGV");
    expect(2, JobStatus::Ok, "");
    expect(3, JobStatus::Timeout, "run timed out after 5 s");
    expect(4, JobStatus::Ok, "");
    expect(5, JobStatus::OutOfMemory, "Out of memory");
    expect(6, JobStatus::Ok, "");
    expect(7, JobStatus::CompileError, "could not find split dimension: z");
    expect(8, JobStatus::Ok, "");
    for (size_t i : {0, 2, 4, 6, 8}) {
        EXPECT_GE(results[i].timing.samples.size(), 3u);
        EXPECT_GT(results[i].compile_seconds, 0);
        EXPECT_GT(results[i].prepare_seconds, 0); // building the pipeline takes some time
        EXPECT_LE(results[i].timing.min_seconds, results[i].timing.median_seconds);
    }
}

// Halide's runtime errors, by what their messages say (the GPU's as Halide 14's CUDA runtime words them).
TEST(BenchmarkRunner, RuntimeErrorsAreClassifiedByTheirMessage) {
    using worker::runtime_error_status;
    EXPECT_EQ(runtime_error_status("Error: Out of memory (halide_malloc returned nullptr)"), JobStatus::OutOfMemory);
    EXPECT_EQ(runtime_error_status("CUDA: cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY"), JobStatus::OutOfMemory);
    EXPECT_EQ(runtime_error_status("CUDA: cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
              JobStatus::LaunchFailure);
    EXPECT_EQ(runtime_error_status("CUDA: cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS"),
              JobStatus::LaunchFailure);
    EXPECT_EQ(runtime_error_status("CUDA: cuCtxSynchronize failed: Illegal instruction or Halide assertion failure "
                                   "inside kernel"),
              JobStatus::LaunchFailure);
    EXPECT_EQ(runtime_error_status("CUDA: cuCtxSynchronize failed: CUDA_ERROR_LAUNCH_TIMEOUT"), JobStatus::Timeout);
    EXPECT_EQ(runtime_error_status("Input buffer b0 is accessed at -1, which is before the min (0)"),
              JobStatus::RuntimeError);
    EXPECT_STREQ(status_name(JobStatus::LaunchFailure), "launch_failure");
}

TEST(BenchmarkRunner, CompileTimeoutKillsTheWorker) {
    RunnerOptions o = fast_options();
    o.compile_timeout_seconds = 1;
    std::vector<BenchmarkJob> jobs = {make_job("slow_prepare",
                                               []() {
                                                   ::sleep(30);
                                                   return PreparedJob{};
                                               }),
                                      simple_job("ok")};
    const std::vector<JobResult> results = run_jobs(jobs, o);
    EXPECT_EQ(results[0].status, JobStatus::Timeout);
    EXPECT_EQ(results[0].message, "compile timed out after 1 s");
    EXPECT_EQ(results[1].status, JobStatus::Ok) << results[1].message;
}

extern "C" int schedforge_test_sleep_ms(int ms) {
    ::usleep(useconds_t(ms) * 1000);
    return ms;
}

TEST(BenchmarkRunner, TimingOfAKnownDurationIsAccurate) {
    // An extern stage that sleeps 20 ms per run: min and median within a few ms of 20 ms.
    std::vector<BenchmarkJob> jobs = {make_job("sleep_20ms", []() {
        Func f("f");
        f() = Internal::Call::make(Int(32), "schedforge_test_sleep_ms", {Expr(20)}, Internal::Call::Extern);
        Pipeline p(f);
        p.set_jit_externs({{"schedforge_test_sleep_ms", JITExtern(schedforge_test_sleep_ms)}});
        return PreparedJob{p, Buffer<int>::make_scalar()};
    })};
    RunnerOptions o = fast_options();
    o.timing.min_samples = 5;
    o.timing.max_seconds = 1;
    o.timing.threads = 1;
    const JobResult r = run_jobs(jobs, o)[0];
    ASSERT_EQ(r.status, JobStatus::Ok) << r.message;
    EXPECT_GE(r.timing.samples.size(), 5u);
    EXPECT_EQ(r.timing.threads, 1);
    EXPECT_NEAR(r.timing.min_seconds, 0.020, 0.004);
    EXPECT_NEAR(r.timing.median_seconds, 0.020, 0.006);
}

TEST(BenchmarkRunner, OutputsAreCheckedAgainstAReference) {
    std::vector<BenchmarkJob> first = {simple_job("reference")};
    first[0].return_output = true;
    const JobResult ref = run_jobs(first, fast_options())[0];
    ASSERT_EQ(ref.status, JobStatus::Ok) << ref.message;
    ASSERT_TRUE(ref.output.has_value());
    EXPECT_EQ(Buffer<int>(*ref.output)(7), 14);

    std::vector<BenchmarkJob> jobs = {simple_job("same_algorithm_other_schedule", 0, /*tiled=*/true),
                                      simple_job("different_algorithm", 1)};
    for (BenchmarkJob &j : jobs) j.reference = ref.output;
    const std::vector<JobResult> results = run_jobs(jobs, fast_options());
    EXPECT_EQ(results[0].status, JobStatus::Ok) << results[0].message;
    EXPECT_EQ(results[1].status, JobStatus::WrongOutput);
    EXPECT_NE(results[1].message.find("1000 of 1000 values differ"), std::string::npos) << results[1].message;
}

TEST(BenchmarkRunner, ManyJobsInParallelKeepTheirOrder) {
    std::vector<BenchmarkJob> jobs;
    for (int i = 0; i < 6; i++) {
        jobs.push_back(simple_job("job" + std::to_string(i), i));
        jobs.back().return_output = true;
    }
    RunnerOptions o = fast_options();
    o.parallel_compiles = 3;
    const std::vector<JobResult> results = run_jobs(jobs, o);
    for (int i = 0; i < 6; i++) {
        ASSERT_EQ(results[size_t(i)].status, JobStatus::Ok) << results[size_t(i)].message;
        EXPECT_EQ(results[size_t(i)].name, "job" + std::to_string(i));
        EXPECT_EQ(Buffer<int>(*results[size_t(i)].output)(10), 20 + i);
    }
}

TEST(BenchmarkRunner, BadOptionsAreUserErrors) {
    RunnerOptions o;
    o.timing.min_samples = 0;
    EXPECT_THROW(validate(o), std::runtime_error);
    o = RunnerOptions();
    o.target = "not-a-target";
    EXPECT_THROW(validate(o), std::runtime_error);
    o = RunnerOptions();
    o.run_timeout_seconds = 0;
    EXPECT_THROW(validate(o), std::runtime_error);
    o = RunnerOptions();
    o.timing.min_sampling_seconds = -1;
    EXPECT_THROW(validate(o), std::runtime_error);
}

// A job's payload reaches the parent even when the worker then crashes; a stop request cancels
// the jobs not yet started while the started ones finish.
TEST(BenchmarkRunner, PayloadsArriveEvenWhenTheJobThenCrashes) {
    std::vector<BenchmarkJob> jobs;
    for (int i = 0; i < 3; i++) {
        BenchmarkJob job = simple_job("job" + std::to_string(i), i);
        job.prepare = [inner = job.prepare, i]() {
            PreparedJob p = inner();
            p.payload = "payload " + std::to_string(i) + std::string(1, '\0') + "binary";
            if (i == 1) p.before_compile = []() { std::raise(SIGSEGV); };
            return p;
        };
        jobs.push_back(job);
    }
    const std::vector<JobResult> r = run_jobs(jobs, fast_options());
    ASSERT_EQ(r.size(), 3u);
    for (int i = 0; i < 3; i++) {
        EXPECT_EQ(r[size_t(i)].payload, "payload " + std::to_string(i) + std::string(1, '\0') + "binary");
    }
    EXPECT_EQ(r[0].status, JobStatus::Ok);
    EXPECT_EQ(r[1].status, JobStatus::Crash);
    EXPECT_NE(r[1].message.find("SIGSEGV"), std::string::npos) << r[1].message;
    EXPECT_EQ(r[2].status, JobStatus::Ok);
    EXPECT_GT(r[0].benchmark_seconds, 0);
}

TEST(BenchmarkRunner, StopCancelsJobsNotYetStarted) {
    std::vector<BenchmarkJob> jobs;
    for (int i = 0; i < 6; i++) jobs.push_back(simple_job("job" + std::to_string(i), i));
    RunnerOptions o = fast_options();
    o.parallel_compiles = 1;
    std::atomic<bool> stop{false};
    int finished = 0;
    const std::vector<JobResult> r = run_jobs(
        jobs, o,
        [&](size_t, JobResult &) {
            if (++finished == 2) stop = true;
        },
        &stop);
    EXPECT_EQ(finished, 2);
    EXPECT_EQ(r[0].status, JobStatus::Ok);
    EXPECT_EQ(r[1].status, JobStatus::Ok);
    for (size_t i = 2; i < r.size(); i++) EXPECT_EQ(r[i].status, JobStatus::Cancelled) << i;
}

// Each run of a logged job appends its id to this file (the workers are forked from this
// process, so they see the path).
char run_log[256];

extern "C" int schedforge_test_log_run(int id) {
    if (FILE *f = std::fopen(run_log, "a")) {
        std::fprintf(f, "%d\n", id);
        std::fclose(f);
    }
    return id;
}

BenchmarkJob logged_job(int id) {
    return make_job("logged" + std::to_string(id), [id]() {
        Func f("f");
        f() = Internal::Call::make(Int(32), "schedforge_test_log_run", {Expr(id)}, Internal::Call::Extern);
        Pipeline p(f);
        p.set_jit_externs({{"schedforge_test_log_run", JITExtern(schedforge_test_log_run)}});
        return PreparedJob{p, Buffer<int>::make_scalar()};
    });
}

// The job ids of the log's runs, with repeats of one id collapsed: the order of the turns.
std::vector<int> turns() {
    std::vector<int> order;
    FILE *f = std::fopen(run_log, "r");
    for (int id; f && std::fscanf(f, "%d", &id) == 1;) {
        if (order.empty() || order.back() != id) order.push_back(id);
    }
    if (f) std::fclose(f);
    return order;
}

// A group's jobs all compile, then take their timing rounds in turn; a job alone takes its own
// rounds one after another; a failing member leaves the others their rounds.
TEST(BenchmarkRunner, AGroupTakesItsTimingRoundsInTurn) {
    std::snprintf(run_log, sizeof(run_log), "%s/schedforge_runs_%d.log", ::testing::TempDir().c_str(), int(getpid()));
    std::remove(run_log);
    std::vector<BenchmarkJob> jobs;
    for (int id = 0; id < 3; id++) jobs.push_back(logged_job(id));
    jobs.push_back(make_job("fails", []() -> PreparedJob { throw std::runtime_error("no such schedule"); }));
    for (BenchmarkJob &j : jobs) j.group = 7;
    jobs.push_back(logged_job(4)); // alone
    RunnerOptions o = fast_options();
    o.parallel_compiles = 2;
    o.timing.rounds = 3;
    o.timing.min_samples = o.timing.max_samples = 6; // two per round
    o.timing.min_sampling_seconds = 0;
    o.timing.warmup_runs = 0;
    const std::vector<JobResult> r = run_jobs(jobs, o);
    for (int i : {0, 1, 2, 4}) {
        ASSERT_EQ(r[size_t(i)].status, JobStatus::Ok) << r[size_t(i)].message;
        EXPECT_EQ(r[size_t(i)].timing.round_sizes.size(), 3u) << i;
        EXPECT_EQ(r[size_t(i)].timing.samples.size(), 6u) << i;
        EXPECT_GE(r[size_t(i)].timing.label_seconds, r[size_t(i)].timing.min_seconds);
    }
    EXPECT_EQ(r[3].status, JobStatus::CompileError);
    // The job alone takes its rounds in one turn, before the group's or after them (it is timed
    // first when it compiles before the group's last member: that compile is stopped meanwhile).
    std::vector<int> order = turns();
    const auto alone = std::find(order.begin(), order.end(), 4);
    ASSERT_NE(alone, order.end());
    EXPECT_TRUE(alone == order.begin() || alone + 1 == order.end());
    order.erase(alone);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1, 2}));
    std::remove(run_log);
}

// Each run of a pid-logged job appends its id and its process's pid to this file.
char pid_log[256];

extern "C" int schedforge_test_log_pid(int id) {
    if (FILE *f = std::fopen(pid_log, "a")) {
        std::fprintf(f, "%d %d\n", id, int(getpid()));
        std::fclose(f);
    }
    return id;
}

// The processes that ran the timed code: each round in one of its own, or all in the worker.
TEST(BenchmarkRunner, EachTimingRoundRunsInAProcessOfItsOwn) {
    std::snprintf(pid_log, sizeof(pid_log), "%s/schedforge_pids_%d.log", ::testing::TempDir().c_str(), int(getpid()));
    for (const bool fresh : {true, false}) {
        std::remove(pid_log);
        std::vector<BenchmarkJob> jobs;
        jobs.push_back(make_job("pids", []() {
            Func f("f");
            f() = Internal::Call::make(Int(32), "schedforge_test_log_pid", {Expr(5)}, Internal::Call::Extern);
            Pipeline p(f);
            p.set_jit_externs({{"schedforge_test_log_pid", JITExtern(schedforge_test_log_pid)}});
            return PreparedJob{p, Buffer<int>::make_scalar()};
        }));
        Buffer<int> five = Buffer<int>::make_scalar();
        five() = 5;
        jobs[0].reference = five; // what the rounds' processes computed reaches the output check
        RunnerOptions o = fast_options();
        o.timing.rounds = 3;
        o.timing.min_samples = o.timing.max_samples = 6; // two per round
        o.timing.min_sampling_seconds = 0;
        o.timing.warmup_runs = 0;
        o.timing.max_cpu_wait = 0; // no sample retaken under load (ctest's others): exactly six runs
        o.timing.fresh_processes = fresh;
        const std::vector<JobResult> r = run_jobs(jobs, o);
        ASSERT_EQ(r[0].status, JobStatus::Ok) << r[0].message;
        std::vector<int> pids;
        FILE *f = std::fopen(pid_log, "r");
        for (int id, pid; f && std::fscanf(f, "%d %d", &id, &pid) == 2;) pids.push_back(pid);
        if (f) std::fclose(f);
        ASSERT_EQ(pids.size(), 6u);
        EXPECT_EQ(std::count(pids.begin(), pids.end(), int(getpid())), 0);
        std::sort(pids.begin(), pids.end());
        const auto distinct = std::unique(pids.begin(), pids.end()) - pids.begin();
        EXPECT_EQ(distinct, fresh ? 3 : 1) << (fresh ? "fresh processes" : "one worker");
    }
    std::remove(pid_log);
}

// A compute_root intermediate of 4 MiB, allocated from glibc's heap as timed code allocates:
// in a process's first run glibc maps it afresh (and raises its mmap threshold to its size), in
// the second it comes from the arena, whose new pages fault in, and from then on it reuses those
// pages. Each sample counts the process's page faults: after one warm-up run each round's first
// sample faults the block's 1,024 pages in again; after the default warm-up none does.
TEST(BenchmarkRunner, SamplesComeAfterTheWarmUpRunsThatSettleTheHeap) {
    std::vector<BenchmarkJob> jobs;
    jobs.push_back(make_job("root_intermediate", []() {
        Func g("g"), f("f");
        Var x("x"), y("y");
        g(x, y) = x + y;
        f(x, y) = g(x, y) * 2;
        g.compute_root();
        return PreparedJob{Pipeline(f), Buffer<int>(1024, 1024)};
    }));
    for (const bool by_default : {false, true}) {
        const int warmups = by_default ? TimingProtocol().warmup_runs : 1;
        RunnerOptions o = fast_options();
        o.timing.rounds = 2;
        o.timing.min_samples = o.timing.max_samples = 4; // two per round
        o.timing.min_sampling_seconds = 0;
        o.timing.max_cpu_wait = 0;
        o.timing.warmup_runs = warmups;
        const std::vector<JobResult> r = run_jobs(jobs, o);
        ASSERT_EQ(r[0].status, JobStatus::Ok) << r[0].message;
        const std::vector<double> &faults = r[0].timing.page_faults;
        ASSERT_EQ(faults.size(), 4u);
        for (size_t i = 0; i < faults.size(); i++) {
            const bool first_of_round = i % 2 == 0;
            if (!by_default && first_of_round) {
                EXPECT_GT(faults[i], 900) << "sample " << i << " after one warm-up run";
            } else {
                EXPECT_LT(faults[i], 100) << "sample " << i << " after " << warmups << " warm-up runs";
            }
        }
    }
}

// A launcher may bind a rank to one core (Open MPI does when it starts two). Under the machine
// lock, which gives a timed job the machine to itself, the job runs on every CPU with a thread
// per CPU, as in a one-process run; without the lock, on the CPUs the process may use. (On a
// one-CPU machine both runs have the one CPU: the thread counts are still checked.)
TEST(BenchmarkRunner, UnderTheMachineLockJobsRunOnTheWholeMachineWhateverTheProcessIsBoundTo) {
    cpu_set_t all;
    ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
    int first = 0;
    while (!CPU_ISSET(first, &all)) first++;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    const BenchmarkJob job = make_job("cpus", []() {
        PreparedJob p = simple_job("").prepare();
        cpu_set_t mine;
        sched_getaffinity(0, sizeof mine, &mine);
        p.payload = std::to_string(CPU_COUNT(&mine));
        return p;
    });
    RunnerOptions locked = fast_options();
    const std::filesystem::path dir = testing::scratch("runner_machine_lock");
    std::filesystem::create_directories(dir);
    locked.machine_lock = (dir / "timing.lock").string();

    std::vector<JobResult> bound, shared;
    {
        ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0); // as mpirun binds a rank
        struct Unbind { // the tests after this one run on every CPU again, whatever happens here
            const cpu_set_t &all;
            ~Unbind() { sched_setaffinity(0, sizeof all, &all); }
        } unbind{all};
        bound = run_jobs({job}, fast_options());
        shared = run_jobs({job}, locked);
    }

    ASSERT_EQ(bound[0].status, JobStatus::Ok) << bound[0].message;
    EXPECT_EQ(bound[0].payload, "1");
    EXPECT_EQ(bound[0].timing.threads, 1);
    ASSERT_EQ(shared[0].status, JobStatus::Ok) << shared[0].message;
    EXPECT_GE(std::stoi(shared[0].payload), CPU_COUNT(&all));
    EXPECT_EQ(shared[0].timing.threads, std::stoi(shared[0].payload));
}

// Exclusive timing stops compiles in flight instead of waiting for them: a job ready to be timed
// is timed while another job is still preparing (that one is stopped meanwhile, and its seconds
// count only the time it ran).
TEST(BenchmarkRunner, AJobReadyToBeTimedStopsCompilesInsteadOfWaitingForThem) {
    const std::string marker = ::testing::TempDir() + "/schedforge_prepared_" + std::to_string(getpid());
    std::remove(marker.c_str());
    std::vector<BenchmarkJob> jobs;
    jobs.push_back(simple_job("quick"));
    jobs.push_back(make_job("slow_search", [marker]() {
        // Three seconds of CPU (time stopped does not count), then a mark that it got there.
        timespec t{};
        do {
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        } while (t.tv_sec < 3);
        std::fclose(std::fopen(marker.c_str(), "w"));
        Func f("f");
        Var x("x");
        f(x) = x;
        return PreparedJob{Pipeline(f), Buffer<int>(100)};
    }));
    RunnerOptions o = fast_options();
    o.parallel_compiles = 2;
    o.timing.min_sampling_seconds = o.timing.max_seconds = 1; // "quick" is timed for a second
    o.timing.max_samples = 1 << 30;
    bool quick_before_slow = false;
    const auto start = std::chrono::steady_clock::now();
    const std::vector<JobResult> r = run_jobs(jobs, o, [&](size_t job, JobResult &) {
        if (job == 0) quick_before_slow = ::access(marker.c_str(), F_OK) != 0;
    });
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::remove(marker.c_str());
    ASSERT_EQ(r[0].status, JobStatus::Ok) << r[0].message;
    ASSERT_EQ(r[1].status, JobStatus::Ok) << r[1].message;
    EXPECT_TRUE(quick_before_slow) << "the quick job waited for the slow one's search";
    EXPECT_GE(r[0].benchmark_seconds, 1.0);
    // Its prepare and compile, the quick job's timing (while it was stopped) and its own timing
    // fit in the run's wall time: the stopped time is not counted as its own.
    EXPECT_GE(r[1].prepare_seconds, 2.9);
    EXPECT_LE(r[1].prepare_seconds + r[1].compile_seconds + r[0].benchmark_seconds + r[1].benchmark_seconds,
              wall + 0.5);
}

} // namespace
} // namespace schedforge::runner
