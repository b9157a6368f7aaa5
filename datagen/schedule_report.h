// schedule-report's engine: a microscope for the cost model's ranking errors on one pipeline.
//
// For one subject (an app of apps/ or a random pipeline) it benchmarks a population of
// schedules: the beam search's result and the runners-up of its last pass's final beam, schedules
// sampled with random dropout (the datasets' sampling), and random legal loop nests, which no
// pruning rule has seen. Each member carries the cost model's prediction and the manual model's
// 28 term contributions summed over its stages, so that a mis-ranked pair can be read term by
// term. The app's hand-written schedule and Halide's autoschedulers are timed as reference lines
// only (their schedules are not LoopNests: no prediction). The population is written as a dataset
// (datasets/SCHEMA.md), so it can be trained on.
//
// As in generate-dataset, every search runs in the runner's workers (the caller stays
// single-threaded); a member's job repeats the deterministic search and takes its own state.
// Every output is checked against the compute_root schedule's. With timing rounds, members are
// timed in turn in groups of 16 (as a pipeline's samples are), so that a spell of a slower
// machine falls on a group's members alike rather than on one member's every round.
#pragma once

#include "featurize/cost_terms.h"
#include "generator/spec.h"
#include "runner/benchmark_runner.h"
#include "sampler/search_options.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace schedforge::datagen {

struct ReportConfig {
    std::string app;               // an app of apps/ (build_app at benchmark size), or empty and:
    gen::PipelineSpec pipeline;    // a random pipeline
    sampler::SearchOptions search; // the model (weights or coefficients), rules, beam and passes
    int beam_states = 4;           // the search's result and up to this many - 1 runners-up
    int dropout_samples = 16;      // beam 1, one pass, dropout 0.5, seeds derived from `seed`
    int random_nests = 8;          // featurize::random_loop_nest, seeds derived from `seed`
    std::vector<std::string> references{"manual", "Adams2019", "Mullapudi2016"}; // "manual": apps only
    runner::RunnerOptions runner;
    uint64_t seed = 0;
    int pairs = 3; // worst mis-ranked pairs the analysis keeps

    std::string subject_name() const;   // the app's name or "seed<N>"
    void validate() const;              // UserError for a bad value
    std::string effective_text() const; // every setting as YAML (the dataset's `config`)
};

enum class MemberKind { Beam, Dropout, Random, Reference };
const char *member_kind_name(MemberKind k); // "beam", "dropout", "random", "reference"

struct Member {
    std::string label; // "beam 0", "dropout 3", "random 5", "Adams2019"
    MemberKind kind = MemberKind::Beam;
    uint32_t sample = 0; // its row's `sample` in the dataset (population members)
    uint64_t seed = 0;   // dropout seed or random nest seed
    runner::JobStatus status = runner::JobStatus::Crash;
    std::string message;
    double measured = 0;  // seconds, min of the timing samples; NaN unless ok
    double predicted = 0; // the search's cost model; NaN for references
    // The manual model's term contributions per stage (the FunctionDAG's order), ~nanoseconds.
    std::vector<std::array<double, featurize::kNumCostTerms>> stage_terms;
    std::string source;          // schedule source (population members)
    std::string nest;            // its LoopNest as text (featurize/loop_nest_text.h)
    std::vector<float> features; // stages x schedule features
    runner::JobResult result;    // timings and times, outputs dropped
    bool ok() const { return status == runner::JobStatus::Ok; }
    std::array<double, featurize::kNumCostTerms> term_totals() const; // summed over stages
};

// A pair the model orders wrongly: it predicts `better` faster, yet `better` measured slower.
struct MisrankedPair {
    size_t better = 0, worse = 0; // indices into the members
    double measured_ratio = 1;    // measured(better) / measured(worse), > 1
    double predicted_ratio = 1;   // predicted(worse) / predicted(better), >= 1
};

struct ReportAnalysis {
    size_t ranked = 0;            // ok population members (the metrics' sample)
    double pairwise_accuracy = 0; // pairs with different runtimes ordered right
    double kendall_tau = 0;
    double top1_regret = 0; // measured(predicted best) / best measured
    double r2_log = 0;      // of log measured against log predicted, after the best constant scale
    size_t predicted_best = 0, measured_best = 0; // member indices
    std::vector<MisrankedPair> worst;             // most slowed-down first
};

// Ranks the ok population members; the `pairs` worst mis-ranked pairs, each member in at most
// two of them (so that one bad schedule does not fill the list).
ReportAnalysis analyze_population(const std::vector<Member> &members, size_t pairs);

struct Report {
    std::vector<Member> members; // references first, then beam, dropout and random members
    ReportAnalysis analysis;
    std::vector<std::string> stage_names;
    double reference_runtime = 0; // the compute_root schedule's, seconds; NaN unless ok
};

// Runs the population and writes it to `dataset_path` (which must not exist). `on_member` is
// called as each member finishes (progress). Failed members are reported, never thrown.
Report run_schedule_report(const ReportConfig &config, const std::string &dataset_path,
                           const std::function<void(const Member &)> &on_member = {});

} // namespace schedforge::datagen
