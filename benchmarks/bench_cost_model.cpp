// bench-cost-model: the learned cost model's two speeds, each as a ratio against a baseline run
// in the same process or script.
//
//   bench-cost-model [--apps all|a,b] [--weights W] [--pipelines 40] [--schedules 16]
//                    [--stages 5] [--epochs 20] [--retrain PATH]
//
// 1. Inference as the search uses it: beam search on each app with the manual cost model, then
//    with the learned one (W, or random weights: speed does not depend on their values); states
//    costed per second of cost-model time, and the whole search's time, learned / manual.
// 2. Training throughput against Halide's own retrain_cost_model (Adams2019's trainer) on the
//    same synthetic set: P pipelines x S schedules x N stages, random features (the two models
//    take different pipeline features, so they cannot share real ones), runtimes a fixed function
//    of the schedule features. Both take one batch of all S schedules of a pipeline per step, an
//    epoch being one pass over the pipelines. Time per epoch is the difference of two whole runs
//    (E + 2 and 2 epochs for Halide's program, E and 0 for ours), so loading and compiling cancel;
//    ours also reports its training steps alone (without the per-epoch evaluation of every
//    schedule).
#include "benchmarks/halide_samples.h"
#include "common/stopwatch.h"
#include "runner/host_target.h"

#include "apps/app.h"
#include "common/rng.h"
#include "featurize/function_dag.h"
#include "runner/fingerprint.h"
#include "sampler/beam_search.h"
#include "sampler/cost_model.h"
#include "tools/app_list.h"
#include "tools/cli.h"
#include "tools/files.h"
#include "tools/table.h"
#include "trainer/train.h"

#include <Halide.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace {

using schedforge::tools::format_number;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;
namespace sa = schedforge::apps;
namespace sf = schedforge::featurize;
namespace ss = schedforge::sampler;
namespace st = schedforge::trainer;
namespace runner = schedforge::runner;

using schedforge::seconds_since;

void bench_inference(const std::vector<std::string> &apps, const st::Weights &weights) {
    const Halide::Target target = runner::host_target();
    ss::SearchOptions options;
    options.cores = runner::fingerprint_this_machine().logical_cpus;
    schedforge::tools::Table table({"app", "manual states", "manual states/s", "learned states", "learned states/s",
                                    "states/s learned/manual", "search s manual", "search s learned"});
    double log_rate = 0, log_search = 0;
    for (const std::string &name : apps) {
        sa::BuiltApp built = sa::build_app(name, /*small=*/false);
        const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
        auto search = [&](ss::CostModel &model, double &seconds) {
            const auto start = Clock::now();
            const ss::SearchStats stats = ss::beam_search(dag, target, model, options).stats;
            seconds = seconds_since(start);
            return stats;
        };
        ss::ManualCostModel manual(options.coefficients);
        ss::LearnedCostModel learned(weights);
        double manual_s = 0, learned_s = 0;
        const ss::SearchStats m = search(manual, manual_s), l = search(learned, learned_s);
        const double m_rate = double(m.cost_evaluations) / m.cost_seconds;
        const double l_rate = double(l.cost_evaluations) / l.cost_seconds;
        log_rate += std::log(l_rate / m_rate);
        log_search += std::log(learned_s / manual_s);
        table.add_row({name, std::to_string(m.cost_evaluations), format_number("%.0f", m_rate),
                       std::to_string(l.cost_evaluations), format_number("%.0f", l_rate),
                       format_number("%.2f", l_rate / m_rate), format_number("%.2f", manual_s),
                       format_number("%.2f", learned_s)});
    }
    const double n = double(apps.size());
    table.add_row({"geomean", "", "", "", "", format_number("%.2f", std::exp(log_rate / n)), "",
                   "learned/manual " + format_number("%.2f", std::exp(log_search / n))});
    std::cout << "== inference in the search (beam " << options.beam_size << ", " << options.passes
              << " passes; states/s over cost-model time only)\n";
    table.print(std::cout);
}

// The synthetic training set, in both models' forms.
struct Synthetic {
    st::TrainingData ours;
    std::vector<std::vector<float>> halide_pipeline_features; // per pipeline: [stage][280]
};

Synthetic make_synthetic(int pipelines, int schedules, int stages, uint64_t seed) {
    schedforge::common::Rng rng(seed);
    // Sparse small counts, as op histograms are.
    auto counts = [&](size_t n) {
        std::vector<float> v(n, 0.0f);
        for (float &x : v)
            if (rng.uniform01() < 0.1) x = float(rng.uniform_int(1, 8));
        return v;
    };
    std::vector<double> sensitivity(st::kScheduleFeatures);
    for (double &s : sensitivity) s = 0.2 * rng.uniform01();
    Synthetic s;
    for (int p = 0; p < pipelines; p++) {
        st::TrainingPipeline tp;
        tp.id = uint64_t(p + 1);
        tp.source = "synthetic";
        tp.input.num_stages = stages;
        tp.input.pipeline_features = counts(size_t(stages) * st::kPipelineFeatures);
        tp.input.is_output.assign(size_t(stages), 0.0f);
        tp.input.is_output[0] = 1.0f;
        tp.input.num_cores = 2;
        s.halide_pipeline_features.push_back(counts(size_t(stages) * schedforge::bench::kHalidePipelineFeatures));
        for (int k = 0; k < schedules; k++) {
            std::vector<float> f(size_t(stages) * st::kScheduleFeatures);
            double log_runtime = std::log(1e-4);
            for (size_t i = 0; i < f.size(); i++) {
                f[i] = float(std::exp(14 * rng.uniform01())); // 1 .. 1.2e6, log-uniform
                log_runtime += sensitivity[i % st::kScheduleFeatures] * std::log(double(f[i])) / stages;
            }
            tp.schedule_features.push_back(std::move(f));
            tp.runtimes.push_back(std::min(10.0, std::exp(log_runtime)));
            tp.timing_spread.push_back(0.01);
        }
        s.ours.pipelines.push_back(std::move(tp));
    }
    return s;
}

