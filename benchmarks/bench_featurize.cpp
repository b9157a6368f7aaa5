// bench-featurize: how long building the FunctionDAG takes for each app of the suite, and how
// fast its edges evaluate a producer region for concrete loop bounds (what the search does
// tens of thousands of times per pipeline).
//
//   bench-featurize [--apps all|a,b] [--repeats 5]
//
// Machines here are shared and noisy, so the DAG build time is printed as a ratio against a
// baseline measured in the same process on the same pipeline: Halide lowering it to a Module
// with every Func computed at root (bounds inference and lowering, no LLVM).
#include "apps/app.h"
#include "featurize/function_dag.h"
#include "tools/cli.h"
#include "tools/table.h"

#include <Halide.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace {

using Clock = std::chrono::steady_clock;
namespace sa = schedforge::apps;
namespace sf = schedforge::featurize;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::string fmt(double v, const char *spec) {
    char b[64];
    std::snprintf(b, sizeof b, spec, v);
    return b;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Benchmark FunctionDAG construction and region evaluation on the apps.", "bench-featurize"};
    std::string apps_arg = "all";
    int repeats = 5;
    app.add_option("--apps", apps_arg, "Apps to measure: all, or a comma-separated list");
    app.add_option("--repeats", repeats, "Builds per app (the median is reported)")->check(CLI::PositiveNumber);
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        std::vector<std::string> names;
        if (apps_arg == "all") {
            names = sa::app_names();
        } else {
            std::stringstream s(apps_arg);
            for (std::string n; std::getline(s, n, ',');) {
                if (!sa::make_app(n)) throw schedforge::UserError("--apps: unknown app '" + n + "'");
                names.push_back(n);
            }
        }
        const Halide::Target target = Halide::get_host_target();
        schedforge::tools::Table table({"app", "nodes", "edges", "dag ms", "lower ms", "dag/lower", "ns/region"});
        std::vector<double> ratios;
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
                    std::vector<sf::Span> bounds =
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
                           fmt(median(dag_s) * 1e3, "%.2f"), fmt(median(lower_s) * 1e3, "%.1f"), fmt(ratio, "%.3f"),
                           fmt(ns, "%.0f")});
        }
        double log_sum = 0;
        for (double r : ratios) log_sum += std::log(r);
        table.add_row({"geomean", "", "", "", "", fmt(std::exp(log_sum / double(ratios.size())), "%.3f"), ""});
        table.print(std::cout);
        std::cout << "(region checksum " << total_checksum << ")\n";
        return 0;
    });
}
