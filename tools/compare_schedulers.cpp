// compare-schedulers: schedules apps and random pipelines with several schedulers, benchmarks each
// schedule with the isolated runner, and prints runtimes and speedups against a baseline.
//
//   compare-schedulers --out DIR [--apps all|a,b] [--pipelines N] [--config FILE] [--seed S]
//                      [--schedulers manual,root,Mullapudi2016,Li2018,Adams2019,SchedForge,SchedForgeLearned]
//                      [--baseline Adams2019] [--search-config SEARCH.yaml] [--weights W]
//                      [--target host] [--threads T] [--compile-timeout 600] [--run-timeout 60]
//
// Schedulers: manual (apps only: the app's hand-written schedule), root (every stage
// compute_root), inline (Halide's default schedule), Halide's autoscheduler plugins
// Mullapudi2016, Li2018 and Adams2019 (machine parameters from this machine's fingerprint), and
// SchedForge, our search (--search-config, or this machine kind's committed calibration where
// there is one: sampler/machine_calibration.h; cores from the same machine parameters), and
// SchedForgeLearned, the same search with the learned cost model's --weights, and
// SchedForge:FILE, the search with the search config FILE (variants of the search's rules side by
// side in one run, as the before/after figures of a rule change need). Every
// schedule's output is checked against the compute_root schedule's; a failed entry shows its
// status in the table and its reason in the CSV. DIR receives comparison.csv, comparison.png
// (gnuplot), fingerprint.txt and workers.log (what the workers printed, e.g. autoscheduler logs).
#include "apps/app.h"
#include "featurize/gpu_features.h"
#include "generator/build.h"
#include "generator/config.h"
#include "generator/synthesize.h"
#include "runner/benchmark_runner.h"
#include "runner/fingerprint.h"
#include "runner/halide_autoschedulers.h"
#include "runner/host_target.h"
#include "sampler/cost_model.h"
#include "sampler/machine_calibration.h"
#include "sampler/schedule_pipeline.h"
#include "sampler/search_options.h"
#include "tools/cli.h"
#include "tools/files.h"
#include "tools/progress.h"
#include "tools/table.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

namespace {

namespace sg = schedforge::gen;
namespace ss = schedforge::sampler;
namespace runner = schedforge::runner;
using schedforge::UserError;

std::string join(const std::vector<std::string> &items) {
    std::string s;
    for (const std::string &i : items) s += (s.empty() ? "" : ", ") + i;
    return s;
}

std::string format(const char *fmt, double v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), fmt, v);
    return buf;
}

std::string csv_quote(const std::string &s) {
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : ch == '\n' ? std::string(" ") : std::string(1, ch);
    return q + "\"";
}

// SchedForge:FILE, our search with the search config FILE.
const std::string kSearchVariantPrefix = "SchedForge:";

// A scheduler's name in the chart's key: "SchedForge:configs/search/x.yaml" as "SchedForge:x", so that
// a long path does not squeeze the bars (the table and CSV keep the whole name).
std::string key_title(const std::string &scheduler) {
    if (scheduler.rfind(kSearchVariantPrefix, 0) != 0) return scheduler;
    return kSearchVariantPrefix + std::filesystem::path(scheduler.substr(kSearchVariantPrefix.size())).stem().string();
}

// A clustered bar chart of speedups (log scale), one cluster per pipeline; the key below it.
bool plot(const std::string &data_path, const std::string &png_path, const std::vector<std::string> &schedulers,
          const std::string &baseline) {
    std::string gp = "set title 'Speedup over " + baseline + " (higher is faster)'\nset style data histograms\n";
    gp += "set style histogram clustered gap 1\nset style fill solid 0.8 border -1\nset logscale y 2\n";
    gp += "set ylabel 'speedup'\nset xtics rotate by -30\nset key below\nset grid ytics\n";
    gp += "plot ";
    for (size_t i = 0; i < schedulers.size(); i++) {
        gp += std::string(i ? ", " : "") + "'" + data_path + "' using " + std::to_string(i + 2) +
              (i == 0 ? ":xtic(1)" : "") + " title '" + key_title(schedulers[i]) + "'";
    }
    gp += "\n";
    return schedforge::tools::run_gnuplot(png_path, gp, "1200,600");
}

