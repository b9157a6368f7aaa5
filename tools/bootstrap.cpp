// bootstrap: the source paper's §5 loop. Each round generates a dataset of new random pipelines
// with the current weights steering the search, then trains new weights, from random ones (or
// from a manual model, --from-coefficients), on every round's data so far (plus --base-data);
// the next round searches with them.
//
//   bootstrap --config configs/datasets/NAME.yaml --out DIR --rounds R [--pipelines N]
//             [--schedules-per-pipeline S] [--seed S] [--initial-weights random|manual|FILE]
//             [--init-seed 0] [--epochs 40] [--lr 0.001] [--loss throughput|log|pairwise] [--apps LIST|none]
//             [--from-coefficients S.yaml [--correction-bound B]] [--base-data A.h5 ...]
//
// Round r writes DIR/round-r/: dataset.h5 (generate-dataset, run seed S + r), model.weights and
// training/ (train-cost-model's report), apps/ (compare-schedulers: the new weights against our
// manual cost model and Adams2019 on the apps). Round 0 searches with random weights (the
// paper's start), the manual cost model, or a given file. After each round DIR/rounds.csv and
// rounds.png summarize every round so far.
//
// Each step runs as its own program (tools/subprocess.h). A killed or stopped run continues where
// it stopped when the same command is run again (with a larger --rounds to add rounds): a
// finished step is skipped, an unfinished dataset is resumed, unfinished training is redone.
// Other settings than --rounds are refused for an existing DIR.
#include "datagen/config.h"
#include "datasets/operations.h"
#include "datasets/reader.h"
#include "sampler/search_options.h"
#include "tools/app_list.h"
#include "tools/cli.h"
#include "tools/files.h"
#include "tools/subprocess.h"
#include "tools/table.h"
#include "trainer/weights.h"

#include <atomic>
#include <cmath>
#include <csignal>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

namespace fs = std::filesystem;
namespace st = schedforge::trainer;
using schedforge::UserError;
using schedforge::tools::format_number;

namespace {

std::atomic<bool> g_stop{false};

// Ctrl-C reaches the running step too (same process group); it stops on its own and we stop
// after it.
void on_interrupt(int) { g_stop = true; }

// Settings that fix what a run directory holds, in the order bootstrap.txt lists them.
using Settings = std::vector<std::pair<std::string, std::string>>;

std::string settings_text(const Settings &settings) {
    std::string text = "# bootstrap settings (a rerun must match them; --rounds may grow)\n";
    for (const auto &[k, v] : settings) text += k + " = " + v + "\n";
    return text;
}

// Creates DIR with its settings, or checks that an existing run has the same ones.
void claim_run_directory(const fs::path &dir, const Settings &settings) {
    const fs::path file = dir / "bootstrap.txt";
    if (fs::exists(file)) {
        std::ifstream in(file);
        std::string line;
        std::getline(in, line); // the comment
        for (const auto &[key, value] : settings) {
            std::getline(in, line);
            const std::string expected = key + " = " + value;
            if (line != expected) {
                throw UserError(dir.string() + " holds a run with other settings (" + line + ", now " + expected +
                                "); use another --out");
            }
        }
        if (std::getline(in, line) && !line.empty())
            throw UserError(dir.string() + " holds a run with other settings (" + line +
                            ", now unset); use another --out");
        return;
    }
    if (fs::exists(dir) && !fs::is_empty(dir))
        throw UserError(dir.string() + " exists and is not a bootstrap run (no bootstrap.txt); use another --out");
    schedforge::tools::ensure_directory(dir.string());
    schedforge::tools::write_file_atomic(file.string(), settings_text(settings));
}

// What a round achieved, for the summary table.
struct RoundSummary {
    int round = 0;
    uint64_t samples = 0, ok = 0;
    double beam_over_root = 0, best_over_beam = 0; // the round's own search quality (geomeans)
    int best_epoch = -1;                           // of the training run; its validation metrics:
    double loss = 0, r2 = 0, pairwise = 0, tau = 0, regret = 0, relative_error = 0;
    bool validation = false;                              // false: metrics are on the training part
    double learned_over_adams = 0, manual_over_adams = 0; // apps geomean speedups; 0: not run
};

std::vector<std::string> split_csv_simple(const std::string &line) {
    std::vector<std::string> cells;
    std::stringstream s(line);
    for (std::string c; std::getline(s, c, ',');) cells.push_back(c);
    return cells;
}

// The epoch train-cost-model kept: the lowest validation loss (training loss without validation).
void read_training_metrics(const fs::path &csv, RoundSummary &r) {
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line); // epoch,seconds,schedules, 6 train_ columns, 6 validation_ columns
    std::vector<std::vector<double>> rows;
    while (std::getline(in, line)) {
        std::vector<double> row;
        for (const std::string &c : split_csv_simple(line)) row.push_back(std::atof(c.c_str()));
        if (row.size() == 15) rows.push_back(row);
    }
    if (rows.empty()) return;
    r.validation = false;
    for (const auto &row : rows) r.validation |= row[9] > 0;
    const size_t first = r.validation ? 9 : 3;
    const auto best =
        std::min_element(rows.begin(), rows.end(), [&](const auto &a, const auto &b) { return a[first] < b[first]; });
    r.best_epoch = int((*best)[0]);
    r.loss = (*best)[first];
    r.r2 = (*best)[first + 1];
    r.pairwise = (*best)[first + 2];
    r.tau = (*best)[first + 3];
    r.regret = (*best)[first + 4];
    r.relative_error = (*best)[first + 5];
}

