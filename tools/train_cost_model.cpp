// train-cost-model: trains the cost model on HDF5 datasets (trainer/train.h) and writes a
// weights file, the per-epoch metrics (CSV), the validation predictions (CSV) and two plots:
// loss curves, and predicted against measured runtime (the source paper's Fig. 7).
#include "tools/cli.h"
#include "tools/files.h"
#include "tools/progress.h"

#include "sampler/search_options.h"
#include "trainer/train.h"

#include <cstdio>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;
namespace st = schedforge::trainer;

namespace {

bool plot_losses(const std::string &csv, const std::string &png, bool validation) {
    std::string gp = "set datafile separator ','\nset title 'Training loss per epoch'\nset xlabel 'epoch'\n"
                     "set ylabel 'loss'\nset logscale y\nset grid\nset key top right\n";
    gp += "plot '" + csv + "' using 1:4 with linespoints title 'train'";
    if (validation) gp += ", '" + csv + "' using 1:10 with linespoints title 'validation'";
    return schedforge::tools::run_gnuplot(png, gp + "\n");
}

bool plot_predictions(const std::string &csv, const std::string &png, const std::string &which) {
    const std::string gp = "set datafile separator ','\nset title 'Predicted against measured runtime (" + which +
                           " schedules)'\nset xlabel 'measured (s)'\nset ylabel 'predicted (s)'\nset logscale xy\n"
                           "set grid\nset key top left\nplot '" +
                           csv + "' using 2:3 with points pt 7 ps 0.5 title 'schedule', x with lines title 'exact'\n";
    return schedforge::tools::run_gnuplot(png, gp);
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Train the cost model on HDF5 datasets and write a weights file.", "train-cost-model"};
    std::vector<std::string> data;
    std::string weights_in, weights_out, report_dir, loss_name = "throughput", coefficients_config;
    int64_t random_init = -1;
    st::TrainOptions options;
    double validation_fraction = 0.2, correction_bound = 0;
    app.add_option("--data", data, "dataset files (generate-dataset's HDF5)")->required()->expected(1, -1);
    app.add_option("--weights-in", weights_in, "start from these weights");
    app.add_option("--random-init", random_init, "start from random weights, uniform in [-0.5, 0.5], from SEED");
    app.add_option("--from-coefficients", coefficients_config,
                   "start from the manual model with this search config's coefficients (e.g. a calibrated one), "
                   "learning corrections to it; the heads start from --random-init's seed (default 0)");
    app.add_option("--correction-bound", correction_bound,
                   "with --from-coefficients: keep each learned coefficient within [1/B, B] of the manual one "
                   "(a trust region the search cannot exploit far from the training data); 0: unbounded")
        ->capture_default_str();
    app.add_option("--weights-out", weights_out, "the weights file to write")->required();
    app.add_option("--epochs", options.epochs, "passes over the training pipelines")->capture_default_str();
    app.add_option("--lr", options.learning_rate, "Adam's learning rate")->capture_default_str();
    app.add_option("--validation-fraction", validation_fraction, "pipelines held out (by a hash of their id)")
        ->capture_default_str();
    app.add_option("--batch-size", options.batch_size, "schedules of one pipeline per step")->capture_default_str();
    app.add_option("--loss", loss_name, st::kLossNamesHelp)->capture_default_str();
    app.add_option("--seed", options.seed, "shuffling seed")->capture_default_str();
    app.add_option("--report", report_dir,
                   "folder for metrics.csv, predictions.csv and the plots (default: "
                   "WEIGHTS_OUT.report)");
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        using schedforge::UserError;
        if (weights_in.empty() == (random_init < 0 && coefficients_config.empty()))
            throw UserError("give --weights-in, or --random-init and/or --from-coefficients");
        st::check_correction_bound_option(correction_bound, !coefficients_config.empty());
        if (options.epochs < 0) throw UserError("--epochs must not be negative");
        if (!(options.learning_rate > 0)) throw UserError("--lr must be positive");
        if (!(validation_fraction >= 0 && validation_fraction < 1))
            throw UserError("--validation-fraction must be in [0, 1)");
        if (options.batch_size < 2) throw UserError("--batch-size must be at least 2");
        const std::optional<st::LossKind> loss = st::loss_kind_named(loss_name);
        if (!loss) throw UserError("--loss must be throughput, log or pairwise");
        options.loss = *loss;
        schedforge::tools::require_parent_folder(weights_out);
        if (report_dir.empty()) report_dir = weights_out + ".report";

        const uint64_t init_seed = uint64_t(std::max<int64_t>(random_init, 0));
        const st::Weights start =
            !weights_in.empty() ? st::Weights::load(weights_in)
            : coefficients_config.empty()
                ? st::Weights::random(init_seed)
                : st::Weights::from_coefficients(
                      schedforge::sampler::load_search_options(coefficients_config).coefficients, init_seed,
                      "the manual model with the coefficients of " + coefficients_config + ", heads from seed " +
                          std::to_string(init_seed) +
                          (correction_bound > 0
                               ? ", corrections within [1/B, B] for B = " + std::to_string(correction_bound)
                               : ""),
                      correction_bound);
        st::LoadReport loaded;
        st::TrainingData train_set, validation;
        st::load_training_split(data, validation_fraction, train_set, validation, &loaded);
        schedforge::tools::ensure_directory(report_dir);
        std::printf("data: %zu files, %zu pipelines, %zu ok schedules (%zu schedules and %zu pipelines skipped: not ok "
                    "(%zu of them timed under contention), or fewer than two ok)\n",
                    loaded.files, loaded.pipelines, loaded.schedules, loaded.skipped_schedules,
                    loaded.skipped_pipelines, loaded.contended_schedules);
        std::printf("train: %zu pipelines, %zu schedules; validation: %zu pipelines, %zu schedules\n",
                    train_set.pipelines.size(), train_set.num_schedules(), validation.pipelines.size(),
                    validation.num_schedules());
        std::printf("start: %s\n", start.origin.c_str());
        std::printf("%5s %10s %10s %10s %8s %8s %8s %8s %9s\n", "epoch", "train", "validation", "val R2", "val pair",
                    "val tau", "regret", "rel err", "sched/s");
        std::fflush(stdout);

        st::Model model(start);
        std::unique_ptr<schedforge::tools::ProgressBar> bar;
        options.on_batch = [&](size_t done, size_t total) {
            if (!bar) bar = std::make_unique<schedforge::tools::ProgressBar>("epoch", int64_t(total));
            bar->step();
            if (done == total) bar.reset();
        };
        std::ostringstream csv;
        csv << "epoch,seconds,schedules" << st::metrics_csv_columns("train_") << st::metrics_csv_columns("validation_")
            << "\n";
        const bool has_validation = !validation.pipelines.empty();
        options.on_epoch = [&](const st::EpochReport &r) {
            const st::Metrics &v = has_validation ? r.validation : r.train;
            std::printf("%5d %10.4g %10.4g %10.3f %8.3f %8.3f %8.3f %8.3f %9.0f\n", r.epoch, r.train.loss,
                        has_validation ? r.validation.loss : 0.0, v.r2_log, v.pairwise_accuracy, v.kendall_tau,
                        v.top1_regret, v.mean_relative_error,
                        r.seconds > 0 ? double(r.schedules_trained) / r.seconds : 0.0);
            std::fflush(stdout);
            csv << r.epoch << "," << r.seconds << "," << r.schedules_trained << st::metrics_csv_values(r.train)
                << st::metrics_csv_values(r.validation) << "\n";
        };
        const st::TrainResult result = st::train(model, train_set, validation, options);

        st::Weights best = result.best_weights;
        std::ostringstream origin;
        origin << "train-cost-model, " << options.epochs << " epochs, lr " << options.learning_rate << ", loss "
               << loss_name << ", seed " << options.seed << ", best epoch " << result.best_epoch << "; data:";
        for (const std::string &d : data) origin << " " << fs::path(d).filename().string();
        origin << " (" << train_set.pipelines.size() + validation.pipelines.size() << " pipelines, "
               << train_set.num_schedules() + validation.num_schedules() << " schedules); from: " << start.origin;
        best.origin = origin.str();
        best.save(weights_out);

        // Reports: metrics per epoch, and the best weights' predictions on the held-out schedules.
        const std::string metrics_csv = (fs::path(report_dir) / "metrics.csv").string();
        schedforge::tools::write_file_atomic(metrics_csv, csv.str());
        const st::Model best_model(best);
        const st::TrainingData &shown = has_validation ? validation : train_set;
        std::ostringstream pred;
        pred << "pipeline_id,measured_s,predicted_s\n";
        const std::vector<st::PipelinePredictions> predictions = st::predict_all(best_model, shown);
        for (size_t i = 0; i < predictions.size(); i++) {
            for (size_t k = 0; k < predictions[i].measured.size(); k++) {
                pred << shown.pipelines[i].id << "," << predictions[i].measured[k] / st::kSecondsToModelUnits << ","
                     << predictions[i].predicted[k] / st::kSecondsToModelUnits << "\n";
            }
        }
        const std::string predictions_csv = (fs::path(report_dir) / "predictions.csv").string();
        schedforge::tools::write_file_atomic(predictions_csv, pred.str());
        const bool plotted = plot_losses(metrics_csv, (fs::path(report_dir) / "loss.png").string(), has_validation) &&
                             plot_predictions(predictions_csv, (fs::path(report_dir) / "predictions.png").string(),
                                              has_validation ? "validation" : "training");
        std::printf("best epoch %d (lowest %s loss); %zu schedules trained in %.2f s (%.0f schedules/s)\n",
                    result.best_epoch, has_validation ? "validation" : "training", result.schedules_trained,
                    result.train_seconds,
                    result.train_seconds > 0 ? double(result.schedules_trained) / result.train_seconds : 0.0);
        std::printf("wrote %s; %s: metrics.csv, predictions.csv%s\n", weights_out.c_str(), report_dir.c_str(),
                    plotted ? ", loss.png, predictions.png" : " (no PNG: gnuplot failed or is missing)");
        return 0;
    });
}
