// bench-runner: the benchmark runner's overhead per job (worker start, compile, benchmark)
// against doing the same compile and timing in-process.
//
//   bench-runner [--jobs 16] [--parallel 1]
//
// Each job is a small 2-D blur. The runner's wall time per job is compared with an in-process
// baseline that JIT-compiles and times the same pipeline with the same protocol. The baseline
// runs after the runner: a process that has run JIT code must not fork workers.
#include "common/stopwatch.h"
#include "runner/benchmark_runner.h"
#include "runner/host_target.h"
#include "tools/cli.h"

#include <Halide.h>

#include <chrono>
#include <cstdio>

namespace {

namespace runner = schedforge::runner;
using Clock = std::chrono::steady_clock;

runner::PreparedJob blur() {
    using namespace Halide;
    Func in("in"), bx("bx"), by("by");
    Var x("x"), y("y");
    in(x, y) = cast<uint16_t>(x * 7 + y * 13);
    bx(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) / 3;
    by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 3;
    bx.compute_root();
    return runner::PreparedJob{Pipeline(by), Buffer<uint16_t>(256, 256)};
}

using schedforge::seconds_since;

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Measure the benchmark runner's per-job overhead against in-process timing.", "bench-runner"};
    int jobs = 16, parallel = 1;
    app.add_option("--jobs", jobs, "Jobs to run")->check(CLI::PositiveNumber);
    app.add_option("--parallel", parallel, "Concurrent compiles in the runner")->check(CLI::PositiveNumber);
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        runner::RunnerOptions options;
        options.parallel_compiles = parallel;
        options.timing.min_samples = 5;
        options.timing.max_seconds = 0.05;
        options.timing.threads = 1;
        runner::BenchmarkJob job;
        job.name = "blur";
        job.prepare = blur;
        std::vector<runner::BenchmarkJob> list(size_t(jobs), job);

        auto start = Clock::now();
        const std::vector<runner::JobResult> results = runner::run_jobs(list, options);
        const double runner_wall = seconds_since(start) / jobs;
        double compile = 0, timing = 0;
        for (const runner::JobResult &r : results) {
            if (r.status != runner::JobStatus::Ok) {
                std::fprintf(stderr, "bench-runner: job failed: %s\n", r.message.c_str());
                return 1;
            }
            compile += r.compile_seconds / jobs;
            for (double s : r.timing.samples) timing += s / jobs;
        }

        // Baseline: the same work in this process, no workers.
        start = Clock::now();
        double base_compile = 0, base_timing = 0;
        for (int i = 0; i < jobs; i++) {
            runner::PreparedJob p = blur();
            auto t = Clock::now();
            p.pipeline.compile_jit(runner::runnable_here(Halide::Target(options.target)));
            base_compile += seconds_since(t) / jobs;
            const runner::TimingResult tr =
                runner::time_runs(options.timing, 1, [&]() { p.pipeline.realize(p.output); });
            for (double s : tr.samples) base_timing += s / jobs;
        }
        const double base_wall = seconds_since(start) / jobs;

        std::printf("jobs: %d (2-D blur 256x256), parallel compiles: %d\n", jobs, parallel);
        std::printf("runner:     %.1f ms wall per job (compile %.1f ms, timed runs %.2f ms; compiles overlap when "
                    "--parallel > 1)\n",
                    1e3 * runner_wall, 1e3 * compile, 1e3 * timing);
        std::printf("in-process: %.1f ms wall per job (compile %.1f ms, timed runs %.2f ms)\n", 1e3 * base_wall,
                    1e3 * base_compile, 1e3 * base_timing);
        std::printf("ratio: runner wall / in-process wall = %.2f; overhead %.1f ms per job\n", runner_wall / base_wall,
                    1e3 * (runner_wall - base_wall));
        return 0;
    });
}
