// schedule-report: how well the cost model ranks the schedules of one pipeline, and why not.
//
//   schedule-report --out DIR (--app NAME | --pipeline SEED [--config GENERATOR.yaml])
//                   [--search-config SEARCH.yaml] [--weights W] [--beam 32] [--passes 5]
//                   [--beam-states 4] [--dropout-samples 16] [--random 8] [--seed 0]
//                   [--references manual,Adams2019,Mullapudi2016] [--pairs 3]
//                   [--target host] [--threads T] [--compile-timeout 600] [--run-timeout 60]
//
// Benchmarks a population of schedules of the subject (datagen/schedule_report.h: the search's
// result and runners-up, dropout samples, random loop nests) beside reference lines (the app's
// hand-written schedule, Halide's autoschedulers), then reports the model's pairwise accuracy and
// top-1 regret on the population and, for the worst mis-ranked pairs, the manual model's 31 terms
// and the stages' costs side by side with the measurements. DIR receives report.md (also printed),
// population.h5 (the population as a dataset), population.csv, predicted_vs_measured.png
// (gnuplot) and schedules/ (each member's schedule source, and each Halide autoscheduler's among
// the references). Without --search-config, the model is the search's default on this machine
// (sampler/machine_calibration.h).
#include "datagen/schedule_report.h"
#include "featurize/cost_terms.h"
#include "generator/config.h"
#include "generator/synthesize.h"
#include "sampler/machine_calibration.h"
#include "tools/cli.h"
#include "tools/files.h"
#include "tools/progress.h"
#include "tools/table.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