// Geomean speedups over Adams2019 of the learned and manual SchedForge columns of
// compare-schedulers' CSV (the scheduler is the 3rd cell; the speedup the last, empty if failed).
void read_apps(const fs::path &csv, RoundSummary &r) {
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line);
    double log_learned = 0, log_manual = 0;
    int n_learned = 0, n_manual = 0;
    while (std::getline(in, line)) {
        const std::vector<std::string> cells = split_csv_simple(line);
        const std::string speedup = line.substr(line.rfind(',') + 1);
        if (cells.size() < 3 || speedup.empty()) continue;
        const double v = std::atof(speedup.c_str());
        if (!(v > 0)) continue;
        if (cells[2] == "SchedForgeLearned") log_learned += std::log(v), n_learned++;
        if (cells[2] == "SchedForge") log_manual += std::log(v), n_manual++;
    }
    r.learned_over_adams = n_learned ? std::exp(log_learned / n_learned) : 0;
    r.manual_over_adams = n_manual ? std::exp(log_manual / n_manual) : 0;
}

RoundSummary summarize_round(int round, const fs::path &dir) {
    RoundSummary r;
    r.round = round;
    const std::string data = (dir / "dataset.h5").string();
    const auto reader = schedforge::datasets::DatasetReader::open(data);
    const schedforge::datasets::DatasetSummary s = schedforge::datasets::summarize(*reader, data);
    r.samples = s.schedules;
    r.ok = s.by_status[size_t(schedforge::datasets::Status::Ok)];
    r.beam_over_root = s.beam_speedup_over_root;
    r.best_over_beam = s.best_speedup_over_beam;
    read_training_metrics(dir / "training" / "metrics.csv", r);
    if (fs::exists(dir / "apps" / "comparison.csv")) read_apps(dir / "apps" / "comparison.csv", r);
    return r;
}

std::string cell(double v, const char *spec = "%.3f") { return v > 0 ? format_number(spec, v) : "-"; }

