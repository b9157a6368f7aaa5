// The benchmark runner's worker side, and the wire between a worker and the runner (internal to
// runner/): what a worker process does with one job, whether it was forked for that job (a job's
// `prepare` closure) or started once by exec and fed jobs described as data (runner/job_worker.h).
//
// Messages are frames: a tag byte, a 64-bit payload length, the payload. Worker to runner:
//   'P' the job's payload, 'C' compiled (payload: when prepare and compile ended), 'S' a round of
//   timing done (more to come; empty), 'R' result, 'E' failure (status byte + message).
// Runner to worker: one go byte per timing round; to an exec'd worker also 'O' its options (once,
// first) and 'J' a job (between jobs).
#pragma once

#include "runner/benchmark_runner.h"

#include "common/wire.h"

#include <Halide.h>

#include <exception>
#include <functional>
#include <optional>
#include <string>

namespace schedforge::runner::worker {

// Of the frames between the runner and an exec'd worker (checked in the 'O' frame).
constexpr uint32_t kWireVersion = 1;

// A frame's header: its tag byte and its payload's length.
constexpr size_t kFrameHeader = 1 + sizeof(uint64_t);
uint64_t payload_length(const char *header);

// False when the other end is gone.
bool send(int fd, char tag, const std::string &payload);
// Reads one whole frame; false at end of stream or on a truncated one.
bool receive(int fd, char *tag, std::string *payload);

// Buffers travel as type (code, bits), dimensions, extents and dense bytes.
void put_buffer(common::ByteWriter &w, const Halide::Buffer<> &b);
Halide::Buffer<> get_buffer(common::ByteReader &r);

void put_timing(common::ByteWriter &w, const TimingResult &t);
TimingResult get_timing(common::ByteReader &r);

// What the worker side needs of the runner's options (an exec'd worker receives them).
void put_options(common::ByteWriter &w, const RunnerOptions &o);
RunnerOptions get_options(common::ByteReader &r);

// A job's failure, thrown inside the worker (and its timing rounds' processes) to end the job.
struct JobFailure {
    JobStatus status;
    std::string message;
};
void put_failure(common::ByteWriter &w, const JobFailure &f);
JobFailure get_failure(common::ByteReader &r);

// The failure that the exception in flight means; `compiled`: the pipeline had compiled.
JobFailure failure_of(const std::exception_ptr &e, bool compiled);
// What a Halide::RuntimeError's message means: out of memory (the host's or the device's), a GPU
// kernel's launch failure or fault, a watchdog's timeout, else a runtime error.
JobStatus runtime_error_status(const std::string &message);

int host_threads();
// CPUs this process may run on: its affinity mask, which a launcher may have narrowed (Open MPI
// binds each of two ranks to a core of its own; `taskset`).
int allowed_cpus();

// Makes the calling process a worker of the runner in process `parent`: dies with it, ignores
// Ctrl-C, writes its output to options.worker_log, runs under the memory limit and on the CPUs
// timing may use. Returns the Halide threads a timed run uses.
int enter_worker_process(const RunnerOptions &options, pid_t parent);

// One job in the worker: prepare() it, send its payload, compile, then time it round by round
// as go bytes arrive on `go_fd`, and send the result ('R') or its failure ('E'). Returns once
// the job is reported (a crash in it ends the process instead).
void run_job(const std::function<PreparedJob()> &prepare, const std::optional<Halide::Buffer<>> &reference,
             bool return_output, const RunnerOptions &options, int threads, int result_fd, int go_fd);

} // namespace schedforge::runner::worker
