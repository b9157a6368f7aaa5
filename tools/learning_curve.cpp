// learning-curve: how the cost models' held-out quality grows with the training data, to tell
// whether more data or a better model is the lever (issue 23, part E). The pipelines are split
// as train-cost-model and calibrate split them (by a hash of their id); for each size, the first
// pipelines of the training part (in dataset order, so each size holds the smaller ones) train
// the learned model from the same random weights, and calibrate the manual model's coefficients
// (least squares, sampler/calibrate.h), and train the learned model again from those calibrated
// coefficients (trainer/weights.h, Weights::from_coefficients: the manual model plus a learned
// correction). Each is scored on the whole validation part: the learned models at their best
// epoch, beside the manual model with its starting coefficients. With --heldout, each is also
// scored on those files (pipelines of their own, e.g. corpora/'s held-out set), which then give
// the table and the plot: the validation part picks the epochs, so nothing is chosen on them.
//
//   learning-curve --data A.h5 [B.h5 ...] --out DIR [--sizes 0.1,0.3,1] [--epochs 100]
//                  [--lr 0.001] [--validation-fraction 0.2] [--init-seed 0] [--search-config S.yaml]
//                  [--heldout H.h5 ...]
//
// Writes DIR/curve.csv (one row per size and model) and DIR/curve.png (pairwise accuracy, R^2 of
// log runtime and top-1 regret against training schedules).
#include "tools/cli.h"
#include "tools/files.h"
#include "tools/progress.h"
#include "tools/table.h"

#include "sampler/calibrate.h"
#include "sampler/search_options.h"
#include "trainer/train.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
namespace ss = schedforge::sampler;
namespace st = schedforge::trainer;

namespace {

struct Point {
    std::string model;
    size_t pipelines = 0, schedules = 0;
    int best_epoch = -1; // the learned model's; -1 for the manual model
    st::Metrics validation, heldout;
};

// The first `count` training pipelines.
st::TrainingData first_pipelines(const st::TrainingData &all, size_t count) {
    st::TrainingData d;
    d.pipelines.assign(all.pipelines.begin(), all.pipelines.begin() + std::ptrdiff_t(count));
    return d;
}

// `heldout`: plot the columns of the held-out files' metrics instead of the validation part's.
bool plot_curve(const std::string &csv, const std::string &png, bool heldout) {
    // Columns: model,pipelines,schedules,best_epoch then metrics (loss,r2,pairwise,tau,regret,rel),
    // for the validation part and then, with --heldout, for the held-out files.
    const int offset = heldout ? 6 : 0;
    const std::string series = "'" + csv + "' using 3:(strcol(1) eq '%s' ? $%d : NaN) with linespoints title '%s'";
    auto line = [&](const char *model, int column, const char *title) {
        char buf[512];
        std::snprintf(buf, sizeof(buf), series.c_str(), model, column + offset, title);
        return std::string(buf);
    };
    const std::string gp =
        "set datafile separator ','\nset multiplot layout 1,2 title '" +
        std::string(heldout ? "Quality on the held-out files" : "Held-out quality") +
        " against training data'\n"
        "set xlabel 'training schedules'\nset logscale x\nset grid\nset key bottom right\nset yrange [0:1]\n"
        "set title 'pairwise accuracy and R^2 (log)'\nplot " +
        line("learned", 7, "learned: pairwise") + ", " + line("learned", 6, "learned: R^2") + ", " +
        line("manual-calibrated", 7, "calibrated manual: pairwise") + ", " +
        line("manual-calibrated", 6, "calibrated manual: R^2") + ", " +
        line("learned-from-calibrated", 7, "learned from calibrated: pairwise") + ", " +
        line("learned-from-calibrated", 6, "learned from calibrated: R^2") + ", " +
        line("manual", 7, "manual: pairwise") + ", " + line("manual", 6, "manual: R^2") +
        "\nset title 'top-1 regret'\nset key top right\nset autoscale y\nplot " + line("learned", 9, "learned") + ", " +
        line("manual-calibrated", 9, "calibrated manual") + ", " +
        line("learned-from-calibrated", 9, "learned from calibrated") + ", " + line("manual", 9, "manual") +
        "\nunset multiplot\n";
    return schedforge::tools::run_gnuplot(png, gp, "1300,550", /*enhanced=*/true); // R^2
}

std::vector<double> parse_sizes(const std::string &text) {
    std::vector<double> sizes;
    for (const std::string &item : schedforge::tools::split_list(text)) {
        char *end = nullptr;
        const double v = std::strtod(item.c_str(), &end);
        if (*end != '\0' || !(v > 0 && v <= 1))
            throw schedforge::UserError("--sizes: '" + item + "' is not a fraction in (0, 1]");
        sizes.push_back(v);
    }
    if (sizes.empty()) throw schedforge::UserError("--sizes: give at least one fraction");
    std::sort(sizes.begin(), sizes.end());
    return sizes;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Held-out quality of the learned and the calibrated manual cost model against training data size.",
                 "learning-curve"};
    std::vector<std::string> data, heldout_files;
    std::string out, sizes_text = "0.1,0.3,1", search_config;
    double validation_fraction = 0.2;
    uint64_t init_seed = 0;
    st::TrainOptions options;
    options.epochs = 100;
    app.add_option("--data", data, "dataset files (generate-dataset's HDF5)")->required()->expected(1, -1);
    app.add_option("--out", out, "output folder (created if missing)")->required();
    app.add_option("--sizes", sizes_text, "fractions of the training pipelines, comma-separated")
        ->capture_default_str();
    app.add_option("--epochs", options.epochs, "epochs per learned model (the best is scored)")->capture_default_str();
    app.add_option("--lr", options.learning_rate, "Adam's learning rate")->capture_default_str();
    app.add_option("--validation-fraction", validation_fraction, "pipelines held out (by a hash of their id)")
        ->capture_default_str();
    app.add_option("--init-seed", init_seed, "seed of the learned model's random initial weights")
        ->capture_default_str();
    app.add_option("--search-config", search_config, "the manual model's starting coefficients (default: built-in)");
    app.add_option("--heldout", heldout_files, "also score every model on these datasets (pipelines not in --data)")
        ->expected(1, -1);
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        using schedforge::UserError;
        const std::vector<double> sizes = parse_sizes(sizes_text);
        if (options.epochs < 1) throw UserError("--epochs must be at least 1");
        if (!(options.learning_rate > 0)) throw UserError("--lr must be positive");
        if (!(validation_fraction > 0 && validation_fraction < 1))
            throw UserError("--validation-fraction must be in (0, 1): the curve is measured on held-out pipelines");
        const ss::SearchOptions start =
            search_config.empty() ? ss::SearchOptions() : ss::load_search_options(search_config);
        st::TrainingData train_set, validation;
        st::load_training_split(data, validation_fraction, train_set, validation);
        if (validation.pipelines.empty()) throw UserError("no pipeline is held out: use more pipelines");
        const bool scored_heldout = !heldout_files.empty();
        const st::TrainingData heldout = scored_heldout ? st::load_training_data(heldout_files) : st::TrainingData();
        if (scored_heldout) {
            std::set<uint64_t> trained;
            for (const auto *part : {&train_set, &validation})
                for (const st::TrainingPipeline &p : part->pipelines) trained.insert(p.id);
            for (const st::TrainingPipeline &p : heldout.pipelines) {
                if (trained.count(p.id))
                    throw UserError("--heldout: pipeline " + std::to_string(p.id) + " of " + p.source +
                                    " is in --data too");
            }
        }
        auto score = [&](const st::Model &model) {
            return scored_heldout ? st::compute_metrics(st::predict_all(model, heldout), options.loss) : st::Metrics();
        };
        auto score_manual = [&](const ss::Coefficients &c) {
            return scored_heldout ? ss::manual_metrics(heldout, c) : st::Metrics();
        };
        schedforge::tools::ensure_directory(out);
        std::printf("train: %zu pipelines, %zu schedules; validation: %zu pipelines, %zu schedules",
                    train_set.pipelines.size(), train_set.num_schedules(), validation.pipelines.size(),
                    validation.num_schedules());
        if (scored_heldout)
            std::printf("; held out: %zu pipelines, %zu schedules", heldout.pipelines.size(), heldout.num_schedules());
        std::printf("\n");