void report_rounds(const fs::path &dir, const std::vector<RoundSummary> &rounds) {
    schedforge::tools::Table table({"round", "ok/samples", "beam/root", "best/beam", "epoch", "val loss", "val R2",
                                    "pair acc", "tau", "regret", "rel err", "apps learned/A19", "apps manual/A19"});
    std::string csv = "round,samples,ok,beam_over_root,best_over_beam,best_epoch,metrics_on,loss,r2_log,"
                      "pairwise_accuracy,kendall_tau,top1_regret,mean_relative_error,apps_learned_over_adams2019,"
                      "apps_manual_over_adams2019\n";
    for (const RoundSummary &r : rounds) {
        table.add_row({std::to_string(r.round), std::to_string(r.ok) + "/" + std::to_string(r.samples),
                       cell(r.beam_over_root, "%.2f"), cell(r.best_over_beam, "%.2f"), std::to_string(r.best_epoch),
                       format_number("%.4g", r.loss), format_number("%.3f", r.r2), format_number("%.3f", r.pairwise),
                       format_number("%.3f", r.tau), format_number("%.3f", r.regret),
                       format_number("%.3f", r.relative_error), cell(r.learned_over_adams, "%.2f"),
                       cell(r.manual_over_adams, "%.2f")});
        std::ostringstream row;
        row << r.round << "," << r.samples << "," << r.ok << "," << r.beam_over_root << "," << r.best_over_beam << ","
            << r.best_epoch << "," << (r.validation ? "validation" : "train") << "," << r.loss << "," << r.r2 << ","
            << r.pairwise << "," << r.tau << "," << r.regret << "," << r.relative_error << "," << r.learned_over_adams
            << "," << r.manual_over_adams << "\n";
        csv += row.str();
    }
    std::cout << "\nbootstrap rounds (metrics of the kept epoch, on held-out pipelines of all data so far; speedups "
                 "are geomeans)\n";
    table.print(std::cout);
    const std::string csv_path = (dir / "rounds.csv").string();
    schedforge::tools::write_file_atomic(csv_path, csv);
    // Ranking quality on held-out pipelines, and the apps' geomean speedups (a missing score is
    // not plotted).
    const std::string gp = "set datafile separator ','\nset title 'Bootstrap rounds'\nset xlabel 'round'\n"
                           "set xtics 1\nset grid\nset key outside right\nset pointsize 1.5\nplot '" +
                           csv_path +
                           "' using 1:10 skip 1 with linespoints title 'pairwise accuracy', '' using 1:11 skip 1 "
                           "with linespoints title 'Kendall tau', '' using 1:($14 > 0 ? $14 : NaN) skip 1 with "
                           "linespoints title 'apps: learned / Adams2019', '' using 1:($15 > 0 ? $15 : NaN) skip 1 "
                           "with linespoints dashtype 2 title 'apps: manual / Adams2019'\n";
    const bool plotted = schedforge::tools::run_gnuplot((dir / "rounds.png").string(), gp);
    std::cout << "wrote " << csv_path << (plotted ? ", rounds.png" : " (no PNG: gnuplot failed or is missing)") << "\n";
}

// Thrown when Ctrl-C stopped a step: the run ends with 130, to be continued by a rerun.
struct Stopped {};

