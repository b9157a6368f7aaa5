// featurize-report: how well the symbolic schedule features agree with what Halide generates.
//
// For each random pipeline (generator config, seeds 0..N-1) and each of K random legal LoopNests,
// it computes the schedule features, applies the LoopNest, lowers the pipeline with Halide and
// measures the same quantities from the lowered code (featurize/lowered_stats.h), then prints,
// per counting feature, the share of stages within the tolerance and exactly equal (overall,
// and on schedules without loop tails). With --check-outputs every schedule is also compiled,
// run and compared with the all-compute_root reference.
#include "common/errors.h"
#include "common/rng.h"
#include "featurize/agreement.h"
#include "featurize/apply.h"
#include "featurize/random_loop_nest.h"
#include "generator/build.h"
#include "generator/config.h"
#include "generator/synthesize.h"
#include "runner/host_target.h"
#include "runner/output_check.h"
#include "tools/cli.h"
#include "tools/files.h"
#include "tools/progress.h"
#include "tools/table.h"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace {

using namespace schedforge;

std::string percent(int64_t n, int64_t d) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(1) << (d ? 100.0 * double(n) / double(d) : 100.0) << "%";
    return o.str();
}

// One random LoopNest of one pipeline, featurized, applied and measured from the lowered code.
struct MeasuredSchedule {
    gen::BuiltPipeline built;
    featurize::FunctionDAG dag;
    featurize::LoopNest nest;
    std::vector<featurize::StageFeatures> predicted;
    featurize::LoweredStats measured;
};

MeasuredSchedule measure_schedule(const gen::PipelineSpec &spec, uint64_t pipeline_seed, uint64_t nest_index,
                                  const Halide::Target &target) {
    MeasuredSchedule m{gen::build_pipeline(spec), {}, {}, {}, {}};
    m.dag = featurize::FunctionDAG::build(m.built.pipeline);
    m.nest = featurize::random_loop_nest(m.dag, target, common::derive_seed(pipeline_seed, nest_index));
    m.predicted = featurize::compute_schedule_features(m.dag, m.nest, target);
    featurize::apply(m.dag, m.nest);
    m.measured = featurize::measure_lowered(m.built.pipeline, m.dag, target);
    return m;
}