        std::vector<Point> points;
        const st::Metrics manual = ss::manual_metrics(validation, start.coefficients),
                          manual_heldout = score_manual(start.coefficients);
        schedforge::tools::ProgressBar bar("sizes", int64_t(sizes.size()));
        for (double size : sizes) {
            const size_t count = std::max<size_t>(1, size_t(std::lround(size * double(train_set.pipelines.size()))));
            const st::TrainingData subset = first_pipelines(train_set, count);
            const size_t schedules = subset.num_schedules();
            auto learn = [&](const std::string &name, const st::Weights &from) {
                st::Model model(from);
                const st::TrainResult r = st::train(model, subset, validation, options);
                points.push_back({name, count, schedules, r.best_epoch, r.epochs[size_t(r.best_epoch)].validation,
                                  score(st::Model(r.best_weights))});
            };
            learn("learned", st::Weights::random(init_seed));
            const ss::Coefficients fitted = ss::calibrate(subset, start.coefficients);
            points.push_back({"manual-calibrated", count, schedules, -1, ss::manual_metrics(validation, fitted),
                              score_manual(fitted)});
            learn("learned-from-calibrated", st::Weights::from_coefficients(fitted, init_seed, "calibrated"));
            points.push_back({"manual", count, schedules, -1, manual, manual_heldout});
            bar.step();
        }

        // One model's rows together, so the plot joins them (a filtered row breaks a line).
        std::stable_sort(points.begin(), points.end(),
                         [](const Point &a, const Point &b) { return a.model < b.model; });
        std::ostringstream csv;
        csv << "model,pipelines,schedules,best_epoch" << st::metrics_csv_columns("validation_")
            << (scored_heldout ? st::metrics_csv_columns("heldout_") : "") << "\n";
        using schedforge::tools::format_number;
        schedforge::tools::Table table({"model", "pipelines", "schedules", "epoch", "R2 log", "pairwise", "regret"});
        for (const Point &p : points) {
            csv << p.model << "," << p.pipelines << "," << p.schedules << "," << p.best_epoch
                << st::metrics_csv_values(p.validation) << (scored_heldout ? st::metrics_csv_values(p.heldout) : "")
                << "\n";
            const st::Metrics &m = scored_heldout ? p.heldout : p.validation;
            table.add_row({p.model, std::to_string(p.pipelines), std::to_string(p.schedules),
                           p.best_epoch < 0 ? "-" : std::to_string(p.best_epoch), format_number("%.3f", m.r2_log),
                           format_number("%.3f", m.pairwise_accuracy), format_number("%.3f", m.top1_regret)});
        }
        std::printf("scored on %s:\n", scored_heldout ? "the held-out files" : "the validation part");
        table.print(std::cout);
        const std::string csv_path = (fs::path(out) / "curve.csv").string();
        schedforge::tools::write_file_atomic(csv_path, csv.str());
        const bool plotted = plot_curve(csv_path, (fs::path(out) / "curve.png").string(), scored_heldout);
        std::printf("wrote %s%s\n", csv_path.c_str(),
                    plotted ? ", curve.png" : " (no PNG: gnuplot failed or is missing)");
        return 0;
    });
}
