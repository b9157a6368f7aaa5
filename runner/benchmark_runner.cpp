#include "runner/benchmark_runner.h"
#include "featurize/codegen_guard.h"
#include "featurize/loop_nest.h"
#include "runner/host_target.h"
#include "runner/machine_lock.h"
#include "runner/round_process.h"
#include "runner/system_allocator.h"

#include "common/errors.h"
#include "common/wire.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <sched.h>
#include <set>
#include <string>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <tuple>
#include <unistd.h>

namespace schedforge::runner {

const char *status_name(JobStatus s) {
    switch (s) {
    case JobStatus::Ok: return "ok";
    case JobStatus::CompileError: return "compile_error";
    case JobStatus::RuntimeError: return "runtime_error";
    case JobStatus::Crash: return "crash";
    case JobStatus::Timeout: return "timeout";
    case JobStatus::OutOfMemory: return "oom";
    case JobStatus::WrongOutput: return "wrong_output";
    case JobStatus::Cancelled: return "cancelled";
    }
    return "?";
}

void validate(const RunnerOptions &o) {
    auto fail = [](const std::string &m) { throw UserError("benchmark runner: " + m); };
    if (o.parallel_compiles < 0) fail("parallel_compiles must not be negative");
    if (!(o.compile_timeout_seconds > 0)) fail("compile_timeout_seconds must be positive");
    if (!(o.run_timeout_seconds > 0)) fail("run_timeout_seconds must be positive");
    if (o.memory_limit_bytes < 0) fail("memory_limit_bytes must not be negative");
    if (o.integer_tolerance < 0) fail("integer_tolerance must not be negative");
    if (o.timing.warmup_runs < 0) fail("timing.warmup_runs must not be negative");
    if (o.timing.min_samples < 1) fail("timing.min_samples must be at least 1");
    if (o.timing.max_samples < o.timing.min_samples) fail("timing.max_samples must be at least timing.min_samples");
    if (!(o.timing.accuracy >= 0)) fail("timing.accuracy must not be negative");
    if (!(o.timing.max_seconds >= 0)) fail("timing.max_seconds must not be negative");
    if (!(o.timing.min_sampling_seconds >= 0)) fail("timing.min_sampling_seconds must not be negative");
    if (o.timing.threads < 0) fail("timing.threads must not be negative");
    if (!(o.timing.max_cpu_wait >= 0)) fail("timing.max_cpu_wait must not be negative");
    if (!(o.timing.contended_seconds >= 0)) fail("timing.contended_seconds must not be negative");
    if (o.timing.rounds < 1) fail("timing.rounds must be at least 1");
    if (o.processes_on_machine < 1) fail("processes_on_machine must be at least 1");
    if (!o.machine_lock.empty() && !o.exclusive_benchmark) fail("a machine lock needs exclusive_benchmark");
    if (!Halide::Target::validate_target_string(o.target)) fail("unknown Halide target '" + o.target + "'");
}

namespace {

using common::ByteReader;
using common::ByteWriter;

using Clock = std::chrono::steady_clock;

// ---- the wire format between worker and parent ------------------------------------------------
// Each message is a tag byte, a 64-bit payload length, and the payload. Tags:
//   'P' the job's payload, 'C' compiled (payload: prepare seconds, compile seconds), 'S' a round
//   of timing done (more to come; empty), 'R' result, 'E' failure (status byte + message). The
//   parent sends one go byte per round.

void send(int fd, char tag, const std::string &payload) {
    std::string frame(1, tag);
    const uint64_t n = payload.size();
    frame.append(reinterpret_cast<const char *>(&n), sizeof(n));
    frame += payload;
    common::write_all(fd, frame.data(), frame.size());
}

// Buffers travel as type (code, bits), dimensions, extents and dense bytes.
void put_buffer(ByteWriter &w, const Halide::Buffer<> &b) {
    const Halide::Buffer<> dense = b.copy();
    w.put<uint8_t>(uint8_t(dense.type().code()));
    w.put<uint8_t>(uint8_t(dense.type().bits()));
    w.put<int32_t>(dense.dimensions());
    for (int d = 0; d < dense.dimensions(); d++) w.put<int32_t>(dense.dim(d).extent());
    w.put_bytes(dense.data(), dense.size_in_bytes());
}

Halide::Buffer<> get_buffer(ByteReader &r) {
    const auto code = r.get<uint8_t>();
    const auto bits = r.get<uint8_t>();
    const auto dims = r.get<int32_t>();
    std::vector<int> sizes;
    for (int d = 0; d < dims && r.ok(); d++) sizes.push_back(r.get<int32_t>());
    const std::string bytes = r.get_string();
    if (!r.ok()) return {};
    Halide::Buffer<> b(Halide::Type(halide_type_code_t(code), bits, 1), sizes);
    if (b.size_in_bytes() != bytes.size()) return {};
    std::memcpy(b.data(), bytes.data(), bytes.size());
    return b;
}

int host_threads() { return int(std::max(1u, std::thread::hardware_concurrency())); }

// CPUs this process may run on: its affinity mask, which a launcher may have narrowed (Open MPI
// binds each of two ranks to a core of its own; `taskset`).
int allowed_cpus() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return host_threads();
    return std::max(1, CPU_COUNT(&set));
}

// Lets this process run on every CPU of the machine that its cgroup permits (the kernel drops
// the rest of the mask) and returns how many that is. Under the machine lock a timed job has
// the machine to itself, as in a one-process run; left bound to its rank's core, it ran its
// threads on one core: two Open MPI ranks labelled schedules 1.8x slower than one process.
int widen_to_machine() {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set); // on failure the narrower mask stays: counted below
    return allowed_cpus();
}

