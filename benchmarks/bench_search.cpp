// bench-search: search time per app, schedforge's beam search against Halide's Adams2019 plugin
// on the same pipeline, in the same process, at the same beam size and passes (Adams2019 reads
// them from HL_BEAM_SIZE and HL_NUM_PASSES, set here).
//
//   bench-search [--apps all|a,b] [--beam 32] [--passes 5] [--search-config SEARCH.yaml]
//
// Our search runs with the search config's rules and cost model (without --search-config, this
// machine kind's default, as autoschedule runs it), at the beam and passes given here, so that a
// rule that spends search time (twin_lookahead, say) is held against Adams2019's. Prints per app
// both search times and their ratio (ours / Adams2019; below 1 is faster), and the geomean ratio.
// Adams2019 runs in an isolated worker of the benchmark runner (it can exhaust memory: then its
// row says so and the benchmark goes on); its time is the autoscheduler call, with its own
// featurization and cost model on its shipped weights; ours includes building the FunctionDAG and
// loading the cost model. Also our search without the feature memo (every child featurized from
// scratch; same schedule) and the memo's speedup, with the share of stage features the memo kept.
#include "apps/app.h"
#include "common/stopwatch.h"
#include "featurize/function_dag.h"
#include "runner/benchmark_runner.h"
#include "runner/fingerprint.h"
#include "runner/halide_autoschedulers.h"
#include "runner/host_target.h"
#include "sampler/beam_search.h"
#include "sampler/cost_model.h"
#include "sampler/machine_calibration.h"
#include "tools/app_list.h"
#include "tools/cli.h"
#include "tools/table.h"

#include <Halide.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

namespace {

using schedforge::tools::format_number;

using Clock = std::chrono::steady_clock;
namespace sa = schedforge::apps;
namespace sf = schedforge::featurize;
namespace ss = schedforge::sampler;
namespace runner = schedforge::runner;

using schedforge::seconds_since;

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Search time per app: schedforge's beam search against Halide's Adams2019.", "bench-search"};
    std::string apps_arg = "all";
    int beam = 32, passes = 5;
    std::string search_config;
    app.add_option("--apps", apps_arg, "Apps to measure: all, or a comma-separated list");
    app.add_option("--search-config", search_config, "Search config (YAML) of our search; default: this machine kind's")
        ->check(CLI::ExistingFile);
    app.add_option("--beam", beam, "Beam size for both searches")->check(CLI::PositiveNumber);
    app.add_option("--passes", passes, "Passes for both searches")->check(CLI::PositiveNumber);
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        const std::vector<std::string> names = schedforge::tools::parse_app_list(apps_arg);
        std::string searched_with;
        ss::SearchOptions options = ss::search_options_or_default(search_config, &searched_with);
        options.beam_size = beam;
        options.passes = passes;
        options.validate("command line");
        // A bad weights file fails here, before any worker forks; each search below loads its own
        // model inside its timed span, as Adams2019 loads its weights inside its call.
        ss::make_cost_model(options.weights, options.coefficients);
        setenv("HL_BEAM_SIZE", std::to_string(beam).c_str(), 1);
        setenv("HL_NUM_PASSES", std::to_string(passes).c_str(), 1);
        const Halide::Target target = runner::host_target();
        const runner::HardwareFingerprint fp = runner::fingerprint_this_machine();
        const Halide::MachineParams params = runner::machine_params_for(fp);

        // Adams2019 first, each app in an isolated worker (one at a time, memory-limited: it can
        // exhaust memory on some apps), timed around the autoscheduler call alone. The runner
        // forks, so this runs before our search starts any thread.
        runner::RunnerOptions runner;
        runner.parallel_compiles = 1;
        runner.timing.warmup_runs = 0;
        runner.timing.min_samples = 1;
        runner.timing.max_samples = 1;
        runner.worker_log = "/dev/null";
        std::vector<runner::BenchmarkJob> jobs;
        for (const std::string &name : names) {
            runner::BenchmarkJob job;
            job.name = name;
            job.prepare = [name, target, params]() {
                sa::BuiltApp built = sa::build_app(name, /*small=*/false);
                runner::run_halide_autoscheduler("Adams2019", built.pipeline, target, params);
                return runner::PreparedJob{built.pipeline, built.output_buffer};
            };
            jobs.push_back(std::move(job));
        }
        const std::vector<runner::JobResult> adams = runner::run_jobs(jobs, runner);

        std::cout << "search config: " << searched_with << "\n";
        schedforge::tools::Table table(
            {"app", "schedforge s", "Adams2019 s", "ratio", "no-memo s", "memo x", "features kept"});
        double log_sum = 0, memo_log_sum = 0;
        int measured = 0;
        for (size_t a = 0; a < names.size(); a++) {
            sa::BuiltApp ours = sa::build_app(names[a], /*small=*/false);
            ss::SearchStats stats;
            auto search = [&](bool memoize) {
                ss::SearchOptions o = options;
                o.memoize_features = memoize;
                const auto start = Clock::now();
                const sf::FunctionDAG dag = sf::FunctionDAG::build(ours.pipeline);
                const std::unique_ptr<ss::CostModel> model = ss::make_cost_model(o.weights, o.coefficients);
                const ss::SearchResult r = ss::beam_search(dag, target, *model, o);
                if (memoize) stats = r.stats;
                return seconds_since(start);
            };
            const double ours_s = search(true), scratch_s = search(false);
            memo_log_sum += std::log(scratch_s / ours_s);
            const double kept = double(stats.feature_cache_hits) /
                                double(std::max<int64_t>(1, stats.feature_cache_hits + stats.stages_featurized));
            std::vector<std::string> row = {names[a], format_number("%.2f", ours_s)};
            // A schedule Adams2019 made but that failed to compile still timed its search.
            const runner::JobResult &theirs = adams[a];
            if (theirs.prepare_seconds > 0) {
                log_sum += std::log(ours_s / theirs.prepare_seconds);
                measured++;
                row.push_back(format_number("%.2f", theirs.prepare_seconds));
                row.push_back(format_number("%.2f", ours_s / theirs.prepare_seconds));
            } else {
                row.push_back(std::string("failed: ") + runner::status_name(theirs.status));
                row.push_back("");
            }
            row.push_back(format_number("%.2f", scratch_s));
            row.push_back(format_number("%.2f", scratch_s / ours_s));
            row.push_back(format_number("%.0f%%", 100 * kept));
            table.add_row(row);
        }
        table.add_row({"geomean", "", "", measured ? format_number("%.2f", std::exp(log_sum / measured)) : "", "",
                       names.empty() ? "" : format_number("%.2f", std::exp(memo_log_sum / double(names.size()))), ""});
        table.print(std::cout);
        return 0;
    });
}