// Everything the command line says.
struct Options {
    std::string config_path, out_dir, schedulers_text = "root,Mullapudi2016,Li2018,Adams2019", baseline = "Adams2019";
    uint64_t seed = 0;
    int64_t pipelines = 4;
    std::string apps_text, search_config, weights;
    runner::RunnerOptions runner;
};

void add_options(CLI::App &app, Options &o) {
    app.add_option("--out", o.out_dir, "Output folder (created if missing)")->required();
    app.add_option("--config", o.config_path, "Generator config YAML (default: built-in defaults)");
    app.add_option("--seed", o.seed, "Seed of the first random pipeline");
    app.add_option("--pipelines", o.pipelines, "Random pipelines to compare")->check(CLI::NonNegativeNumber);
    app.add_option("--apps", o.apps_text, "Apps to compare: all, or a comma-separated list");
    app.add_option("--schedulers", o.schedulers_text,
                   "Comma-separated: manual, root, inline, Mullapudi2016, Li2018, Adams2019, SchedForge, "
                   "SchedForgeLearned, SchedForge:SEARCH.yaml");
    app.add_option("--search-config", o.search_config, "Search config for SchedForge (YAML)")->check(CLI::ExistingFile);
    app.add_option("--weights", o.weights, "Learned cost model weights for SchedForgeLearned");
    app.add_option("--baseline", o.baseline, "Scheduler the speedups are relative to");
    app.add_option("--target", o.runner.target, "Halide target for compiling and timing");
    app.add_option("--threads", o.runner.timing.threads, "Halide runtime threads (0: one per CPU it may use)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--rounds", o.runner.timing.rounds,
                   "Timing rounds: an app's schedules take turns, round by round (the label is then the median of "
                   "the rounds' minima; 1: one window each)")
        ->check(CLI::PositiveNumber);
    app.add_option("--compile-timeout", o.runner.compile_timeout_seconds, "Seconds per compile (incl. scheduling)");
    app.add_option("--run-timeout", o.runner.run_timeout_seconds, "Seconds per benchmark");
}

// The command line, checked: the apps, the schedulers, and our searches by scheduler name
// (SchedForge, SchedForgeLearned and SchedForge:FILE; their cores set later, from the machine).
struct Plan {
    std::vector<std::string> apps, schedulers;
    std::map<std::string, ss::SearchOptions> searches;
    std::string default_search; // what SchedForge searches with (sampler/machine_calibration.h)
    bool learned = false;
    sg::GeneratorConfig generator; // of the random pipelines
};

Plan check_command_line(const Options &o) {
    Plan plan;
    plan.apps = o.apps_text == "all" ? schedforge::apps::app_names() : schedforge::tools::split_list(o.apps_text);
    for (const std::string &a : plan.apps) {
        if (!schedforge::apps::make_app(a))
            throw UserError("unknown app '" + a + "' (apps: " + join(schedforge::apps::app_names()) + ")");
    }
    if (plan.apps.empty() && o.pipelines == 0) throw UserError("nothing to compare: give --apps or --pipelines > 0");
    plan.schedulers = schedforge::tools::split_list(o.schedulers_text);
    if (plan.schedulers.empty()) throw UserError("--schedulers lists no scheduler");
    for (const std::string &s : plan.schedulers) {
        if (s.rfind(kSearchVariantPrefix, 0) == 0) {
            plan.searches[s] = ss::load_search_options(s.substr(kSearchVariantPrefix.size()));
            continue;
        }
        if (s != "root" && s != "inline" && s != "manual" && s != "SchedForge" && s != "SchedForgeLearned" &&
            runner::halide_autoscheduler_plugin(s).empty()) {
            throw UserError("unknown scheduler '" + s +
                            "' (choose from manual, root, inline, Mullapudi2016, Li2018, Adams2019, SchedForge, "
                            "SchedForgeLearned, SchedForge:SEARCH.yaml)");
        }
    }
    plan.learned =
        std::find(plan.schedulers.begin(), plan.schedulers.end(), "SchedForgeLearned") != plan.schedulers.end();
    if (plan.learned == o.weights.empty()) {
        throw UserError(plan.learned ? "SchedForgeLearned needs --weights"
                                     : "--weights is for SchedForgeLearned, which --schedulers does not list");
    }
    if (std::find(plan.schedulers.begin(), plan.schedulers.end(), o.baseline) == plan.schedulers.end()) {
        throw UserError("--baseline '" + o.baseline + "' is not one of --schedulers");
    }
    if (!Halide::Target::validate_target_string(o.runner.target)) {
        throw UserError("--target '" + o.runner.target + "' is not a Halide target");
    }
    runner::validate(o.runner);
    if (!o.config_path.empty()) plan.generator = sg::load_generator_config(o.config_path);
    plan.searches["SchedForge"] = ss::search_options_or_default(o.search_config, &plan.default_search);
    plan.searches["SchedForgeLearned"] = plan.searches["SchedForge"];
    plan.searches["SchedForgeLearned"].weights = o.weights;
    // A bad weights file is a user error now, not a failure of every learned job.
    if (plan.learned) ss::make_cost_model(o.weights, plan.searches["SchedForge"].coefficients);
    return plan;
}