// ---- the worker ---------------------------------------------------------------------------------

// A job's failure, thrown inside the worker (and its timing rounds' processes) to end the job.
struct JobFailure {
    JobStatus status;
    std::string message;
};

// The failure that the exception in flight means; `compiled`: the pipeline had compiled.
JobFailure failure_of(const std::exception_ptr &e, bool compiled) {
    const JobStatus error = compiled ? JobStatus::RuntimeError : JobStatus::CompileError;
    try {
        std::rethrow_exception(e);
    } catch (const JobFailure &f) {
        return f;
    } catch (const std::bad_alloc &) {
        return {JobStatus::OutOfMemory, "out of memory (std::bad_alloc)"};
    } catch (const Halide::RuntimeError &e) {
        const std::string m = e.what();
        const bool oom = m.find("Out of memory") != std::string::npos || m.find("out of memory") != std::string::npos ||
                         m.find("CUDA_ERROR_OUT_OF_MEMORY") != std::string::npos; // the device's memory
        return {oom ? JobStatus::OutOfMemory : JobStatus::RuntimeError, m};
    } catch (const Halide::Error &e) {
        return {error, e.what()}; // CompileError, InternalError: a schedule or algorithm Halide rejects
    } catch (const std::exception &e) {
        return {error, e.what()};
    } catch (...) {
        return {error, "unknown exception"};
    }
}

// A failure on the wire: the worker's 'E' message, and a timing round's failed result.
void put_failure(ByteWriter &w, const JobFailure &f) {
    w.put<uint8_t>(uint8_t(f.status));
    w.put_string(f.message);
}

JobFailure get_failure(ByteReader &r) {
    const auto status = JobStatus(r.get<uint8_t>());
    return {status, r.get_string()};
}

void put_timing(ByteWriter &w, const TimingResult &t) {
    w.put<int32_t>(t.threads);
    w.put_vector(t.samples);
    w.put<int32_t>(t.retaken);
    w.put<uint8_t>(t.contended ? 1 : 0);
    w.put<double>(t.cpu_wait);
    w.put_vector(t.round_sizes);
    w.put_vector(t.page_faults);
}

TimingResult get_timing(ByteReader &r) {
    TimingResult t;
    t.threads = r.get<int32_t>();
    t.samples = r.get_vector<double>();
    t.retaken = r.get<int32_t>();
    t.contended = r.get<uint8_t>() != 0;
    t.cpu_wait = r.get<double>();
    t.round_sizes = r.get_vector<int>();
    t.page_faults = r.get_vector<double>();
    summarize(&t);
    return t;
}

