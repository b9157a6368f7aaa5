// Worker programs: the processes, started by exec, that run the benchmark runner's jobs described
// as data (BenchmarkJob::describe). A worker program is a main() that registers the job kinds it
// knows, each a function from a job's bytes to the scheduled pipeline, and serves the runner that
// started it: it builds, compiles and times job after job, exactly as a forked worker does one,
// until the runner closes its pipe. tools/schedforge_worker.cpp is the one the tools use (the
// dataset engine's kinds); tests build their own, with kinds that fail on purpose.
#pragma once

#include "runner/benchmark_runner.h"

#include <functional>
#include <map>
#include <string>

namespace schedforge::runner {

// Builds a job's pipeline from its bytes, with the schedule applied (JobSpec::data). Throwing is
// the job's failure, as it is from BenchmarkJob::prepare.
using JobKind = std::function<PreparedJob(const std::string &data)>;
using JobKinds = std::map<std::string, JobKind>;

// A worker program's main: serves the runner named on its command line
// (`PROGRAM --serve RESULT_FD COMMAND_FD RUNNER_PID`, as the runner starts it). Returns the exit
// status: 0 when the runner closed the pipe, 2 for another command line (with one line on stderr),
// 1 for a runner that speaks another wire version.
int serve_jobs(const JobKinds &kinds, int argc, char **argv);

// The worker program for `options`: options.worker_program, else $SCHEDFORGE_WORKER, else
// schedforge-worker beside this program, else the one in this build's tree. Throws UserError
// when the one chosen is not an executable file.
std::string worker_program(const RunnerOptions &options);

} // namespace schedforge::runner
