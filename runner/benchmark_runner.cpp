#include "runner/benchmark_runner.h"
#include "featurize/loop_nest.h"
#include "runner/describe_graph.h"
#include "runner/host_target.h"
#include "runner/job_worker.h"
#include "runner/machine_lock.h"
#include "runner/worker_side.h"

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
#include <set>
#include <spawn.h>
#include <string>
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
    case JobStatus::LaunchFailure: return "launch_failure";
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
using namespace worker;

using Clock = std::chrono::steady_clock;

// ---- the parent ---------------------------------------------------------------------------------

enum class Phase { Compiling, WaitingToRun, Running };

// A worker process and the job it runs: forked for that job, or a pooled one (started by exec,
// kept across jobs: `jobs_served` so far).
struct Worker {
    size_t job = 0;
    pid_t pid = -1;
    int result_fd = -1, go_fd = -1;
    bool pooled = false;
    int jobs_served = 0;
    double describe_seconds = 0; // the job's describe(), in the runner
    Phase phase = Phase::Compiling;
    int rounds_done = 0; // rounds of timing taken
    Clock::time_point deadline;
    std::string inbox; // bytes received, not yet parsed
    bool finished = false;
    bool reported = false; // its job ended with the worker's own 'R' or 'E': it lives, idle
    // When its job started; whether it is stopped (SIGSTOP) while another job is timed, since
    // when, and the stops it had (taken off its prepare and compile seconds by their times).
    bool paused = false;
    Clock::time_point started, paused_since;
    std::vector<std::pair<Clock::time_point, Clock::time_point>> pauses;
};

std::string signal_text(int sig) {
    const char *name = sigabbrev_np(sig);
    return std::string("killed by signal SIG") + (name ? name : std::to_string(sig)) + " (" + strsignal(sig) + ")";
}