// One timing round in a process of its own (round_process.h). The worker ends as the round's
// process ended when that was not by returning (the same signal, or exit status), so that the
// parent reports a crash in a round as it would report one in the worker.
TimingResult time_round_in_child(const TimingProtocol &protocol, int threads, const std::function<void()> &run) {
    const ChildOutcome c = run_in_child([&]() {
        claim_main_arena(); // the child's one thread, before the pool's
        ByteWriter w;
        try {
            const TimingResult t = time_runs(protocol, threads, run);
            w.put<uint8_t>(1);
            put_timing(w, t);
        } catch (...) {
            w.put<uint8_t>(0);
            put_failure(w, failure_of(std::current_exception(), /*compiled=*/true));
        }
        return w.bytes();
    });
    if (c.signal != 0) {
        std::signal(c.signal, SIG_DFL);
        ::raise(c.signal);
        ::_exit(128 + c.signal); // the signal is blocked here: end as a shell reports a signal's death
    }
    if (!c.returned) ::_exit(c.exit_code);
    // Either message is checked whole, so that a truncated one never reads as a status.
    ByteReader r(c.bytes);
    if (r.get<uint8_t>() == 1) {
        TimingResult t = get_timing(r);
        if (r.ok()) return t;
    } else {
        JobFailure f = get_failure(r);
        if (r.ok()) throw f;
    }
    throw JobFailure{JobStatus::Crash, "malformed result from a timing round's process"};
}

[[noreturn]] void worker_main(const BenchmarkJob &job, const RunnerOptions &options, int result_fd, int go_fd,
                              pid_t parent) {
    std::signal(SIGINT, SIG_IGN); // the parent decides what Ctrl-C means
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1); // the parent died before prctl took effect
    if (!options.worker_log.empty()) {
        const int fd = ::open(options.worker_log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            ::dup2(fd, STDOUT_FILENO);
            ::dup2(fd, STDERR_FILENO);
            ::close(fd);
        }
    }
    // CUDA's driver reserves address space far beyond any limit on it (for unified addressing): a
    // GPU job's host memory goes unlimited.
    if (options.memory_limit_bytes > 0 && !Halide::Target(options.target).has_gpu_feature()) {
        const rlimit limit{rlim_t(options.memory_limit_bytes), rlim_t(options.memory_limit_bytes)};
        setrlimit(RLIMIT_AS, &limit);
    }
    // Before the Halide runtime starts its thread pool, whose threads inherit the mask.
    const int cpus = options.machine_lock.empty() ? allowed_cpus() : widen_to_machine();
    const int threads = options.timing.threads > 0 ? options.timing.threads : cpus;
    setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), /*overwrite=*/1);
    claim_main_arena(); // for rounds timed here (GPU jobs, rounds without processes of their own)
    bool compiled = false;
    auto fail = [&](const JobFailure &f) {
        ByteWriter w;
        put_failure(w, f);
        send(result_fd, 'E', w.bytes());
    };
    try {
        PreparedJob prepared = job.prepare();
        const auto t0 = Clock::now();
        send(result_fd, 'P', prepared.payload);
        if (prepared.before_compile) prepared.before_compile();
        const Halide::Target target = runner::runnable_here(Halide::Target(options.target));
        const bool gpu = target.has_gpu_feature();
        featurize::guard_codegen(prepared.pipeline); // every scheduler's pipelines, not only ours
        use_system_allocator(prepared.pipeline);
        prepared.pipeline.compile_jit(target);
        compiled = true;
        // When prepare and compile ended, on the machine's monotonic clock: the parent takes the
        // stops it made off each phase by their times, not by which messages it had read.
        ByteWriter c;
        c.put<int64_t>(t0.time_since_epoch().count());
        c.put<int64_t>(Clock::now().time_since_epoch().count());
        send(result_fd, 'C', c.bytes());
        const int rounds = std::max(options.timing.rounds, 1);
        TimingProtocol protocol = rounds > 1 ? round_protocol(options.timing) : options.timing;
        // Retakes never take a round into its timeout.
        protocol.contended_seconds = std::min(protocol.contended_seconds, 0.5 * options.run_timeout_seconds);
        // CUDA's driver state does not survive a fork: a GPU job's rounds share the worker.
        const bool fresh = options.timing.fresh_processes && !gpu;
        if (fresh) prepared.output = shared_buffer_like(prepared.output); // the rounds' processes write it
        const auto run = [&]() {
            prepared.pipeline.realize(prepared.output, target);
            // GPU kernels run asynchronously: a run ends when the device is done. The output
            // stays on the device, and the inputs, copied there by the first (warm-up) run, too.
            if (gpu && prepared.output.device_sync() != 0) throw std::runtime_error("device_sync failed");
        };
        std::vector<TimingResult> taken;
        double benchmark_seconds = 0;
        for (int k = 0; k < rounds; k++) {
            char go = 0;
            while (::read(go_fd, &go, 1) < 0 && errno == EINTR) {
            }
            const auto round_start = Clock::now();
            taken.push_back(fresh ? time_round_in_child(protocol, threads, run) : time_runs(protocol, threads, run));
            benchmark_seconds += std::chrono::duration<double>(Clock::now() - round_start).count();
            if (k + 1 < rounds) send(result_fd, 'S', "");
        }
        const TimingResult timing = merge_rounds(taken);
        if (gpu && prepared.output.copy_to_host() != 0) // after the timing: transfers are not timed
            throw std::runtime_error("copying the output from the GPU failed");
        ByteWriter r;
        std::string difference;
        if (job.reference) difference = compare_buffers(*job.reference, prepared.output, options.integer_tolerance);
        r.put<uint8_t>(uint8_t(difference.empty() ? JobStatus::Ok : JobStatus::WrongOutput));
        r.put_string(difference);
        r.put<double>(benchmark_seconds);
        put_timing(r, timing);
        r.put<uint8_t>(job.return_output ? 1 : 0);
        if (job.return_output) put_buffer(r, prepared.output);
        send(result_fd, 'R', r.bytes());
    } catch (...) {
        fail(failure_of(std::current_exception(), compiled));
    }
    ::_exit(0); // no atexit handlers or static destructors of the parent's state
}

