// calibrate: fits the manual cost model's 28 coefficients to the ok schedules of HDF5 datasets
// of one machine (sampler/calibrate.h) and writes them as a search config, the quick path to a
// model for new hardware. Prints the model's metrics with the starting and the fitted
// coefficients, on the training pipelines and on pipelines held out by the hash `dataset split`
// uses.
//
//   calibrate --data A.h5 [B.h5 ...] --out CALIBRATED.yaml [--search-config START.yaml]
//             [--validation-fraction 0.2] [--ridge 0.01] [--reweightings 4] [--ranking-steps 1000]
//             [--page-fault-cost fit|measure|NS] [--library-call-cost fit|measure|NS] [--keep-start]
//             [--factors-out FACTORS.csv]
#include "tools/cli.h"
#include "tools/files.h"
#include "tools/table.h"

#include "featurize/cost_terms.h"
#include "sampler/calibrate.h"
#include "sampler/search_options.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace ss = schedforge::sampler;
namespace st = schedforge::trainer;

namespace {

void print_metrics(const char *what, const st::Metrics &m) {
    std::printf("%-24s %8.3f %9.3f %8.3f %8.3f %9.3f\n", what, m.r2_log, m.pairwise_accuracy, m.kendall_tau,
                m.top1_regret, m.mean_relative_error);
}

// One row per stage of every schedule: pipeline, schedule, stage, measured seconds, part
// (train or validation) and the stage's factor for each term, so that other forms of the model
// can be tried on the same numbers outside (e.g. with NumPy).
void write_factors(const std::string &path, const std::vector<const st::TrainingData *> &parts) {
    std::ostringstream csv;
    csv << "pipeline_id,schedule,stage,measured_s,part";
    for (const char *name : schedforge::featurize::cost_term_names()) csv << "," << name;
    csv << "\n";
    for (size_t part = 0; part < parts.size(); part++) {
        for (const st::TrainingPipeline &p : parts[part]->pipelines) {
            for (size_t s = 0; s < p.runtimes.size(); s++) {
                const std::vector<ss::Coefficients> stages = ss::stage_factors(p, s);
                for (size_t st = 0; st < stages.size(); st++) {
                    char measured[32];
                    std::snprintf(measured, sizeof(measured), "%.9g", p.runtimes[s]);
                    csv << p.id << "," << s << "," << st << "," << measured << ","
                        << (part == 0 ? "train" : "validation");
                    for (double f : stages[st]) {
                        char v[32];
                        std::snprintf(v, sizeof(v), "%.6g", f);
                        csv << "," << v;
                    }
                    csv << "\n";
                }
            }
        }
    }
    schedforge::tools::write_file_atomic(path, csv.str());
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Fit the manual cost model's coefficients to datasets and write them as a search config.",
                 "calibrate"};
    std::vector<std::string> data;
    std::string out, start_config;
    double validation_fraction = 0.2;
    ss::CalibrationOptions options;
    options.ranking_steps = 1000;
    app.add_option("--data", data, "dataset files (generate-dataset's HDF5) of this machine")
        ->required()
        ->expected(1, -1);
    app.add_option("--out", out, "the search config to write (YAML)")->required();
    app.add_option("--search-config", start_config, "start from this config's coefficients (default: built-in)");
    app.add_option("--validation-fraction", validation_fraction, "pipelines held out (by a hash of their id)")
        ->capture_default_str();
    app.add_option("--ridge", options.ridge, "pull towards the starting coefficients")->capture_default_str();
    app.add_option("--reweightings", options.reweightings, "rounds from relative towards log error")
        ->capture_default_str();
    app.add_option("--ranking-steps", options.ranking_steps, "then steps of refinement for ranking within pipelines")
        ->capture_default_str();
    std::string page_fault_cost = "fit", library_call_cost = "fit";
    app.add_option("--page-fault-cost", page_fault_cost,
                   "ns per fresh byte of intermediates: 'measure' (on this machine), 'fit', or a value")
        ->capture_default_str();
    app.add_option("--library-call-cost", library_call_cost,
                   "ns per call into the C math library (a sinf): 'measure' (on this machine), 'fit', or a value")
        ->capture_default_str();
    bool keep_start = false;
    app.add_flag("--keep-start", keep_start,
                 "fit nothing: the starting coefficients, with the costs given or measured above put in");
    std::string factors_out;
    app.add_option("--factors-out", factors_out,
                   "also write every stage's term factors (what each coefficient multiplies) as CSV, for analysis");
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        using schedforge::UserError;
        if (!(validation_fraction >= 0 && validation_fraction < 1))
            throw UserError("--validation-fraction must be in [0, 1)");
        if (!(options.ridge >= 0)) throw UserError("--ridge must not be negative");
        if (options.reweightings < 0) throw UserError("--reweightings must not be negative");
        if (options.ranking_steps < 0) throw UserError("--ranking-steps must not be negative");
        // A held coefficient: fitted (-1), measured by its probe here, or the value given.
        std::string measured; // the probes' figures, for the config's header
        auto held_cost = [&](const std::string &flag, const std::string &text, double (*measure)(), const char *what) {
            if (text == "fit") return -1.0;
            if (text == "measure") {
                const double ns = measure();
                const std::string line = std::string(what) + " costs " + schedforge::tools::format_number("%.3g", ns) +
                                         " ns here (measured)";
                std::printf("%s\n", line.c_str());
                measured += "\n# " + line + ".";
                return ns;
            }
            char *end = nullptr;
            const double ns = std::strtod(text.c_str(), &end);
            if (text.empty() || *end || !(ns >= 0))
                throw UserError(flag + " must be 'measure', 'fit' or a non-negative number, not '" + text + "'");
            return ns;
        };
        options.page_fault_cost =
            held_cost("--page-fault-cost", page_fault_cost, ss::measure_page_fault_cost, "page faults: a fresh byte");
        options.library_call_cost =
            held_cost("--library-call-cost", library_call_cost, ss::measure_library_call_cost, "library calls: a sinf");
        options.fit = !keep_start;
        schedforge::tools::require_parent_folder(out);
        const ss::SearchOptions start =
            start_config.empty() ? ss::SearchOptions() : ss::load_search_options(start_config);