// A named scheduler applied to a pipeline: ours, or one of Halide's autoschedulers.
using Autoschedule = std::function<void(const std::string &scheduler, Halide::Pipeline &pipeline)>;

// What gets scheduled: apps (which also have a manual schedule) and random pipelines.
struct Subject {
    std::string name, id;
    bool has_manual = false;
    std::function<runner::PreparedJob(const std::string &scheduler)> prepare;
};

std::vector<Subject> make_subjects(const Options &o, const Plan &plan, const Halide::Target &target,
                                   const Autoschedule &autoschedule) {
    std::vector<Subject> subjects;
    for (const std::string &a : plan.apps) {
        subjects.push_back({a, "app", true, [a, target, autoschedule](const std::string &scheduler) {
                                schedforge::apps::BuiltApp built = schedforge::apps::build_app(a, /*small=*/false);
                                if (scheduler == "manual")
                                    schedforge::apps::schedule_manual(built, target);
                                else if (scheduler == "root")
                                    schedforge::apps::schedule_compute_root(built);
                                else if (scheduler != "inline")
                                    autoschedule(scheduler, built.pipeline);
                                return runner::PreparedJob{built.pipeline, built.output_buffer};
                            }});
    }
    for (int64_t i = 0; i < o.pipelines; i++) {
        const sg::PipelineSpec spec = sg::synthesize_pipeline(plan.generator, o.seed + uint64_t(i));
        subjects.push_back({"seed" + std::to_string(spec.seed), sg::format_id(spec.id()), false,
                            [spec, autoschedule](const std::string &scheduler) {
                                sg::BuiltPipeline built = sg::build_pipeline(spec);
                                if (scheduler == "root")
                                    built.schedule_compute_root();
                                else if (scheduler != "inline")
                                    autoschedule(scheduler, built.pipeline);
                                const sg::Node &out = spec.nodes[size_t(spec.output)];
                                return runner::PreparedJob{built.pipeline, Halide::Buffer<>(sg::halide_type(out.type),
                                                                                            built.output_extents())};
                            }});
    }
    return subjects;
}