// ---- the parent ---------------------------------------------------------------------------------

enum class Phase { Compiling, WaitingToRun, Running };

struct Worker {
    size_t job = 0;
    pid_t pid = -1;
    int result_fd = -1, go_fd = -1;
    Phase phase = Phase::Compiling;
    int rounds_done = 0; // rounds of timing taken
    Clock::time_point deadline;
    std::string inbox; // bytes received, not yet parsed
    bool finished = false;
    // When it was forked; whether it is stopped (SIGSTOP) while another job is timed, since when,
    // and the stops it had (taken off its prepare and compile seconds by their times).
    bool paused = false;
    Clock::time_point forked, paused_since;
    std::vector<std::pair<Clock::time_point, Clock::time_point>> pauses;
};

std::string signal_text(int sig) {
    const char *name = sigabbrev_np(sig);
    return std::string("killed by signal SIG") + (name ? name : std::to_string(sig)) + " (" + strsignal(sig) + ")";
}

class Supervisor {
public:
    Supervisor(const std::vector<BenchmarkJob> &jobs, const RunnerOptions &options,
               const std::function<void(size_t, JobResult &)> &on_done, const std::atomic<bool> *stop)
        : jobs_(jobs), options_(options), on_done_(on_done), stop_(stop), results_(jobs.size()) {
        for (size_t i = 0; i < jobs.size(); i++) {
            results_[i].name = jobs[i].name;
            results_[i].status = JobStatus::Cancelled;
            results_[i].message = "not started: stopped";
        }
        // Workers under the machine lock run on the whole machine (worker_main), the others where
        // this process may.
        const int cpus = options.machine_lock.empty() ? allowed_cpus() : host_threads();
        max_compiling_ = options.parallel_compiles > 0 ? options.parallel_compiles
                                                       : std::max(1, cpus / options.processes_on_machine);
        if (!options.machine_lock.empty()) lock_.emplace(options.machine_lock);
        group_start_.resize(jobs.size());
        group_end_.resize(jobs.size());
        for (size_t i = 0; i < jobs.size(); i++) {
            const bool joins = i > 0 && jobs[i].group >= 0 && jobs[i].group == jobs[i - 1].group;
            group_start_[i] = joins ? group_start_[i - 1] : i;
        }
        for (size_t i = jobs.size(); i-- > 0;) {
            const bool joins = i + 1 < jobs.size() && group_start_[i + 1] == group_start_[i];
            group_end_[i] = joins ? group_end_[i + 1] : i + 1;
        }
    }

