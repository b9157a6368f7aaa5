#include "runner/worker_side.h"
#include "featurize/codegen_guard.h"
#include "featurize/loop_nest.h"
#include "runner/host_target.h"
#include "runner/round_process.h"
#include "runner/system_allocator.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace schedforge::runner::worker {

using common::ByteReader;
using common::ByteWriter;

using Clock = std::chrono::steady_clock;

bool send(int fd, char tag, const std::string &payload) {
    std::string frame(1, tag);
    const uint64_t n = payload.size();
    frame.append(reinterpret_cast<const char *>(&n), sizeof(n));
    frame += payload;
    return common::write_all(fd, frame.data(), frame.size());
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

namespace {

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

} // namespace

uint64_t payload_length(const char *header) {
    uint64_t n;
    std::memcpy(&n, header + 1, sizeof n);
    return n;
}

bool receive(int fd, char *tag, std::string *payload) {
    char head[kFrameHeader];
    if (!common::read_all(fd, head, sizeof head)) return false;
    *tag = head[0];
    payload->resize(payload_length(head));
    return common::read_all(fd, payload->data(), payload->size());
}

void put_options(ByteWriter &w, const RunnerOptions &o) {
    w.put_string(o.target);
    w.put<int64_t>(o.memory_limit_bytes);
    w.put_string(o.worker_log);
    w.put_string(o.machine_lock);
    w.put<double>(o.run_timeout_seconds);
    w.put<int64_t>(o.integer_tolerance);
    static_assert(std::is_trivially_copyable_v<TimingProtocol>);
    w.put<TimingProtocol>(o.timing); // the worker is this build's: the same layout
}

RunnerOptions get_options(ByteReader &r) {
    RunnerOptions o;
    o.target = r.get_string();
    o.memory_limit_bytes = r.get<int64_t>();
    o.worker_log = r.get_string();
    o.machine_lock = r.get_string();
    o.run_timeout_seconds = r.get<double>();
    o.integer_tolerance = r.get<int64_t>();
    o.timing = r.get<TimingProtocol>();
    return o;
}

JobStatus runtime_error_status(const std::string &m) {
    auto has = [&](const char *what) { return m.find(what) != std::string::npos; };
    if (has("Out of memory") || has("out of memory") || has("CUDA_ERROR_OUT_OF_MEMORY")) return JobStatus::OutOfMemory;
    if (has("CUDA_ERROR_LAUNCH_TIMEOUT")) return JobStatus::Timeout; // the display watchdog's
    // Halide's CUDA runtime: "cuLaunchKernel failed: ..." (too many registers or threads, a bad
    // configuration), and a kernel's own fault, seen at the next synchronization: a bad address,
    // a failed launch, or a trap ("Illegal instruction or Halide assertion failure inside kernel").
    for (const char *launch :
         {"cuLaunchKernel failed", "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
          "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_INVALID_ADDRESS_SPACE",
          "CUDA_ERROR_INVALID_PC", "Illegal instruction or Halide assertion failure inside kernel"}) {
        if (has(launch)) return JobStatus::LaunchFailure;
    }
    return JobStatus::RuntimeError;
}

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
        return {runtime_error_status(m), m};
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

namespace {

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

} // namespace

int enter_worker_process(const RunnerOptions &options, pid_t parent) {
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
    return threads;
}

void run_job(const std::function<PreparedJob()> &prepare, const std::optional<Halide::Buffer<>> &reference,
             bool return_output, const RunnerOptions &options, int threads, int result_fd, int go_fd) {
    bool compiled = false;
    auto fail = [&](const JobFailure &f) {
        ByteWriter w;
        put_failure(w, f);
        send(result_fd, 'E', w.bytes());
    };
    std::shared_ptr<void> output_mapping; // outlives `prepared`, whose output may live in it
    try {
        PreparedJob prepared = prepare();
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
        if (fresh) prepared.output = shared_buffer_like(prepared.output, &output_mapping); // the rounds write it
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
        if (reference) difference = compare_buffers(*reference, prepared.output, options.integer_tolerance);
        r.put<uint8_t>(uint8_t(difference.empty() ? JobStatus::Ok : JobStatus::WrongOutput));
        r.put_string(difference);
        r.put<double>(benchmark_seconds);
        put_timing(r, timing);
        r.put<uint8_t>(return_output ? 1 : 0);
        if (return_output) put_buffer(r, prepared.output);
        send(result_fd, 'R', r.bytes());
    } catch (...) {
        fail(failure_of(std::current_exception(), compiled));
    }
}

} // namespace schedforge::runner::worker