// How far ahead of the compiles the searches of described jobs may run.
constexpr size_t kDescribeAhead = 32;

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
        // Workers under the machine lock run on the whole machine (enter_worker_process), the
        // others where this process may.
        const int cpus = options.machine_lock.empty() ? allowed_cpus() : host_threads();
        max_compiling_ = options.parallel_compiles > 0 ? options.parallel_compiles
                                                       : std::max(1, cpus / options.processes_on_machine);
        if (!options.machine_lock.empty()) lock_.emplace(options.machine_lock);
        const bool described = !jobs.empty() && bool(jobs[0].describe);
        for (const BenchmarkJob &j : jobs) {
            if (bool(j.prepare) == bool(j.describe) || bool(j.describe) != described)
                throw std::invalid_argument("benchmark runner: job '" + j.name +
                                            "' needs one of prepare or describe, as every job of its run");
        }
        if (described) {
            program_ = worker_program(options);
            describer_.emplace(jobs, max_compiling_); // searches share the compile slots (launch_what_fits)
        }
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
        // A worker that died leaves a pipe that fails to write: an error here, not our death.
        previous_sigpipe_ = std::signal(SIGPIPE, SIG_IGN);
    }

    ~Supervisor() {
        for (Worker &w : idle_) end_process(w);
        for (Worker &w : workers_) { // an exception ends the run
            if (!w.finished) end_process(w);
        }
        std::signal(SIGPIPE, previous_sigpipe_);
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

    // Starts compiles (launches) and, for described jobs, searches (describes) while there is
    // room: compiles and searches together take the compile slots (one a core), so that no core
    // runs two of them by turns (oversubscribed, bench50 took 13% more CPU for the same samples:
    // each evicts the other's caches). Jobs start compiling in order, so a long search (a
    // pipeline's beam search) holds up the compiles behind it; searches up to kDescribeAhead jobs
    // ahead keep the other slots busy meanwhile (two jobs ahead left 18% of the CPU idle on
    // bench50, against 11% for forked workers).
    void launch_what_fits() {
        if (stopping()) return;
        // While a job is ready to be timed under the exclusive policy, start no new compile.
        if (options_.exclusive_benchmark && timing_or_ready()) return;
        const size_t ahead = next_job_ + kDescribeAhead;
        for (;;) {
            const int busy = count(Phase::Compiling) + (describer_ ? describer_->in_flight() : 0);
            const bool launch_next =
                next_job_ < jobs_.size() && busy < max_compiling_ && (!describer_ || describer_->done(next_job_));
            const bool describe_next =
                describer_ && next_described_ < std::min(jobs_.size(), ahead) && busy < max_compiling_;
            if (!launch_next && !describe_next) return;
            // A search takes the machine as a compile does: under the same lock.
            if (lock_ && !lock_->try_compile()) {
                lock_waiting_ = true; // asked again soon, not after the usual second
                return;
            }
            if (launch_next) {
                launch(next_job_++);
            } else {
                describer_->submit(next_described_++);
            }
        }
    }

    // The machine lock is held only while this process compiles or searches, or times or has a
    // job to time.
    void release_what_is_unused() {
        lock_waiting_ = false;
        if (!lock_) return;
        const bool compiling_held = lock_->held() == MachineLock::Held::Compiling;
        const bool working = count(Phase::Compiling) > 0 || (describer_ && describer_->in_flight() > 0);
        if (compiling_held ? !working : !timing_or_ready()) lock_->release();
    }

    void launch(size_t job) {
        if (!describer_) {
            fork_worker(job);
            return;
        }
        DescribeGraph::Described d = describer_->take(job);
        JobResult &res = results_[job];
        res.prepare_seconds = d.seconds;
        if (d.failure) { // no worker: the search failed
            res.status = d.failure->status;
            res.message = d.failure->message;
            if (on_done_) on_done_(job, res);
            return;
        }
        res.payload = std::move(d.spec.payload);
        ByteWriter frame;
        frame.put_string(d.spec.kind);
        frame.put_string(d.spec.data);
        frame.put<uint8_t>(jobs_[job].return_output ? 1 : 0);
        frame.put<uint8_t>(jobs_[job].reference ? 1 : 0);
        if (jobs_[job].reference) put_buffer(frame, *jobs_[job].reference);
        Worker w = pooled_worker();
        if (!send(w.go_fd, 'J', frame.bytes())) { // it died while idle: one fresh try
            end_process(w);
            w = pooled_worker();
            if (!send(w.go_fd, 'J', frame.bytes())) throw std::runtime_error("a new pooled worker died at once");
        }
        w.job = job;
        w.describe_seconds = d.seconds;
        start_job(std::move(w));
    }

    // The job's clocks, and the worker among those running.
    void start_job(Worker w) {
        w.started = Clock::now();
        w.deadline = w.started + seconds(options_.compile_timeout_seconds);
        results_[w.job].worker = w.pid;
        workers_.push_back(std::move(w));
    }

    // An idle pooled worker, or a new one started by exec of the worker program.
    Worker pooled_worker() {
        if (!idle_.empty()) {
            Worker w = std::move(idle_.back());
            idle_.pop_back();
            return w;
        }
        int result_pipe[2], command_pipe[2];
        if (pipe2(result_pipe, O_CLOEXEC) != 0 || pipe2(command_pipe, O_CLOEXEC) != 0)
            throw std::runtime_error("pipe failed");
        // Only these two ends reach the program (every other descriptor of ours closes on exec).
        ::fcntl(result_pipe[1], F_SETFD, 0);
        ::fcntl(command_pipe[0], F_SETFD, 0);
        const std::string result_fd = std::to_string(result_pipe[1]), command_fd = std::to_string(command_pipe[0]),
                          parent = std::to_string(parent_pid_);
        std::vector<char *> argv{const_cast<char *>(program_.c_str()),  const_cast<char *>("--serve"),
                                 const_cast<char *>(result_fd.c_str()), const_cast<char *>(command_fd.c_str()),
                                 const_cast<char *>(parent.c_str()),    nullptr};
        std::fflush(nullptr);
        pid_t pid = -1;
        const int error = posix_spawn(&pid, program_.c_str(), nullptr, nullptr, argv.data(), environ);
        ::close(result_pipe[1]);
        ::close(command_pipe[0]);
        if (error != 0) {
            ::close(result_pipe[0]);
            ::close(command_pipe[1]);
            throw std::runtime_error("cannot start the worker program " + program_ + ": " + std::strerror(error));
        }
        Worker w;
        w.pid = pid;
        w.pooled = true;
        w.result_fd = result_pipe[0];
        w.go_fd = command_pipe[1];
        ByteWriter o;
        o.put<uint32_t>(kWireVersion);
        put_options(o, options_);
        send(w.go_fd, 'O', o.bytes()); // a failure shows when its first job is sent
        return w;
    }

    // Kills and collects a worker's process (a no-op kill if it exited); returns its wait status.
    static int end_process(Worker &w) {
        ::kill(w.pid, SIGKILL);
        int wstatus = 0;
        while (waitpid(w.pid, &wstatus, 0) < 0 && errno == EINTR) {
        }
        ::close(w.result_fd);
        ::close(w.go_fd);
        return wstatus;
    }

    void fork_worker(size_t job) {
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
            const int threads = enter_worker_process(options_, parent_pid_);
            const BenchmarkJob &j = jobs_[job];
            run_job(j.prepare, j.reference, j.return_output, options_, threads, result_pipe[1], go_pipe[0]);
            ::_exit(0); // no atexit handlers or static destructors of the parent's state
        }
        ::close(result_pipe[1]);
        ::close(go_pipe[0]);
        Worker w;
        w.job = job;
        w.pid = pid;
        w.result_fd = result_pipe[0];
        w.go_fd = go_pipe[1];
        start_job(std::move(w));
        workers_.back().started = forked;
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
        const bool searches_paused = describer_ && describer_->paused();
        if (timing_or_ready() || (!searches_paused && std::none_of(workers_.begin(), workers_.end(),
                                                                   [](const Worker &w) { return w.paused; })))
            return;
        if (lock_ && !lock_->try_compile()) {
            lock_waiting_ = true; // another process waits to time: they stay stopped meanwhile
            return;
        }
        for (Worker &w : workers_) continue_worker(w);
        if (searches_paused) describer_->resume();
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
        if (options_.exclusive_benchmark) {
            pause_compiles();
            if (describer_) describer_->pause();
        }
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
        const bool searching = describer_ && describer_->in_flight() > 0;
        if (workers_.empty() && !searching) {
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
        if (describer_) fds.push_back(pollfd{describer_->wake_fd(), POLLIN, 0}); // a search done
        const int ready = poll(fds.data(), fds.size(), int(std::clamp<int64_t>(wait + 1, 0, 1000)));
        if (ready <= 0) return;
        if (describer_ && fds.back().revents) describer_->clear_wake();
        for (size_t i = 0; i < workers_.size(); i++) {
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
        while (w.inbox.size() >= kFrameHeader) {
            const uint64_t n = payload_length(w.inbox.data());
            if (w.inbox.size() < kFrameHeader + n) return;
            const char tag = w.inbox[0];
            const std::string payload = w.inbox.substr(kFrameHeader, n);
            w.inbox.erase(0, kFrameHeader + n);
            ByteReader r(payload);
            JobResult &res = results_[w.job];
            if (tag == 'P') {
                if (!w.pooled) res.payload = payload; // a described job's came with its description
            } else if (tag == 'C') {
                continue_worker(w); // compiled before it was stopped: it waits for its turn
                const Clock::time_point prepared{Clock::duration(r.get<int64_t>())},
                    compiled{Clock::duration(r.get<int64_t>())};
                res.prepare_seconds = w.describe_seconds + running_seconds(w, w.started, prepared);
                res.compile_seconds = running_seconds(w, prepared, compiled);
                w.phase = Phase::WaitingToRun;
            } else if (tag == 'S') {
                w.rounds_done++;
                w.phase = Phase::WaitingToRun;
            } else if (tag == 'E') {
                const JobFailure f = get_failure(r);
                w.reported = r.ok();
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
                w.reported = r.ok();
                finish(w, r.ok() ? status : JobStatus::Crash, r.ok() ? note : "malformed result from worker");
                return;
            }
        }
    }

    // A pooled worker that reported its job's end itself serves the next, unless the job left it
    // suspect (out of memory: its heap may be in any state) or it has served its share.
    bool reusable(const Worker &w, JobStatus status) const {
        const bool clean = status == JobStatus::Ok || status == JobStatus::WrongOutput ||
                           status == JobStatus::CompileError || status == JobStatus::RuntimeError;
        return w.pooled && w.reported && clean && w.jobs_served + 1 < kJobsPerWorker && !stopping();
    }

    // Records the job's outcome, then collects the worker (killing it if still alive) or, pooled
    // and reusable, keeps it idle for the next job.
    void finish(Worker &w, JobStatus status, std::string message) {
        if (w.finished) return;
        w.finished = true;
        int wstatus = 0;
        if (reusable(w, status)) {
            Worker idle;
            idle.pid = w.pid;
            idle.pooled = true;
            idle.jobs_served = w.jobs_served + 1;
            idle.result_fd = w.result_fd;
            idle.go_fd = w.go_fd;
            idle_.push_back(std::move(idle));
        } else {
            wstatus = end_process(w);
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
    std::vector<Worker> idle_; // pooled workers between jobs
    void (*previous_sigpipe_)(int) = SIG_DFL;
    size_t next_job_ = 0;
    size_t next_described_ = 0;              // the next job to hand to the describer
    std::string program_;                    // pooled workers' program
    std::optional<DescribeGraph> describer_; // described jobs' searches
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
    const bool forks = !jobs.empty() && jobs[0].prepare; // pooled workers build their own
    if (forks && warmed.insert(host.to_string()).second) warm_jit_runtime(host);
    return Supervisor(jobs, options, on_done, stop).run();
}

} // namespace schedforge::runner