// Every (subject, scheduler) benchmarked, row-major by subject: the compute_root references first
// (their outputs are what every other schedule's is checked against; the root column is the
// reference run itself, not compiled and timed twice), then the rest, a subject's schedules
// taking their timing rounds together. Counts the failures.
std::vector<runner::JobResult> run_all(const std::vector<Subject> &subjects, const std::vector<std::string> &schedulers,
                                       const runner::RunnerOptions &options, int &failures) {
    auto job_for = [&](size_t p, const std::string &scheduler) {
        runner::BenchmarkJob job;
        job.name = subjects[p].name + " / " + scheduler;
        if (scheduler == "manual" && !subjects[p].has_manual) {
            job.prepare = []() -> runner::PreparedJob {
                throw Halide::CompileError("no manual schedule (not an app)");
            };
        } else {
            job.prepare = [prepare = subjects[p].prepare, scheduler]() { return prepare(scheduler); };
        }
        return job;
    };
    std::vector<runner::BenchmarkJob> reference_jobs;
    for (size_t p = 0; p < subjects.size(); p++) {
        reference_jobs.push_back(job_for(p, "root"));
        reference_jobs.back().return_output = true;
    }
    schedforge::tools::ProgressBar ref_progress("references", int64_t(reference_jobs.size()));
    const std::vector<runner::JobResult> references =
        runner::run_jobs(reference_jobs, options, [&](size_t, const runner::JobResult &) { ref_progress.step(); });
    ref_progress.finish();

    std::vector<runner::BenchmarkJob> jobs;
    std::vector<size_t> job_of(subjects.size() * schedulers.size(), SIZE_MAX);
    for (size_t p = 0; p < subjects.size(); p++) {
        for (size_t s = 0; s < schedulers.size(); s++) {
            if (schedulers[s] == "root") continue;
            job_of[p * schedulers.size() + s] = jobs.size();
            jobs.push_back(job_for(p, schedulers[s]));
            jobs.back().reference = references[p].output;
            jobs.back().group = int64_t(p);
        }
    }
    failures = 0;
    schedforge::tools::ProgressBar progress("schedules", int64_t(jobs.size()));
    const std::vector<runner::JobResult> ran = runner::run_jobs(jobs, options, [&](size_t, const runner::JobResult &r) {
        failures += r.status != runner::JobStatus::Ok;
        progress.step(failures ? std::to_string(failures) + " failed" : "");
    });
    progress.finish();
    std::vector<runner::JobResult> results;
    for (size_t k = 0; k < job_of.size(); k++) {
        results.push_back(job_of[k] == SIZE_MAX ? references[k / schedulers.size()] : ran[job_of[k]]);
        if (job_of[k] == SIZE_MAX) {
            results.back().output.reset();
            failures += results.back().status != runner::JobStatus::Ok;
        }
    }
    return results;
}