namespace {

namespace fs = std::filesystem;
namespace sh = schedforge::datagen;
namespace sf = schedforge::featurize;
namespace ss = schedforge::sampler;
namespace runner = schedforge::runner;
using schedforge::UserError;
using schedforge::tools::format_number;

std::string ms(double seconds) { return std::isfinite(seconds) ? format_number("%.3f", 1e3 * seconds) : "-"; }
std::string file_label(const std::string &label) {
    std::string s;
    for (char c : label) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return s;
}

// A markdown table (rows of cells, the first the header).
std::string markdown(const std::vector<std::vector<std::string>> &rows) {
    std::string s;
    for (size_t r = 0; r < rows.size(); r++) {
        s += "|";
        for (const std::string &c : rows[r]) s += " " + c + " |";
        s += "\n";
        if (r == 0) {
            s += "|";
            for (size_t i = 0; i < rows[r].size(); i++) s += " --- |";
            s += "\n";
        }
    }
    return s;
}

// One mis-ranked pair: terms and stages, where they differ by at least 1% of the larger total.
std::string explain_pair(const sh::Report &r, const sh::MisrankedPair &w) {
    const sh::Member &a = r.members[w.better], &b = r.members[w.worse];
    const auto ta = a.term_totals(), tb = b.term_totals();
    double total_a = 0, total_b = 0;
    for (size_t i = 0; i < ta.size(); i++) total_a += ta[i], total_b += tb[i];
    const double floor = 0.01 * std::max(total_a, total_b);
    std::string s = "### " + a.label + " (predicted faster) vs " + b.label + "\n\n";
    s += "Measured " + ms(a.measured) + " ms vs " + ms(b.measured) + " ms (" + format_number("%.2f", w.measured_ratio) +
         "x slower); predicted " + format_number("%.4g", a.predicted) + " vs " + format_number("%.4g", b.predicted) +
         " (" + format_number("%.2f", w.predicted_ratio) + "x faster).\n\n";
    std::vector<size_t> order;
    for (size_t i = 0; i < ta.size(); i++) {
        if (std::max(std::abs(ta[i]), std::abs(tb[i])) >= floor) order.push_back(i);
    }
    std::sort(order.begin(), order.end(),
              [&](size_t x, size_t y) { return std::abs(ta[x] - tb[x]) > std::abs(ta[y] - tb[y]); });
    std::vector<std::vector<std::string>> rows{{"term (manual model, ms)", a.label, b.label, "difference"}};
    for (size_t i : order) {
        rows.push_back({sf::cost_term_names()[i], format_number("%.4g", ta[i] * 1e-6),
                        format_number("%.4g", tb[i] * 1e-6), format_number("%+.4g", (ta[i] - tb[i]) * 1e-6)});
    }
    rows.push_back({"**total**", format_number("%.4g", total_a * 1e-6), format_number("%.4g", total_b * 1e-6),
                    format_number("%+.4g", (total_a - total_b) * 1e-6)});
    s += markdown(rows) + "\n";
    std::vector<std::vector<std::string>> stages{{"stage (manual model, ms)", a.label, b.label}};
    for (size_t st = 0; st < a.stage_terms.size() && st < b.stage_terms.size() && st < r.stage_names.size(); st++) {
        double ca = 0, cb = 0;
        for (size_t i = 0; i < ta.size(); i++) ca += a.stage_terms[st][i], cb += b.stage_terms[st][i];
        if (std::abs(ca - cb) >= floor)
            stages.push_back({r.stage_names[st], format_number("%.4g", ca * 1e-6), format_number("%.4g", cb * 1e-6)});
    }
    if (stages.size() > 1) s += markdown(stages) + "\n";
    s += "Schedules: `schedules/" + file_label(a.label) + ".cpp`, `schedules/" + file_label(b.label) + ".cpp`.\n\n";
    return s;
}

bool plot(const std::string &dir, const sh::Report &r, const std::string &title) {
    std::string data;
    for (const char *kind : {"beam", "dropout", "random"}) {
        data += "# " + std::string(kind) + "\n";
        for (const sh::Member &m : r.members) {
            if (m.ok() && std::isfinite(m.predicted) && sh::member_kind_name(m.kind) == std::string(kind))
                data += format_number("%.6g", m.predicted) + " " + format_number("%.6g", 1e3 * m.measured) + "\n";
        }
        data += "\n\n";
    }
    const std::string data_path = dir + "/predicted_vs_measured.dat";
    schedforge::tools::write_file_atomic(data_path, data);
    std::string gp = "set title '" + title + "'\nset logscale xy\nset xlabel 'predicted cost'\n";
    gp += "set ylabel 'measured runtime (ms)'\nset key outside right\nset grid\nplot ";
    gp += "'" + data_path + "' index 0 with points pt 7 ps 1.5 title 'beam', ";
    gp += "'" + data_path + "' index 1 with points pt 5 title 'dropout', ";
    gp += "'" + data_path + "' index 2 with points pt 9 title 'random'";
    for (const sh::Member &m : r.members) {
        if (m.kind == sh::MemberKind::Reference && m.ok())
            gp += ", " + format_number("%.6g", 1e3 * m.measured) + " with lines dt 2 lw 2 title '" + m.label + "'";
    }
    gp += "\n";
    return schedforge::tools::run_gnuplot(dir + "/predicted_vs_measured.png", gp);
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Benchmark a population of schedules of one pipeline and show where the cost model ranks them wrong.",
                 "schedule-report"};
    std::string app_name, generator_config, search_config, weights, out_dir, references_text;
    std::optional<uint64_t> pipeline_seed;
    std::optional<int> beam, passes;
    sh::ReportConfig config;
    auto *app_opt = app.add_option("--app", app_name, "An app of the suite (see apps/)");
    auto *pipe_opt = app.add_option("--pipeline", pipeline_seed, "Seed of a random pipeline");
    app_opt->excludes(pipe_opt);
    app.add_option("--out", out_dir, "Output folder (created if missing)")->required();
    app.add_option("--config", generator_config, "Generator config for --pipeline")->check(CLI::ExistingFile);
    app.add_option("--search-config", search_config, "Search config (YAML)")->check(CLI::ExistingFile);
    app.add_option("--weights", weights, "Learned cost model weights; default: the manual model");
    app.add_option("--beam", beam, "Beam size of the search");
    app.add_option("--passes", passes, "Coarse-to-fine passes of the search");
    app.add_option("--beam-states", config.beam_states, "The search's result and runners-up of its final beam");
    app.add_option("--dropout-samples", config.dropout_samples, "Schedules sampled with dropout 0.5 (beam 1)");
    app.add_option("--random", config.random_nests, "Random legal loop nests");
    app.add_option("--seed", config.seed, "Seed of the dropout samples and random nests");
    app.add_option("--references", references_text,
                   "Reference lines: manual (apps), Adams2019, Mullapudi2016, Li2018 (default: manual for apps, "
                   "Adams2019, Mullapudi2016)");
    app.add_option("--pairs", config.pairs, "Worst mis-ranked pairs to explain")->check(CLI::NonNegativeNumber);
    app.add_option("--target", config.runner.target, "Halide target for compiling and timing");
    app.add_option("--threads", config.runner.timing.threads, "Halide runtime threads (0: one per CPU it may use)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--compile-timeout", config.runner.compile_timeout_seconds, "Seconds per compile (incl. search)");
    app.add_option("--run-timeout", config.runner.run_timeout_seconds, "Seconds per benchmark");
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        if (app_name.empty() && !pipeline_seed) throw UserError("give --app NAME or --pipeline SEED");
        std::string searched_with;
        config.search = ss::search_options_or_default(search_config, &searched_with);
        if (!weights.empty()) config.search.weights = weights;
        if (beam) config.search.beam_size = *beam;
        if (passes) config.search.passes = *passes;
        config.search.validate("command line");
        if (pipeline_seed) {
            const auto cfg = generator_config.empty() ? schedforge::gen::GeneratorConfig()
                                                      : schedforge::gen::load_generator_config(generator_config);
            config.pipeline = schedforge::gen::synthesize_pipeline(cfg, *pipeline_seed);
        }
        config.app = app_name;
        config.references = references_text.empty()
                                ? (app_name.empty() ? std::vector<std::string>{"Adams2019", "Mullapudi2016"}
                                                    : std::vector<std::string>{"manual", "Adams2019", "Mullapudi2016"})
                                : schedforge::tools::split_list(references_text);
        if (!Halide::Target::validate_target_string(config.runner.target))
            throw UserError("--target '" + config.runner.target + "' is not a Halide target");
        if (Halide::Target(config.runner.target).has_gpu_feature()) // it prices schedules with the CPU model
            throw UserError("--target: schedule-report ranks CPU schedules; GPU ones have no cost model yet");
        config.runner.integer_tolerance = 1; // fast-math may move a float that becomes an integer by one
        config.validate();
        if (fs::exists(out_dir + "/population.h5"))
            throw UserError(out_dir + "/population.h5 already exists: choose another --out");
        schedforge::tools::ensure_directory(out_dir);
        schedforge::tools::ensure_directory(out_dir + "/schedules");
        config.runner.worker_log = out_dir + "/workers.log";