    std::vector<JobResult> run() {
        while ((next_job_ < jobs_.size() && !stopping()) || !workers_.empty()) {
            release_what_is_unused();
            continue_compiles();
            launch_what_fits();
            grant_benchmark();
            wait_for_events();
            reap_timeouts();
        }
        return std::move(results_);
    }

private:
    int count(Phase p) const {
        return int(std::count_if(workers_.begin(), workers_.end(), [&](const Worker &w) { return w.phase == p; }));
    }

    bool stopping() const { return stop_ && stop_->load(); }

    // A job is timed once every job of its group has been launched and none of them compiles, so
    // that the group's rounds interleave.
    bool ready(const Worker &w) const {
        if (w.phase != Phase::WaitingToRun || (group_end_[w.job] > next_job_ && !stopping())) return false;
        return std::none_of(workers_.begin(), workers_.end(), [&](const Worker &o) {
            return o.phase == Phase::Compiling && group_start_[o.job] == group_start_[w.job];
        });
    }

    // A job is being timed, or one is ready to be.
    bool timing_or_ready() const {
        return count(Phase::Running) > 0 ||
               std::any_of(workers_.begin(), workers_.end(), [&](const Worker &w) { return ready(w); });
    }

    void launch_what_fits() {
        if (stopping()) return;
        // While a job is ready to be timed under the exclusive policy, start no new compile.
        if (options_.exclusive_benchmark && timing_or_ready()) return;
        while (next_job_ < jobs_.size() && count(Phase::Compiling) < max_compiling_) {
            if (lock_ && !lock_->try_compile()) {
                lock_waiting_ = true; // asked again soon, not after the usual second
                return;
            }
            launch(next_job_++);
        }
    }

    // The machine lock is held only while this process compiles, or times or has a job to time.
    void release_what_is_unused() {
        lock_waiting_ = false;
        if (!lock_) return;
        const bool compiling_held = lock_->held() == MachineLock::Held::Compiling;
        if (compiling_held ? count(Phase::Compiling) == 0 : !timing_or_ready()) lock_->release();
    }

    void launch(size_t job) {
        int result_pipe[2], go_pipe[2];
        if (pipe(result_pipe) != 0 || pipe(go_pipe) != 0) throw std::runtime_error("pipe failed");
        std::fflush(nullptr); // don't duplicate buffered output into the child
        const auto forked = Clock::now();
        const pid_t pid = fork();
        if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
        if (pid == 0) {
            ::close(result_pipe[0]);
            ::close(go_pipe[1]);
            for (const Worker &w : workers_) ::close(w.result_fd), ::close(w.go_fd);
            if (lock_) lock_->close_inherited();
            worker_main(jobs_[job], options_, result_pipe[1], go_pipe[0], parent_pid_);
        }
        ::close(result_pipe[1]);
        ::close(go_pipe[0]);
        Worker w;
        w.job = job;
        w.pid = pid;
        w.result_fd = result_pipe[0];
        w.go_fd = go_pipe[1];
        w.forked = forked;
        w.deadline = Clock::now() + seconds(options_.compile_timeout_seconds);
        workers_.push_back(std::move(w));
    }

    static Clock::duration seconds(double s) {
        return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
    }

    // Exclusive timing without a drain: compiles in flight when a job is ready to be timed are
    // stopped (SIGSTOP; a stopped process takes no CPU) instead of waited for, and continued once
    // no job is timed or ready (continue_compiles), so no core idles while the last compiles of a
    // round finish. A worker is stopped only while it prepares or compiles, never while timed.
    void pause_compiles() {
        for (Worker &w : workers_) {
            if (w.phase != Phase::Compiling || w.paused) continue;
            ::kill(w.pid, SIGSTOP);
            // Until it has stopped (or died: then its exit stays to be collected by finish()).
            siginfo_t info{};
            while (::waitid(P_PID, id_t(w.pid), &info, WSTOPPED | WEXITED | WNOWAIT) < 0 && errno == EINTR) {
            }
            w.paused = true;
            w.paused_since = Clock::now();
        }
    }

    // Seconds of [from, to] the worker ran: less the stops that fell in it (a worker's clock
    // readings lie outside its stops, up to the moment SIGCONT takes to land).
    static double running_seconds(const Worker &w, Clock::time_point from, Clock::time_point to) {
        Clock::duration d = to - from;
        for (const auto &[since, until] : w.pauses) {
            const auto a = std::max(since, from), b = std::min(until, to);
            if (a < b) d -= b - a;
        }
        return std::max(0.0, std::chrono::duration<double>(d).count());
    }

