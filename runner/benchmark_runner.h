// The benchmark runner: compiles and times Halide pipelines robustly, in isolated worker processes.
//
// Randomly scheduled code can crash, hang or exhaust memory, so no job's code runs in the caller.
// A job reaches its worker in one of two ways:
//  - a `prepare` closure: the runner forks a worker for the job from the (single-threaded) caller,
//    and the child builds and schedules the pipeline;
//  - described as data (`describe`): the runner calls describe() on threads of its own, many at
//    once (a search, as in generate-dataset), and hands the description (a job kind and its bytes)
//    to a pool of worker processes started by exec of a worker program (runner/job_worker.h),
//    which build the pipeline by that kind. Pooled workers live across jobs and are replaced
//    when one crashes, times out or runs out of memory (and after kJobsPerWorker jobs). Since the
//    caller forks nothing, it may run threads; the searches are the flow graph's first stage
//    (runner/describe_graph.h).
// Either way, the worker JIT-compiles the pipeline, then waits for the runner's go-ahead before
// timing it, so that the runner can run compiles in parallel but benchmarks one at a time with
// nothing compiling or searching beside them: compiles in flight when a job's turn comes are
// stopped (SIGSTOP) and searches wait at their next pause point, until no job is timed or ready,
// so no core idles while they finish (their prepare and compile seconds and timeouts count only
// the time they ran). With timing rounds, the workers of a group of jobs (a pipeline's schedules)
// wait together and take turns: one round each, then the next round (timing.h); on a CPU target
// each round runs in a child forked from the worker (round_process.h). The runner enforces
// compile and run timeouts (SIGKILL) and reads a crash from the worker's wait status; a memory
// limit (RLIMIT_AS) turns a blow-up into an out-of-memory failure. A failed job is reported with
// its reason and the next job runs.
//
// Constraint for `prepare` jobs: the calling process must not have run JIT-compiled Halide code
// or started threads before run_jobs(): fork() copies only the calling thread, so a thread pool
// (Halide's or TBB's) in the parent would be a dead husk in the child. (Compiling is fine:
// run_jobs() compiles a trivial pipeline first so that workers inherit Halide's JIT runtime,
// built once.) One run's jobs are all of one way.
#pragma once

#include "runner/output_check.h"
#include "runner/timing.h"