        const int64_t members =
            int64_t(config.references.size()) + config.beam_states + config.dropout_samples + config.random_nests;
        schedforge::tools::ProgressBar progress("schedules", members);
        int failed = 0;
        const sh::Report r = sh::run_schedule_report(config, out_dir + "/population.h5", [&](const sh::Member &m) {
            failed += !m.ok();
            progress.step(failed ? std::to_string(failed) + " failed" : "");
        });
        progress.finish();

        const sh::ReportAnalysis &a = r.analysis;
        const std::string subject = config.subject_name();
        std::string md = "# schedule-report: " + subject + "\n\n";
        md += "Cost model: " + (config.search.weights.empty() ? std::string("manual") : "learned (" + weights + ")") +
              "; search config: " + searched_with + ". Population: " + std::to_string(a.ranked) +
              " schedules ran (beam " + std::to_string(config.beam_states) + ", dropout " +
              std::to_string(config.dropout_samples) + ", random " + std::to_string(config.random_nests) +
              "); compute_root " + ms(r.reference_runtime) + " ms.\n\n";
        if (a.ranked > 0) {
            const sh::Member &pb = r.members[a.predicted_best], &mb = r.members[a.measured_best];
            md += markdown({{"pairwise accuracy", "Kendall tau", "top-1 regret", "R^2 (log, scaled)", "predicted best",
                             "measured best"},
                            {format_number("%.3f", a.pairwise_accuracy), format_number("%.3f", a.kendall_tau),
                             format_number("%.2f", a.top1_regret), format_number("%.3f", a.r2_log),
                             pb.label + " (" + ms(pb.measured) + " ms)", mb.label + " (" + ms(mb.measured) + " ms)"}});
            md += "\n";
        }
        std::vector<const sh::Member *> sorted;
        for (const sh::Member &m : r.members) sorted.push_back(&m);
        std::stable_sort(sorted.begin(), sorted.end(), [](const sh::Member *x, const sh::Member *y) {
            return x->ok() != y->ok() ? x->ok() : x->ok() && x->measured < y->measured;
        });
        std::vector<std::vector<std::string>> rows{{"schedule", "kind", "measured ms", "predicted", "status"}};
        std::string csv = "label,kind,sample,seed,status,measured_s,predicted,message\n";
        for (const sh::Member *m : sorted) {
            rows.push_back({m->label, sh::member_kind_name(m->kind), ms(m->measured),
                            std::isfinite(m->predicted) ? format_number("%.4g", m->predicted) : "-",
                            runner::status_name(m->status)});
            csv += m->label + "," + sh::member_kind_name(m->kind) + "," + std::to_string(m->sample) + "," +
                   std::to_string(m->seed) + "," + runner::status_name(m->status) + "," +
                   format_number("%.9g", m->measured) + "," + format_number("%.9g", m->predicted) + ",\"" +
                   m->message.substr(0, m->message.find('\n')) + "\"\n";
            if (!m->source.empty()) {
                schedforge::tools::write_file_atomic(out_dir + "/schedules/" + file_label(m->label) + ".cpp",
                                                     m->source);
            }
        }
        md += markdown(rows) + "\n";
        if (!a.worst.empty()) md += "## Worst mis-ranked pairs\n\n";
        for (const sh::MisrankedPair &w : a.worst) md += explain_pair(r, w);
        std::cout << md;
        schedforge::tools::write_file_atomic(out_dir + "/report.md", md);
        schedforge::tools::write_file_atomic(out_dir + "/population.csv", csv);
        const bool plotted = plot(out_dir, r, subject + ": predicted vs measured");
        std::cout << "wrote " << out_dir << "/report.md, population.h5, population.csv, schedules/"
                  << (plotted ? ", predicted_vs_measured.png" : " (no PNG: gnuplot failed or is missing)") << "\n";
        return 0;
    });
}