// The table (runtimes and speedups against the baseline, geomeans), comparison.csv, and the plot.
void report(const Options &o, const std::vector<Subject> &subjects, const std::vector<std::string> &schedulers,
            const std::vector<runner::JobResult> &results, int failures) {
    const size_t base = size_t(std::find(schedulers.begin(), schedulers.end(), o.baseline) - schedulers.begin());
    std::vector<std::string> header = {"pipeline"};
    for (const std::string &s : schedulers) header.push_back(s + " ms");
    for (const std::string &s : schedulers) header.push_back(s + " x");
    schedforge::tools::Table table(header);
    std::string csv =
        "pipeline,id,scheduler,status,message,schedule_s,compile_s,label_s,median_s,samples,threads,speedup\n";
    std::string plot_data = "# pipeline";
    for (const std::string &s : schedulers) plot_data += " " + s;
    plot_data += "\n";
    std::vector<double> log_sum(schedulers.size(), 0);
    std::vector<int> log_count(schedulers.size(), 0);
    for (size_t p = 0; p < subjects.size(); p++) {
        const std::string &name = subjects[p].name;
        std::vector<std::string> row = {name}, speed_cells;
        std::string plot_row = name;
        const runner::JobResult &b = results[p * schedulers.size() + base];
        for (size_t s = 0; s < schedulers.size(); s++) {
            const runner::JobResult &r = results[p * schedulers.size() + s];
            const bool ok = r.status == runner::JobStatus::Ok;
            double speedup = 0;
            if (ok && b.status == runner::JobStatus::Ok && r.timing.label_seconds > 0) {
                speedup = b.timing.label_seconds / r.timing.label_seconds;
                log_sum[s] += std::log(speedup);
                log_count[s]++;
            }
            row.push_back(ok ? format("%.3f", 1e3 * r.timing.label_seconds) : runner::status_name(r.status));
            speed_cells.push_back(speedup > 0 ? format("%.2f", speedup) : "-");
            plot_row += " " + (speedup > 0 ? format("%.4f", speedup) : std::string("NaN"));
            csv += name + "," + subjects[p].id + "," + schedulers[s] + "," + runner::status_name(r.status) + "," +
                   csv_quote(r.message) + "," + format("%.6f", r.prepare_seconds) + "," +
                   format("%.6f", r.compile_seconds) + "," + format("%.9f", r.timing.label_seconds) + "," +
                   format("%.9f", r.timing.median_seconds) + "," + std::to_string(r.timing.samples.size()) + "," +
                   std::to_string(r.timing.threads) + "," + (speedup > 0 ? format("%.6f", speedup) : std::string("")) +
                   "\n";
        }
        row.insert(row.end(), speed_cells.begin(), speed_cells.end());
        table.add_row(row);
        plot_data += plot_row + "\n";
    }
    std::vector<std::string> geo = {"geomean"};
    for (size_t s = 0; s < schedulers.size(); s++) geo.push_back("");
    for (size_t s = 0; s < schedulers.size(); s++) {
        geo.push_back(log_count[s] ? format("%.2f", std::exp(log_sum[s] / log_count[s])) : "-");
    }
    table.add_row(geo);
    table.print(std::cout);

    schedforge::tools::write_file_atomic(o.out_dir + "/comparison.csv", csv);
    const std::string data_path = o.out_dir + "/comparison.dat";
    schedforge::tools::write_file_atomic(data_path, plot_data);
    const bool plotted = plot(data_path, o.out_dir + "/comparison.png", schedulers, o.baseline);
    std::printf("%zu schedules of %zu apps and pipelines, %d failed (reasons in comparison.csv); speedups are %s "
                "runtime / scheduler runtime (%s)\nwrote %s/comparison.csv%s, fingerprint.txt, workers.log\n",
                results.size(), subjects.size(), failures, o.baseline.c_str(),
                o.runner.timing.rounds > 1 ? "each the median of its timing rounds' minima"
                                           : "each the min of its samples",
                o.out_dir.c_str(), plotted ? ", comparison.png" : " (no PNG: gnuplot failed or is missing)");
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Benchmark schedulers (compute_root, Halide's autoschedulers) on random pipelines.",
                 "compare-schedulers"};
    Options o;
    add_options(app, o);
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        Plan plan = check_command_line(o);
        const Halide::Target target = runner::runnable_here(Halide::Target(o.runner.target));
        o.runner.target = target.to_string(); // completed: the workers need not probe a GPU again
        // Fast-math may move a float that becomes an integer by one; StrictFloat does not.
        o.runner.integer_tolerance = target.has_feature(Halide::Target::StrictFloat) ? 0 : 1;
        schedforge::tools::ensure_directory(o.out_dir);
        o.runner.worker_log = o.out_dir + "/workers.log";

        const runner::HardwareFingerprint fp = runner::fingerprint_this_machine();
        const Halide::MachineParams machine = runner::machine_params_for(fp);
        for (auto &[name, options] : plan.searches) {
            options.cores = machine.parallelism;
            // The GPU model prices this machine's device where it knows it (else the target's capability's).
            if (target.has_gpu_feature() && options.gpu_device.empty())
                options.gpu_device = schedforge::featurize::gpu_device_matching(fp.gpu_name);
        }
        std::string fp_text;
        for (const auto &[k, v] : fp.fields()) fp_text += k + " = " + v + "\n";
        fp_text += "machine_params = " + machine.to_string() + "\n";
        fp_text += "schedforge_search = " + plan.default_search + "\n";
        std::printf("SchedForge searches with %s\n", plan.default_search.c_str());
        schedforge::tools::write_file_atomic(o.out_dir + "/fingerprint.txt", fp_text);

        const Autoschedule autoschedule = [target, machine, searches = plan.searches](const std::string &scheduler,
                                                                                      Halide::Pipeline &pipeline) {
            if (const auto ours = searches.find(scheduler); ours != searches.end())
                ss::schedule_pipeline(pipeline, target, ours->second);
            else
                runner::run_halide_autoscheduler(scheduler, pipeline, target, machine);
        };
        const std::vector<Subject> subjects = make_subjects(o, plan, target, autoschedule);
        int failures = 0;
        const std::vector<runner::JobResult> results = run_all(subjects, plan.schedulers, o.runner, failures);
        report(o, subjects, plan.schedulers, results, failures);
        return 0;
    });
}
