// Jobs made to fail on purpose, for tests of a run's robustness: a JobRunner (datagen/generate.h) that
// wraps the benchmark runner and makes the named jobs crash, hang, run out of memory, fail to
// compile or compute the wrong thing after their search. Production configs carry no faults:
// described jobs fail in the test worker program (tests/support/fault_worker.cpp), which knows the
// fault job kind beside the dataset engine's.
#pragma once

#include "common/wire.h"
#include "datagen/generate.h"
#include "runner/benchmark_runner.h"
#include "runner/job_worker.h"

#include <Halide.h>

#include <chrono>
#include <csignal>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace schedforge::testing {

enum class FaultKind { Crash, Hang, OutOfMemory, CompileError, WrongOutput };

// In the worker, after the search, before compiling.
inline void inject(FaultKind kind) {
    switch (kind) {
    case FaultKind::Crash: std::raise(SIGSEGV); break;
    case FaultKind::Hang:
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    case FaultKind::OutOfMemory: {
        // Address space only (never touched): the worker's memory limit turns it into bad_alloc.
        std::vector<std::unique_ptr<char[]>> blocks;
        for (int i = 0; i < 1 << 14; i++) blocks.emplace_back(new char[size_t(1) << 30]);
        break;
    }
    case FaultKind::CompileError: throw Halide::CompileError("injected compile error");
    case FaultKind::WrongOutput: break; // changes the pipeline instead (wrong_output_of)
    }
}

// The scheduled output times two plus three (beyond any tolerance), as the job's pipeline: a
// schedule that computes the wrong thing under any compiler flags.
inline void wrong_output_of(runner::PreparedJob &job) {
    Halide::Func out = job.pipeline.outputs()[0];
    out.compute_root(); // no longer the output: keep it computed, with its schedule
    Halide::Func wrong("injected_wrong_output");
    const Halide::Type t = out.output_types()[0];
    wrong(out.args()) = out(out.args()) * Halide::cast(t, 2) + Halide::cast(t, 3);
    job.pipeline = Halide::Pipeline(wrong);
}

// The test worker program's job kind: a fault, around another kind's job.
inline const std::string kFaultJob = "test.fault";

// `spec` failing as `kind` says, after it is built.
inline runner::JobSpec faulty(runner::JobSpec spec, FaultKind kind) {
    common::ByteWriter w;
    w.put<uint8_t>(uint8_t(kind));
    w.put_string(spec.kind);
    w.put_string(spec.data);
    spec.kind = kFaultJob;
    spec.data = w.bytes();
    return spec;
}

// kFaultJob in the worker: builds the job within by `kinds`, then fails as it says (a wrong
// output now, any other fault before compiling).
inline runner::PreparedJob build_faulty(const runner::JobKinds &kinds, const std::string &data) {
    common::ByteReader r(data);
    const auto kind = FaultKind(r.get<uint8_t>());
    const std::string inner = r.get_string(), inner_data = r.get_string();
    runner::PreparedJob prepared = kinds.at(inner)(inner_data);
    if (kind == FaultKind::WrongOutput) wrong_output_of(prepared);
    prepared.before_compile = [kind]() { inject(kind); };
    return prepared;
}

// runner::run_jobs, with the jobs named in `faults` (e.g. "pipeline 0 sample 3", as generate_dataset
// names them) failing as said. The dataset engine's jobs are described (datagen/jobs.h), so the
// faults travel as a job kind of the test worker program.
inline datagen::JobRunner faulty_runner(std::map<std::string, FaultKind> faults) {
    return [faults = std::move(faults)](
               const std::vector<runner::BenchmarkJob> &jobs, const runner::RunnerOptions &options,
               const std::function<void(size_t, runner::JobResult &)> &on_done, const std::atomic<bool> *stop) {
        std::vector<runner::BenchmarkJob> jobs_with_faults = jobs;
        for (runner::BenchmarkJob &job : jobs_with_faults) {
            const auto it = faults.find(job.name);
            if (it == faults.end()) continue;
            job.describe = [describe = job.describe, kind = it->second]() { return faulty(describe(), kind); };
        }
        runner::RunnerOptions with_faults = options;
        with_faults.worker_program = SCHEDFORGE_FAULT_WORKER;
        return runner::run_jobs(jobs_with_faults, with_faults, on_done, stop);
    };
}

} // namespace schedforge::testing