void bench_training(int pipelines, int schedules, int stages, int epochs, const std::string &retrain) {
    const Synthetic data = make_synthetic(pipelines, schedules, stages, 7);
    const double per_epoch = double(pipelines) * schedules;

    // Ours: whole train() calls, E epochs and 0 (epoch 0 is the evaluation before any step).
    st::TrainOptions options;
    options.batch_size = schedules;
    auto run_ours = [&](int e, double &step_seconds) {
        options.epochs = e;
        st::Model model(st::Weights::random(1));
        const auto start = Clock::now();
        const st::TrainResult r = st::train(model, data.ours, st::TrainingData{}, options);
        step_seconds = r.train_seconds;
        return seconds_since(start);
    };
    double steps = 0, unused = 0;
    const double ours_epoch = (run_ours(epochs, steps) - run_ours(0, unused)) / epochs;

    // Halide's: one .sample file per schedule, the file list on stdin.
    const fs::path dir = fs::temp_directory_path() / ("bench_cost_model_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::string list;
    for (int p = 0; p < pipelines; p++) {
        const st::TrainingPipeline &tp = data.ours.pipelines[size_t(p)];
        for (int k = 0; k < schedules; k++) {
            const std::string path = (dir / (std::to_string(p) + "_" + std::to_string(k) + ".sample")).string();
            std::string error;
            if (!schedforge::bench::write_halide_sample(path, stages, tp.schedule_features[size_t(k)],
                                                        data.halide_pipeline_features[size_t(p)],
                                                        tp.runtimes[size_t(k)], int32_t(tp.id), k, &error))
                throw std::runtime_error(error);
            list += path + "\n";
        }
    }
    schedforge::tools::write_file_atomic((dir / "samples.txt").string(), list);
    auto run_halide = [&](int e) {
        const std::string command =
            retrain + " --epochs=" + std::to_string(e) +
            " --rates=0.0001 --num_cores=2 --randomize_weights=1 --weights_out=" + (dir / "h.weights").string() +
            " --best_benchmark=" + (dir / "best.txt").string() + " --best_schedule=" + (dir / "best.h").string() +
            " < " + (dir / "samples.txt").string() + " > " + (dir / "log.txt").string() + " 2>&1";
        const auto start = Clock::now();
        if (std::system(command.c_str()) != 0)
            throw std::runtime_error(retrain + " failed; its output is in " + (dir / "log.txt").string());
        return seconds_since(start);
    };
    const double halide_epoch = (run_halide(epochs + 2) - run_halide(2)) / epochs;
    fs::remove_all(dir);

    std::cout << "\n== training throughput: " << pipelines << " pipelines x " << schedules << " schedules x " << stages
              << " stages, " << epochs << " epochs, one batch per pipeline\n";
    schedforge::tools::Table table({"trainer", "s/epoch", "schedules/s", "ratio to retrain_cost_model"});
    table.add_row({"retrain_cost_model (Halide 14)", format_number("%.4f", halide_epoch),
                   format_number("%.0f", per_epoch / halide_epoch), "1.00"});
    table.add_row({"schedforge train()", format_number("%.4f", ours_epoch),
                   format_number("%.0f", per_epoch / ours_epoch), format_number("%.2f", halide_epoch / ours_epoch)});
    const double step_epoch = steps / epochs;
    table.add_row({"schedforge, training steps only", format_number("%.4f", step_epoch),
                   format_number("%.0f", per_epoch / step_epoch), format_number("%.2f", halide_epoch / step_epoch)});
    table.print(std::cout);
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"The learned cost model's inference and training speeds against baselines.", "bench-cost-model"};
    std::string apps_arg = "blur3x3,unsharp_mask,harris,camera_pipe,local_laplacian", weights_path;
    std::string retrain = "/usr/lib/x86_64-linux-gnu/halide14/retrain_cost_model";
    int pipelines = 40, schedules = 16, stages = 5, epochs = 20;
    app.add_option("--apps", apps_arg, "Apps for the inference part: all, a comma-separated list, or none");
    app.add_option("--weights", weights_path, "Weights for the learned model (default: random)");
    app.add_option("--pipelines", pipelines, "Synthetic pipelines for training")->check(CLI::PositiveNumber);
    app.add_option("--schedules", schedules, "Schedules per pipeline (Halide's trainer needs 8)")
        ->check(CLI::Range(8, 1024));
    app.add_option("--stages", stages, "Stages per pipeline")->check(CLI::PositiveNumber);
    app.add_option("--epochs", epochs, "Epochs timed")->check(CLI::PositiveNumber);
    app.add_option("--retrain", retrain, "Halide's retrain_cost_model, or none to skip training");
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        const st::Weights weights = weights_path.empty() ? st::Weights::random(1) : st::Weights::load(weights_path);
        if (apps_arg != "none") bench_inference(schedforge::tools::parse_app_list(apps_arg), weights);
        if (retrain != "none") bench_training(pipelines, schedules, stages, epochs, retrain);
        return 0;
    });
}