#include <Halide.h>

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace schedforge::runner {

// Cancelled: never started, because the caller asked run_jobs() to stop. LaunchFailure: a GPU
// kernel did not launch or faulted while it ran (CUDA's launch, address and trap errors: the
// device's context is lost with it, so the worker is not reused). A device's out-of-memory is
// OutOfMemory, a kernel stopped by the driver's watchdog a Timeout.
enum class JobStatus {
    Ok,
    CompileError,
    RuntimeError,
    Crash,
    Timeout,
    OutOfMemory,
    WrongOutput,
    Cancelled,
    LaunchFailure
};
const char *status_name(JobStatus s); // "ok", "compile_error", ...

// What a job's prepare() returns, in the worker: the scheduled pipeline and a buffer of the
// output's type and shape to realize into.
struct PreparedJob {
    PreparedJob() = default;
    PreparedJob(Halide::Pipeline p, Halide::Buffer<> o) : pipeline(std::move(p)), output(std::move(o)) {}

    Halide::Pipeline pipeline;
    Halide::Buffer<> output;
    // Bytes for the parent (e.g. the features and source of a searched schedule), sent as soon
    // as prepare() returns, so that they arrive even when compiling or running then fails.
    std::string payload;
    // Runs in the worker after the payload is sent, before compiling (tests inject faults here).
    std::function<void()> before_compile;
};

// A job described as data, for a pooled worker: the name of a job kind the worker program knows
// (runner/job_worker.h) and that kind's bytes; and the payload to report as the job's.
struct JobSpec {
    std::string kind;
    std::string data;
    std::string payload;
};

struct BenchmarkJob {
    std::string name;
    // Runs in a forked worker: build the algorithm and apply the schedule (errors here are
    // compile errors, crashes here are crashes).
    std::function<PreparedJob()> prepare;
    // Or: runs in the calling process, on one of the runner's threads, concurrently with other
    // jobs' describes (and must be safe so); its exceptions are the job's failure as prepare's
    // are. Pause points (common/pause_gate.h) let the runner stop it while a job is timed.
    std::function<JobSpec()> describe;
    // If set, the worker compares its output with this one (see output_check.h) and reports
    // WrongOutput when they differ.
    std::optional<Halide::Buffer<>> reference;
    // Send the output back (e.g. to serve as another job's reference).
    bool return_output = false;
    // Consecutive jobs with the same group (>= 0) are timed together: all compiled first, then
    // their timing rounds (TimingProtocol::rounds) interleaved, round by round (-1: alone).
    int64_t group = -1;
};

struct JobResult {
    std::string name;
    JobStatus status = JobStatus::Crash;
    std::string message;        // why it failed; when ok, empty or a note on its timing (contention)
    double prepare_seconds = 0; // describe(), or the worker's start, and prepare(): building and scheduling (a search)
    double compile_seconds = 0; // JIT compilation
    double benchmark_seconds = 0; // the whole timing protocol, warm-up included
    std::string payload;          // PreparedJob::payload (empty if prepare() did not return)
    TimingResult timing;          // samples, min, median, thread count
    std::optional<Halide::Buffer<>> output;
    int worker = 0; // the pid of the worker process that ran it (0: none did)
};

struct RunnerOptions {
    int parallel_compiles = 0;       // concurrent workers compiling; 0: one per core it may use
    bool exclusive_benchmark = true; // no compile runs while a job is timed (they are stopped)
    // Processes of one run that share this machine (MPI ranks): with parallel_compiles 0, each
    // compiles on its share of the cores.
    int processes_on_machine = 1;
    // Where processes sharing this machine take turns to time (runner/machine_lock.h: no job is
    // timed while another process compiles or times); empty: none. Needs exclusive_benchmark.
    // Its workers run on every CPU of the machine, whatever core a launcher bound the process to.
    std::string machine_lock;
    double compile_timeout_seconds = 600;
    double run_timeout_seconds = 60;                // for the whole timing protocol of one job
    int64_t memory_limit_bytes = int64_t(16) << 30; // RLIMIT_AS per worker; 0: none (GPU targets: none)
    // Halide target string for JIT compiles. With a GPU (host-cuda-...), a run ends when the device
    // is done; the inputs are copied to it once, by the warm-up, and the output back after the timing.
    std::string target = "host";
    // Integer outputs may differ from the reference by this much. Without Halide's StrictFloat
    // target feature, fast-math can move a float that becomes an integer by one.
    int64_t integer_tolerance = 0;
    // Where workers' stdout and stderr go (autoschedulers and Halide print there): appended to
    // this file; empty: inherited from the caller.
    std::string worker_log;
    // The program pooled workers run (described jobs); empty: runner::worker_program()'s default.
    std::string worker_program;
    TimingProtocol timing;
};

// Checks options; throws UserError naming the bad field.
void validate(const RunnerOptions &options);

// Jobs a pooled worker runs before it is replaced: whatever a job leaves behind in the process
// (the allocator's heap, Halide's JIT caches) stays bounded.
constexpr int kJobsPerWorker = 64;

// Runs every job (in worker processes) and returns their results in job order. `on_done`, if
// given, is called in the caller's process as each job finishes (e.g. for a progress bar, or to
// take the result's output and payload away early). Once `*stop` turns true (e.g. on Ctrl-C), no
// further job starts: those running finish and the rest are reported Cancelled. Workers ignore
// SIGINT (a terminal's Ctrl-C reaches the whole process group) and die with their parent.
std::vector<JobResult> run_jobs(const std::vector<BenchmarkJob> &jobs, const RunnerOptions &options,
                                const std::function<void(size_t job, JobResult &)> &on_done = {},
                                const std::atomic<bool> *stop = nullptr);

} // namespace schedforge::runner