// Runs one step; a failure ends the run (exit 1, or 2 for a user error), a stop too (exit 130).
void run_step(const std::string &what, const std::string &program, const std::vector<std::string> &args) {
    std::cout << "\n== " << what << "\n" << std::flush;
    const int rc = schedforge::tools::run_program(schedforge::tools::sibling_program(program), args);
    if (rc == 130 || g_stop) throw Stopped{};
    // The step printed why; exit 2 (it refused its input, e.g. a changed config file) stays a
    // user error.
    if (rc == 2) throw UserError(what + ": " + program + " refused its input (see above)");
    if (rc != 0) throw std::runtime_error(what + ": " + program + " failed (exit " + std::to_string(rc) + ")");
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"The bootstrap loop: generate a dataset with the current weights, retrain on all data, repeat.",
                 "bootstrap"};
    std::string config_path, out_dir, initial = "random", loss = "throughput", apps = "blur3x3,unsharp_mask,harris";
    std::string coefficients_config;
    std::vector<std::string> base_data;
    double correction_bound = 0;
    int rounds = 0;
    std::optional<int64_t> pipelines, schedules;
    std::optional<uint64_t> seed;
    uint64_t init_seed = 0;
    int epochs = 40;
    double lr = 1e-3;
    app.add_option("--config", config_path, "Dataset config (configs/datasets/*.yaml)")->required();
    app.add_option("--out", out_dir, "The run's folder (created; an existing run continues)")->required();
    app.add_option("--rounds", rounds, "Rounds to have done (a rerun with more adds rounds)")->required();
    app.add_option("--pipelines", pipelines, "Random pipelines per round (default: the config's)");
    app.add_option("--schedules-per-pipeline", schedules, "Schedules per pipeline (default: the config's)");
    app.add_option("--seed", seed, "Run seed of round 0; round r uses seed + r (default: the config's)");
    app.add_option("--initial-weights", initial, "Round 0's search: random (the paper), manual, or a weights file")
        ->capture_default_str();
    app.add_option("--init-seed", init_seed, "Seed of the random weights (round 0's, and every training's start)")
        ->capture_default_str();
    app.add_option("--epochs", epochs, "Training epochs per round")->capture_default_str();
    app.add_option("--lr", lr, "Adam's learning rate")->capture_default_str();
    app.add_option("--loss", loss, "throughput, log or pairwise (see train-cost-model)")->capture_default_str();
    app.add_option("--apps", apps, "Apps scored after each round: a comma-separated list, all, or none")
        ->capture_default_str();
    app.add_option("--from-coefficients", coefficients_config,
                   "Train each round from the manual model with this search config's coefficients (learning "
                   "corrections to it) instead of from random weights");
    app.add_option("--correction-bound", correction_bound,
                   "With --from-coefficients: keep the corrections within [1/B, B] (train-cost-model)");
    app.add_option("--base-data", base_data, "Datasets every round also trains on (e.g. committed corpora)")
        ->expected(1, -1);
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        if (rounds < 1) throw UserError("--rounds must be at least 1");
        if (epochs < 1) throw UserError("--epochs must be at least 1");
        if (!(lr > 0)) throw UserError("--lr must be positive");
        if (!st::loss_kind_named(loss)) throw UserError("--loss must be throughput, log or pairwise");
        if (apps != "none") schedforge::tools::parse_app_list(apps);
        st::check_correction_bound_option(correction_bound, !coefficients_config.empty());
        if (!coefficients_config.empty()) {
            schedforge::sampler::load_search_options(coefficients_config); // UserError if bad
            coefficients_config = fs::absolute(coefficients_config).lexically_normal().string();
        }
        for (std::string &d : base_data) {
            schedforge::datasets::DatasetReader::open(d); // UserError if missing or not a dataset
            d = fs::absolute(d).lexically_normal().string();
        }
        schedforge::datagen::DatasetConfig config = schedforge::datagen::load_dataset_config(config_path);
        if (!config.search.weights.empty())
            throw UserError(config_path + ": names search weights; bootstrap chooses each round's weights itself");
        if (pipelines) config.pipelines = *pipelines;
        if (schedules) config.schedules_per_pipeline = *schedules;
        if (seed) config.seed = *seed;
        config.validate("command line");
        std::optional<st::Weights> given;
        if (initial != "random" && initial != "manual") given = st::Weights::load(initial); // UserError if bad

        const fs::path dir = fs::absolute(out_dir);
        const std::string config_file = fs::absolute(config_path).lexically_normal().string();
        Settings settings = {
            {"config", config_file},
            {"pipelines", std::to_string(config.pipelines)},
            {"schedules_per_pipeline", std::to_string(config.schedules_per_pipeline)},
            {"seed", std::to_string(config.seed)},
            {"initial_weights", given ? fs::absolute(initial).lexically_normal().string() : initial},
            {"init_seed", std::to_string(init_seed)},
            {"epochs", std::to_string(epochs)},
            {"lr", format_number("%.9g", lr)},
            {"loss", loss},
            {"apps", apps},
        };
        // Keys after these are written only when set, so that runs from before them continue.
        if (!coefficients_config.empty()) settings.push_back({"from_coefficients", coefficients_config});
        if (correction_bound != 0) settings.push_back({"correction_bound", format_number("%.9g", correction_bound)});
        for (const std::string &d : base_data) settings.push_back({"base_data", d});
        claim_run_directory(dir, settings);
        // Round 0's weights live in the run, so that a rerun does not depend on the original file.
        std::string search_weights;
        if (initial != "manual") {
            search_weights = (dir / "initial.weights").string();
            if (!fs::exists(search_weights)) (given ? *given : st::Weights::random(init_seed)).save(search_weights);
        }

        std::signal(SIGINT, on_interrupt);
        std::vector<RoundSummary> summaries;
        std::vector<std::string> data = base_data;
        const std::string start =
            coefficients_config.empty() ? "random weights" : "the manual model of " + coefficients_config;
        try {
            for (int r = 0; r < rounds; r++) {
                const fs::path round_dir = dir / ("round-" + std::to_string(r));
                schedforge::tools::ensure_directory(round_dir.string());
                const std::string name = "round " + std::to_string(r) + " of " + std::to_string(rounds);
                const std::string dataset = (round_dir / "dataset.h5").string();
                const fs::path complete = round_dir / "dataset.complete";
                if (!fs::exists(complete)) {
                    std::vector<std::string> args = {"--config",
                                                     config_file,
                                                     "--out",
                                                     dataset,
                                                     "--pipelines",
                                                     std::to_string(config.pipelines),
                                                     "--schedules-per-pipeline",
                                                     std::to_string(config.schedules_per_pipeline),
                                                     "--seed",
                                                     std::to_string(config.seed + uint64_t(r))};
                    if (!search_weights.empty()) args.insert(args.end(), {"--weights", search_weights});
                    if (fs::exists(dataset)) args.push_back("--resume");
                    run_step(name + ": dataset, searched with " +
                                 (search_weights.empty() ? std::string("the manual cost model") : search_weights),
                             "generate-dataset", args);
                    schedforge::tools::write_file_atomic(complete.string(), "generate-dataset finished\n");
                }
                data.push_back(dataset);

                const std::string weights = (round_dir / "model.weights").string();
                if (!fs::exists(weights)) {
                    std::vector<std::string> args = {"--data"};
                    args.insert(args.end(), data.begin(), data.end());
                    args.insert(args.end(), {"--random-init", std::to_string(init_seed), "--weights-out", weights,
                                             "--epochs", std::to_string(epochs), "--lr", format_number("%.9g", lr),
                                             "--loss", loss, "--report", (round_dir / "training").string()});
                    if (!coefficients_config.empty()) {
                        args.insert(args.end(), {"--from-coefficients", coefficients_config, "--correction-bound",
                                                 format_number("%.9g", correction_bound)});
                    }
                    run_step(
                        name + ": training on " + std::to_string(r + 1) + " rounds' data" +
                            (base_data.empty() ? "" : " and " + std::to_string(base_data.size()) + " base datasets") +
                            ", from " + start,
                        "train-cost-model", args);
                }
                search_weights = weights;

                if (apps != "none" && !fs::exists(round_dir / "apps" / "comparison.csv")) {
                    run_step(name + ": the apps with the new weights", "compare-schedulers",
                             {"--apps", apps, "--pipelines", "0", "--schedulers",
                              "SchedForgeLearned,SchedForge,Adams2019", "--baseline", "Adams2019", "--weights", weights,
                              "--out", (round_dir / "apps").string()});
                }
                summaries.push_back(summarize_round(r, round_dir));
                report_rounds(dir, summaries);
            }
        } catch (const Stopped &) {
            std::cerr << "bootstrap: stopped; run the same command again to continue\n";
            return 130;
        }
        std::cout << "done: " << rounds << " rounds in " << dir.string() << "; the last weights are " << search_weights
                  << "\n";
        return 0;
    });
}