    void continue_worker(Worker &w) {
        if (!w.paused) return;
        ::kill(w.pid, SIGCONT);
        const auto now = Clock::now();
        w.deadline += now - w.paused_since; // its compile timeout counts only the time it ran
        w.pauses.emplace_back(w.paused_since, now);
        w.paused = false;
    }

    void continue_compiles() {
        if (timing_or_ready() ||
            std::none_of(workers_.begin(), workers_.end(), [](const Worker &w) { return w.paused; }))
            return;
        if (lock_ && !lock_->try_compile()) {
            lock_waiting_ = true; // another process waits to time: they stay stopped meanwhile
            return;
        }
        for (Worker &w : workers_) continue_worker(w);
    }

    void grant_benchmark() {
        if (count(Phase::Running) > 0) return;
        // The earliest group first; within it, round by round in job order.
        Worker *next = nullptr;
        auto key = [&](const Worker &w) { return std::make_tuple(group_start_[w.job], w.rounds_done, w.job); };
        for (Worker &w : workers_) {
            if (ready(w) && (!next || key(w) < key(*next))) next = &w;
        }
        if (!next) return;
        if (options_.exclusive_benchmark) pause_compiles();
        if (lock_ && !lock_->try_time()) {
            lock_waiting_ = true;
            return;
        }
        const char go = 'G';
        common::write_all(next->go_fd, &go, 1);
        next->phase = Phase::Running;
        next->deadline = Clock::now() + seconds(options_.run_timeout_seconds);
    }

    void wait_for_events() {
        if (workers_.empty()) {
            if (lock_waiting_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
            return;
        }
        // Workers waiting for their turn have no deadline (their compile's has passed long ago).
        auto soonest = Clock::now() + (lock_waiting_ ? std::chrono::milliseconds(10) : std::chrono::milliseconds(1000));
        for (const Worker &w : workers_) {
            if (w.phase != Phase::WaitingToRun && !w.paused) soonest = std::min(soonest, w.deadline);
        }
        const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(soonest - Clock::now()).count();
        std::vector<pollfd> fds;
        for (const Worker &w : workers_) fds.push_back(pollfd{w.result_fd, POLLIN, 0});
        const int ready = poll(fds.data(), fds.size(), int(std::clamp<int64_t>(wait + 1, 0, 1000)));
        if (ready <= 0) return;
        for (size_t i = 0; i < fds.size(); i++) {
            if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) read_from(workers_[i]);
        }
        workers_.erase(std::remove_if(workers_.begin(), workers_.end(), [](const Worker &w) { return w.finished; }),
                       workers_.end());
    }

    void read_from(Worker &w) {
        char buf[1 << 16];
        const ssize_t n = ::read(w.result_fd, buf, sizeof(buf));
        if (n > 0) {
            w.inbox.append(buf, size_t(n));
            parse(w);
            return;
        }
        if (n < 0 && errno == EINTR) return;
        // End of stream: the worker exited. If it said nothing final, its wait status says why.
        finish(w, JobStatus::Crash, "");
    }

    void parse(Worker &w) {
        while (w.inbox.size() >= 1 + sizeof(uint64_t)) {
            uint64_t n;
            std::memcpy(&n, w.inbox.data() + 1, sizeof(n));
            if (w.inbox.size() < 1 + sizeof(n) + n) return;
            const char tag = w.inbox[0];
            const std::string payload = w.inbox.substr(1 + sizeof(n), n);
            w.inbox.erase(0, 1 + sizeof(n) + n);
            ByteReader r(payload);
            JobResult &res = results_[w.job];
            if (tag == 'P') {
                res.payload = payload;
            } else if (tag == 'C') {
                continue_worker(w); // compiled before it was stopped: it waits for its turn
                const Clock::time_point prepared{Clock::duration(r.get<int64_t>())},
                    compiled{Clock::duration(r.get<int64_t>())};
                res.prepare_seconds = running_seconds(w, w.forked, prepared);
                res.compile_seconds = running_seconds(w, prepared, compiled);
                w.phase = Phase::WaitingToRun;
            } else if (tag == 'S') {
                w.rounds_done++;
                w.phase = Phase::WaitingToRun;
            } else if (tag == 'E') {
                const JobFailure f = get_failure(r);
                finish(w, f.status, f.message);
                return;
            } else if (tag == 'R') {
                const auto status = JobStatus(r.get<uint8_t>());
                const std::string message = r.get_string();
                res.benchmark_seconds = r.get<double>();
                res.timing = get_timing(r);
                if (r.get<uint8_t>()) res.output = get_buffer(r);
                std::string note = message;
                if (res.timing.contended && status == JobStatus::Ok) note = contention_note(res.timing);
                finish(w, r.ok() ? status : JobStatus::Crash, r.ok() ? note : "malformed result from worker");
                return;
            }
        }
    }

