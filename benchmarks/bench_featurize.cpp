// bench-featurize: for each app of the suite,
//   1. how long building the FunctionDAG takes, and how fast its edges evaluate a producer
//      region for concrete loop bounds (what the search does tens of thousands of times);
//   2. how long the 39 schedule features take per stage per state, on random complete
//      LoopNests and on partial states (their consumers-first prefixes, as the search sees them).
//
//   bench-featurize [--apps all|a,b] [--repeats 5] [--states 8] [--seed 1]
//
// Machines here are shared and noisy, so both times are printed as ratios against a baseline
// measured in the same process on the same pipeline: Halide lowering it to a Module (bounds
// inference and lowering, no LLVM), with every Func at root for the DAG, and with the same
// LoopNest applied for the features (what the lowering oracle would have to do instead).
#include "apps/app.h"
#include "common/statistics.h"
#include "common/stopwatch.h"
#include "featurize/apply.h"
#include "featurize/function_dag.h"
#include "featurize/random_loop_nest.h"
#include "featurize/schedule_features.h"
#include "runner/host_target.h"
#include "tools/app_list.h"
#include "tools/cli.h"
#include "tools/table.h"

#include <Halide.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace {

using schedforge::tools::format_number;

using Clock = std::chrono::steady_clock;
namespace sa = schedforge::apps;
namespace sf = schedforge::featurize;
namespace runner = schedforge::runner;

using schedforge::median;
using schedforge::seconds_since;

double geomean(const std::vector<double> &v) {
    double log_sum = 0;
    for (double r : v) log_sum += std::log(r);
    return v.empty() ? 0 : std::exp(log_sum / double(v.size()));
}

// Lowering one app with `nest` applied: a fresh pipeline (a schedule is applied once), same DAG.
double lowering_seconds(const std::string &name, const sf::LoopNest &nest, const Halide::Target &target) {
    sa::BuiltApp built = sa::build_app(name, /*small=*/false);
    const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
    sf::apply(dag, nest);
    const auto t = Clock::now();
    built.pipeline.compile_to_module(built.pipeline.infer_arguments(), name, target);
    return seconds_since(t);
}

struct FeatureTiming {
    double complete_us = 0, partial_us = 0; // per scheduled stage per state
    double ratio = 0;                       // featurizing a complete state / lowering it
    int64_t stages = 0;
};

