// Jobs made to fail on purpose, for tests of a run's robustness: a JobRunner (datagen/generate.h) that
// wraps the benchmark runner and makes the named jobs crash, hang, run out of memory, fail to
// compile or compute the wrong thing after their search. Production configs carry no faults.
#pragma once

#include "datagen/generate.h"
#include "runner/benchmark_runner.h"

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

// runner::run_jobs, with the jobs named in `faults` (e.g. "pipeline 0 sample 3", as generate_dataset
// names them) failing as said.
inline datagen::JobRunner faulty_runner(std::map<std::string, FaultKind> faults) {
    return [faults = std::move(faults)](
               const std::vector<runner::BenchmarkJob> &jobs, const runner::RunnerOptions &options,
               const std::function<void(size_t, runner::JobResult &)> &on_done, const std::atomic<bool> *stop) {
        std::vector<runner::BenchmarkJob> faulty = jobs;
        for (runner::BenchmarkJob &job : faulty) {
            const auto it = faults.find(job.name);
            if (it == faults.end()) continue;
            job.prepare = [prepare = job.prepare, kind = it->second]() {
                runner::PreparedJob prepared = prepare();
                if (kind == FaultKind::WrongOutput) wrong_output_of(prepared);
                prepared.before_compile = [kind]() { inject(kind); };
                return prepared;
            };
        }
        return runner::run_jobs(faulty, options, on_done, stop);
    };
}

} // namespace schedforge::testing