    // Records the job's outcome, then collects the worker (killing it if still alive).
    void finish(Worker &w, JobStatus status, std::string message) {
        if (w.finished) return;
        ::kill(w.pid, SIGKILL); // a no-op for a worker that already exited
        int wstatus = 0;
        while (waitpid(w.pid, &wstatus, 0) < 0 && errno == EINTR) {
        }
        if (message.empty() && status == JobStatus::Crash) {
            if (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) != SIGKILL) {
                message = signal_text(WTERMSIG(wstatus));
            } else if (WIFSIGNALED(wstatus)) {
                // SIGKILL that we did not send: the kernel's OOM killer.
                status = JobStatus::OutOfMemory;
                message = "killed by SIGKILL (out of memory?)";
            } else {
                message = "worker exited with status " + std::to_string(WEXITSTATUS(wstatus)) + " without a result";
            }
        }
        results_[w.job].status = status;
        results_[w.job].message = message;
        ::close(w.result_fd);
        ::close(w.go_fd);
        w.finished = true;
        if (on_done_) on_done_(w.job, results_[w.job]);
    }

    void reap_timeouts() {
        const auto now = Clock::now();
        for (Worker &w : workers_) {
            if (w.finished || w.paused || w.phase == Phase::WaitingToRun || now < w.deadline) continue;
            const bool compiling = w.phase == Phase::Compiling;
            char text[128];
            std::snprintf(text, sizeof(text), "%s timed out after %g s", compiling ? "compile" : "run",
                          compiling ? options_.compile_timeout_seconds : options_.run_timeout_seconds);
            finish(w, JobStatus::Timeout, text);
        }
        workers_.erase(std::remove_if(workers_.begin(), workers_.end(), [](const Worker &w) { return w.finished; }),
                       workers_.end());
    }

    const std::vector<BenchmarkJob> &jobs_;
    const RunnerOptions &options_;
    const std::function<void(size_t, JobResult &)> &on_done_;
    const std::atomic<bool> *stop_;
    const pid_t parent_pid_ = ::getpid();
    std::vector<JobResult> results_;
    std::vector<Worker> workers_;
    size_t next_job_ = 0;
    int max_compiling_ = 1;
    std::optional<MachineLock> lock_; // RunnerOptions::machine_lock
    bool lock_waiting_ = false;       // the last turn asked of it was refused
    // Each job's group as the half-open range of job indices it spans (a job alone: itself).
    std::vector<size_t> group_start_, group_end_;
};

} // namespace

// Halide builds its JIT runtime on a process's first JIT compile (~0.5 s). Compiling, not running,
// a trivial pipeline here builds it once; forked workers inherit it copy-on-write. Running JIT
// code would start Halide's thread pool, which a fork cannot carry, so nothing is run. Only the
// host's part of a GPU target is warmed: CUDA's driver state does not survive a fork, and each
// worker loads its GPU runtime itself.
void warm_jit_runtime(const Halide::Target &target) {
    Halide::Func f("schedforge_jit_warmup");
    Halide::Var x("x");
    f(x) = x;
    f.compile_jit(target);
}

std::vector<JobResult> run_jobs(const std::vector<BenchmarkJob> &jobs, const RunnerOptions &options,
                                const std::function<void(size_t, JobResult &)> &on_done,
                                const std::atomic<bool> *stop) {
    validate(options);
    static std::set<std::string> warmed;
    const Halide::Target target = runner::runnable_here(Halide::Target(options.target));
    const Halide::Target host = featurize::host_part(target);
    if (!jobs.empty() && warmed.insert(host.to_string()).second) warm_jit_runtime(host);
    return Supervisor(jobs, options, on_done, stop).run();
}

} // namespace schedforge::runner