        st::LoadReport loaded;
        st::TrainingData train, validation;
        st::load_training_split(data, validation_fraction, train, validation, &loaded);
        std::printf("data: %zu files, %zu pipelines, %zu ok schedules (%zu timed under contention left out); train "
                    "%zu pipelines (%zu schedules), validation %zu (%zu)\n",
                    loaded.files, loaded.pipelines, loaded.schedules, loaded.contended_schedules,
                    train.pipelines.size(), train.num_schedules(), validation.pipelines.size(),
                    validation.num_schedules());

        if (!factors_out.empty()) write_factors(factors_out, {&train, &validation});
        const ss::Coefficients fitted = ss::calibrate(train, start.coefficients, options);

        std::printf("%-24s %8s %9s %8s %8s %9s\n", "coefficients / data", "R2 log", "pairwise", "tau", "regret",
                    "rel err");
        print_metrics("start / train", ss::manual_metrics(train, start.coefficients));
        print_metrics("fitted / train", ss::manual_metrics(train, fitted));
        if (!validation.pipelines.empty()) {
            print_metrics("start / validation", ss::manual_metrics(validation, start.coefficients));
            print_metrics("fitted / validation", ss::manual_metrics(validation, fitted));
        }

        std::ostringstream yaml;
        yaml << "# schedforge search config, version 1: the manual cost model calibrated by\n#   calibrate";
        for (const std::string &d : data) yaml << " --data " << d;
        if (!start_config.empty()) yaml << " --search-config " << start_config;
        yaml << " --ridge " << options.ridge << " --reweightings " << options.reweightings << " --ranking-steps "
             << options.ranking_steps << " --page-fault-cost " << page_fault_cost << " --library-call-cost "
             << library_call_cost << (keep_start ? " --keep-start" : "") << " --validation-fraction "
             << validation_fraction << measured << "\n# on " << train.pipelines.size() << " pipelines ("
             << train.num_schedules() << " ok schedules). Other keys keep their defaults.\n"
             << "version: 1\n\ncost_model:\n  coefficients:\n";
        for (int i = 0; i < schedforge::featurize::kNumCostTerms; i++) {
            char value[64];
            std::snprintf(value, sizeof(value), "%.6g", fitted[size_t(i)]);
            yaml << "    " << schedforge::featurize::cost_term_names()[size_t(i)] << ": " << value << "\n";
        }
        schedforge::tools::write_file_atomic(out, yaml.str());
        std::printf("wrote %s\n", out.c_str());
        return 0;
    });
}