// "P:K" -> {P, K}: two unsigned decimal numbers, or a UserError.
std::pair<uint64_t, uint64_t> parse_explain(const std::string &text) {
    const size_t colon = text.find(':');
    auto number = [&](const std::string &digits) {
        if (digits.empty() || digits.size() > 19 || digits.find_first_not_of("0123456789") != std::string::npos) {
            throw UserError("--explain: expected PIPELINE:NEST (two numbers), got '" + text + "'");
        }
        return uint64_t(std::stoull(digits));
    };
    if (colon == std::string::npos) number("");
    return {number(text.substr(0, colon)), number(text.substr(colon + 1))};
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app("Compares the symbolic schedule features with measurements of Halide's lowered code.",
                 "featurize-report");
    std::string config = std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/generator/small.yaml";
    int pipelines = 200, nests = 5;
    double tolerance = 0.05;
    uint64_t seed = 0;
    bool check_outputs = false;
    std::string disagreements_csv;
    std::string explain;
    app.add_option("--config", config, "generator config (YAML)")->check(CLI::ExistingFile);
    app.add_option("--pipelines", pipelines, "random pipelines (seeds seed..seed+N-1)")->check(CLI::Range(1, 100000));
    app.add_option("--nests", nests, "random LoopNests per pipeline")->check(CLI::Range(1, 1000));
    app.add_option("--seed", seed, "first pipeline seed");
    app.add_option("--tolerance", tolerance, "relative tolerance")->check(CLI::Range(0.0, 1.0));
    app.add_option("--disagreements", disagreements_csv,
                   "write every comparison outside the tolerance to this CSV (schedule, stage, feature, ...)");
    app.add_option("--explain", explain,
                   "P:K: print pipeline P's K-th LoopNest, its schedule, the predicted and measured counts "
                   "per stage and the lowered code, then exit");
    app.add_flag("--check-outputs", check_outputs, "also run every schedule and compare with compute_root");
    return tools::run_cli(app, argc, argv, [&] {
        const gen::GeneratorConfig cfg = gen::load_generator_config(config);
        const Halide::Target target =
            runner::host_target().with_feature(Halide::Target::StrictFloat).with_feature(Halide::Target::NoAsserts);
        if (!explain.empty()) {
            const auto [p, k] = parse_explain(explain);
            const MeasuredSchedule m = measure_schedule(gen::synthesize_pipeline(cfg, p), p, k, target);
            featurize::LoopNestBounds bounds(m.dag, m.nest);
            std::cout << m.nest.describe(m.dag) << "\n"
                      << bounds.describe() << "\n"
                      << featurize::schedule_source(m.dag, m.nest) << "\n";
            featurize::AgreementReport one(tolerance);
            one.add(m.dag, m.nest, m.predicted, m.measured, "");
            for (const featurize::Disagreement &d : one.disagreements) {
                std::cout << d.stage << " " << d.feature << ": predicted " << d.predicted << ", measured " << d.measured
                          << "\n";
            }
            std::cout << "\n" << m.measured.describe() << "\n" << m.measured.stmt << "\n";
            return 0;
        }
        featurize::AgreementReport report(tolerance);
        int64_t failures = 0;
        tools::ProgressBar progress("schedules", int64_t(pipelines) * nests);
        for (int p = 0; p < pipelines; p++) {
            const gen::PipelineSpec spec = gen::synthesize_pipeline(cfg, seed + uint64_t(p));
            Halide::Buffer<> expected;
            if (check_outputs) {
                gen::BuiltPipeline reference = gen::build_pipeline(spec);
                reference.schedule_compute_root();
                expected = reference.run(target);
            }
            for (int k = 0; k < nests; k++) {
                const std::string label =
                    "pipeline " + std::to_string(seed + uint64_t(p)) + " nest " + std::to_string(k);
                try {
                    MeasuredSchedule m = measure_schedule(spec, seed + uint64_t(p), uint64_t(k), target);
                    report.add(m.dag, m.nest, m.predicted, m.measured, label);
                    if (check_outputs) {
                        const std::string diff = runner::compare_buffers(expected, m.built.run(target));
                        if (!diff.empty()) throw std::runtime_error("output differs: " + diff);
                    }
                } catch (const std::exception &e) {
                    failures++;
                    std::cerr << label << ": " << e.what() << "\n";
                }
                progress.step(failures ? std::to_string(failures) + " failed" : "");
            }
        }
        progress.finish();

        tools::Table table({"feature", "compared", "within " + percent(int64_t(tolerance * 1000), 1000), "exact",
                            "exact without tails", "worst (predicted/measured)"});
        for (const featurize::FeatureAgreement &a : report.features) {
            std::ostringstream worst;
            worst << std::setprecision(3) << a.worst_ratio;
            table.add_row({a.feature, std::to_string(a.compared), percent(a.within, a.compared),
                           percent(a.exact, a.compared),
                           percent(a.exact_without_tails, a.compared_without_tails) + " of " +
                               std::to_string(a.compared_without_tails),
                           worst.str()});
        }
        std::cout << report.schedules << " schedules, " << report.stages << " stages; " << report.unknown
                  << " measurements the oracle could not take; " << failures << " schedules failed\n";
        table.print(std::cout);
        for (const featurize::FeatureAgreement &a : report.features) {
            if (!a.worst_example.empty() && a.worst_ratio != 1)
                std::cout << a.feature << " worst: " << a.worst_example << "\n";
        }
        if (!disagreements_csv.empty()) {
            std::ostringstream csv;
            csv << "schedule,stage,feature,predicted,measured,tails,site\n";
            for (const featurize::Disagreement &d : report.disagreements) {
                csv << d.label << "," << d.stage << "," << d.feature << "," << d.predicted << "," << d.measured << ","
                    << (d.tails ? 1 : 0) << "," << d.site << "\n";
            }
            tools::write_file_atomic(disagreements_csv, csv.str());
        }
        return failures ? 1 : 0;
    });
}
