// bench-generator: how fast the generator draws pipelines, and how long Halide takes to
// JIT-compile them, for a generator config (default: the built-in defaults).
//
//   bench-generator [--config FILE] [--specs 5000] [--compile 30] [--seed 0]
//
// Machines here are shared and noisy, so each figure is also printed as a ratio against a
// baseline measured in the same process: the median JIT compile time of a hand-written 3x3 box
// blur (a fixed, tiny Halide pipeline).
#include "common/statistics.h"
#include "common/stopwatch.h"
#include "generator/build.h"
#include "generator/config.h"
#include "generator/synthesize.h"
#include "runner/host_target.h"
#include "tools/cli.h"

#include <Halide.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace {

namespace sg = schedforge::gen;
namespace runner = schedforge::runner;
using Clock = std::chrono::steady_clock;

using schedforge::median;
using schedforge::seconds_since;

// The baseline: a 3x3 box blur over a uint16 image, default schedule.
double blur_compile_seconds(const Halide::Target &target) {
    Halide::ImageParam in(Halide::UInt(16), 2, "in");
    Halide::Var x("x"), y("y");
    Halide::Func clamped = Halide::BoundaryConditions::repeat_edge(in);
    Halide::Func bx("bx"), by("by");
    bx(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
    by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 3;
    const auto start = Clock::now();
    Halide::Pipeline(by).compile_jit(target);
    return seconds_since(start);
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Benchmark the random pipeline generator and Halide's JIT compile of its pipelines.",
                 "bench-generator"};
    std::string config_path;
    int64_t specs = 5000, compiles = 30;
    uint64_t seed = 0;
    app.add_option("--config", config_path, "Generator config YAML (default: built-in defaults)");
    app.add_option("--specs", specs, "Pipelines to synthesize for the generation rate")->check(CLI::PositiveNumber);
    app.add_option("--compile", compiles, "Pipelines to build and JIT-compile")->check(CLI::PositiveNumber);
    app.add_option("--seed", seed, "First seed");
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        const sg::GeneratorConfig cfg =
            config_path.empty() ? sg::GeneratorConfig() : sg::load_generator_config(config_path);
        const Halide::Target target = runner::jit_target();

        // 1. Synthesis only (spec, no Halide).
        auto start = Clock::now();
        int64_t stages = 0;
        for (int64_t i = 0; i < specs; i++) stages += sg::synthesize_pipeline(cfg, seed + uint64_t(i)).num_stages();
        const double synth_s = seconds_since(start);

        // 2. Spec -> Halide Funcs, and JIT compile with Halide's default schedule.
        std::vector<double> build_s, compile_s, blur_s;
        for (int64_t i = 0; i < compiles; i++) {
            const sg::PipelineSpec spec = sg::synthesize_pipeline(cfg, seed + uint64_t(i));
            start = Clock::now();
            sg::BuiltPipeline built = sg::build_pipeline(spec);
            build_s.push_back(seconds_since(start));
            start = Clock::now();
            built.pipeline.compile_jit(target);
            compile_s.push_back(seconds_since(start));
            blur_s.push_back(blur_compile_seconds(target)); // interleaved, so both see the same noise
        }
        const double synth_rate = double(specs) / synth_s;
        const double build_med = median(build_s), compile_med = median(compile_s), blur_med = median(blur_s);
        std::printf("config: %s\n", cfg.source.c_str());
        std::printf("synthesis:  %.0f pipelines/s (%lld pipelines, %.1f stages each, %.1f us per pipeline)\n",
                    synth_rate, (long long)specs, double(stages) / double(specs), 1e6 * synth_s / double(specs));
        std::printf("build:      median %.2f ms per pipeline (spec -> Halide Funcs)\n", 1e3 * build_med);
        std::printf("jit compile: median %.0f ms per pipeline (default schedule, %lld pipelines)\n", 1e3 * compile_med,
                    (long long)compiles);
        std::printf("baseline:   median %.0f ms to JIT-compile a 3x3 box blur\n", 1e3 * blur_med);
        std::printf("ratio: compile / blur compile = %.2f\n", compile_med / blur_med);
        std::printf("ratio: (synthesis + build) / compile = %.4f\n", (1.0 / synth_rate + build_med) / compile_med);
        std::printf("pipelines generated and compiled per second (one core): %.2f\n",
                    1.0 / (1.0 / synth_rate + build_med + compile_med));
        return 0;
    });
}