// Features of `states` random complete LoopNests and of every consumers-first prefix of them.
FeatureTiming time_features(const std::string &name, const sf::FunctionDAG &dag, int states, uint64_t seed,
                            const Halide::Target &target, double &checksum) {
    sf::RandomLoopNestOptions options;
    options.inline_probability = 0; // as the apps' correctness tests: inlined stencil chains explode
    FeatureTiming ft;
    std::vector<double> feature_s, lower_s;
    double partial_s = 0;
    int64_t partial_stages = 0;
    for (int i = 0; i < states; i++) {
        const sf::LoopNest nest = sf::random_loop_nest(dag, target, seed + uint64_t(i), options);
        // Repeat until the measurement is long enough to trust the clock.
        int64_t reps = 0, stages = 0;
        auto t = Clock::now();
        do {
            for (const sf::StageFeatures &f : sf::compute_schedule_features(dag, nest, target)) {
                checksum += f.features.values()[0];
                stages++;
            }
            reps++;
        } while (seconds_since(t) < 0.02);
        feature_s.push_back(seconds_since(t) / double(reps));
        ft.complete_us += seconds_since(t) * 1e6 / double(stages);
        ft.stages = stages / reps;
        lower_s.push_back(lowering_seconds(name, nest, target));
        // Partial states: Funcs after the k-th (consumers first) not yet scheduled.
        for (size_t k = 1; k < nest.funcs.size(); k++) {
            sf::LoopNest partial(dag);
            for (size_t f = 0; f < k; f++) partial.funcs[f] = nest.funcs[f];
            t = Clock::now();
            for (const sf::StageFeatures &f : sf::compute_schedule_features(dag, partial, target)) {
                checksum += f.features.values()[0];
                partial_stages += f.scheduled;
            }
            partial_s += seconds_since(t);
        }
    }
    ft.complete_us /= double(states);
    ft.partial_us = partial_stages ? partial_s * 1e6 / double(partial_stages) : 0;
    ft.ratio = median(feature_s) / median(lower_s);
    return ft;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Benchmark FunctionDAG construction, region evaluation and schedule features on the apps.",
                 "bench-featurize"};
    std::string apps_arg = "all";
    int repeats = 5, states = 8;
    uint64_t seed = 1;
    app.add_option("--apps", apps_arg, "Apps to measure: all, or a comma-separated list");
    app.add_option("--repeats", repeats, "Builds per app (the median is reported)")->check(CLI::PositiveNumber);
    app.add_option("--states", states, "Random LoopNests featurized per app")->check(CLI::PositiveNumber);
    app.add_option("--seed", seed, "Seed of the first random LoopNest");
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        const std::vector<std::string> names = schedforge::tools::parse_app_list(apps_arg);
        const Halide::Target target = runner::host_target();
        schedforge::tools::Table table({"app", "nodes", "edges", "dag ms", "lower ms", "dag/lower", "ns/region"});
        schedforge::tools::Table features_table(
            {"app", "stages", "us/stage complete", "us/stage partial", "features/lower"});
        std::vector<double> ratios, feature_ratios, complete_us, partial_us;
        double feature_checksum = 0;
        int64_t total_checksum = 0; // printed, so the evaluations cannot be optimized away
        for (const std::string &name : names) {
            std::vector<double> dag_s, lower_s;
            sf::FunctionDAG dag;
            for (int r = 0; r < repeats; r++) {
                sa::BuiltApp built = sa::build_app(name, /*small=*/false);
                auto t = Clock::now();
                dag = sf::FunctionDAG::build(built.pipeline);
                dag_s.push_back(seconds_since(t));
                sa::schedule_compute_root(built);
                t = Clock::now();
                built.pipeline.compile_to_module(built.pipeline.infer_arguments(), name, target);
                lower_s.push_back(seconds_since(t));
            }
            // Region evaluation: every edge, at its consumer's root bounds, shifted each round so
            // nothing is constant-folded away.
            int64_t evaluations = 0, checksum = 0;
            const auto t = Clock::now();
            while (seconds_since(t) < 0.2) {
                for (const sf::Edge &e : dag.edges) {
                    sf::Region bounds =
                        dag.nodes[size_t(e.consumer_node)].stages[size_t(e.consumer_stage)].loop_bounds_at_root;
                    for (sf::Span &s : bounds) s.max -= evaluations & 7;
                    for (const sf::Span &s : e.required(bounds)) checksum += s.max - s.min;
                    evaluations++;
                }
            }
            total_checksum += checksum;
            const double ns = seconds_since(t) * 1e9 / double(std::max<int64_t>(evaluations, 1));
            const double ratio = median(dag_s) / median(lower_s);
            ratios.push_back(ratio);
            table.add_row({name, std::to_string(dag.nodes.size()), std::to_string(dag.edges.size()),
                           format_number("%.2f", median(dag_s) * 1e3), format_number("%.1f", median(lower_s) * 1e3),
                           format_number("%.3f", ratio), format_number("%.0f", ns)});
            const FeatureTiming ft = time_features(name, dag, states, seed, target, feature_checksum);
            feature_ratios.push_back(ft.ratio);
            complete_us.push_back(ft.complete_us);
            partial_us.push_back(ft.partial_us);
            features_table.add_row({name, std::to_string(ft.stages), format_number("%.2f", ft.complete_us),
                                    format_number("%.2f", ft.partial_us), format_number("%.5f", ft.ratio)});
        }
        table.add_row({"geomean", "", "", "", "", format_number("%.3f", geomean(ratios)), ""});
        features_table.add_row({"geomean", "", format_number("%.2f", geomean(complete_us)),
                                format_number("%.2f", geomean(partial_us)),
                                format_number("%.5f", geomean(feature_ratios))});
        std::cout << "FunctionDAG build against lowering at root, and region evaluation:\n";
        table.print(std::cout);
        std::cout << "\nSchedule features of random LoopNests (" << states
                  << " per app, and their partial prefixes) against lowering the same schedule:\n";
        features_table.print(std::cout);
        std::cout << "(checksums " << total_checksum << " " << feature_checksum << ")\n";
        return 0;
    });
}
