#include "datagen/schedule_report.h"

#include "apps/app.h"
#include "common/errors.h"
#include "common/rng.h"
#include "datagen/generate.h"
#include "datagen/records.h"
#include "datagen/subject.h"
#include "datasets/writer.h"
#include "featurize/apply.h"
#include "featurize/function_dag.h"
#include "featurize/loop_nest_text.h"
#include "featurize/random_loop_nest.h"
#include "featurize/schedule_features.h"
#include "generator/build.h"
#include "runner/fingerprint.h"
#include "runner/halide_autoschedulers.h"
#include "runner/host_target.h"
#include "sampler/cost_model.h"
#include "sampler/schedule_pipeline.h"
#include "trainer/metrics.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace schedforge::datagen {

namespace {

namespace ds = datasets;
namespace sf = featurize;
namespace ss = sampler;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Thrown in a worker for a runner-up the final beam does not have (a tiny pipeline's beam holds
// few states): the member is dropped from the report, not recorded as a failure.
constexpr const char *kNoSuchMember = "no such member: ";
// Members timed in turn, round by round (BenchmarkJob::group): each holds a worker process with
// its compiled pipeline until the group is timed, so a group is as large as a pipeline's samples
// in generate-dataset, not the whole population.
constexpr size_t kMembersPerTimingGroup = 16;

// The subject, built in a worker.
BuiltSubject build(const ReportConfig &c) { return build_subject(c.app, c.pipeline); }

// The payload of a population member whose LoopNest `nest` is applied to `dag`'s Funcs.
std::string member_payload(const sf::FunctionDAG &dag, const sf::LoopNest &nest, const Halide::Target &target,
                           const ss::SearchOptions &search, ss::CostModel &model) {
    const std::vector<sf::StageFeatures> features =
        sf::compute_schedule_features(dag, nest, target, search.cache_sizes());
    std::vector<double> cost;
    model.evaluate({&features}, cost);
    ss::ManualCostModel manual(search.coefficients);
    manual.set_pipeline(dag, search.cores);
    SchedulePayload p{sf::schedule_source(dag, nest), sf::nest_text(dag, nest), cost.at(0), {}, {}};
    for (const sf::StageFeatures &s : features) {
        for (double v : s.features.values()) p.features.push_back(float(v));
        for (double c : manual.stage_contributions(s)) p.terms.push_back(c);
    }
    sf::apply(dag, nest);
    return encode(p);
}

struct Planned {
    Member member;
    runner::BenchmarkJob job;
};

} // namespace

std::string ReportConfig::subject_name() const { return app.empty() ? "seed" + std::to_string(pipeline.seed) : app; }

void ReportConfig::validate() const {
    if (!app.empty() && !apps::make_app(app)) throw UserError("unknown app '" + app + "'");
    if (app.empty() && pipeline.nodes.empty()) throw UserError("schedule-report: no app and no pipeline");
    if (beam_states < 1) throw UserError("--beam-states must be at least 1 (the search's result)");
    if (dropout_samples < 0 || random_nests < 0 || pairs < 0)
        throw UserError("--dropout-samples, --random and --pairs must be >= 0");
    for (const std::string &r : references) {
        if (r != "manual" && runner::halide_autoscheduler_plugin(r).empty())
            throw UserError("unknown reference scheduler '" + r + "' (manual or one of Halide's autoschedulers)");
        if (r == "manual" && app.empty())
            throw UserError("reference 'manual' needs an app (random pipelines have none)");
    }
    runner::validate(runner);
    // A bad weights file is the user's error, found before anything is written.
    if (!search.weights.empty()) ss::make_cost_model(search.weights, search.coefficients);
}

std::string ReportConfig::effective_text() const {
    YAML::Emitter e;
    e << YAML::BeginMap;
    e << YAML::Key << "version" << YAML::Value << 1;
    e << YAML::Key << "schedule_report" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "subject" << YAML::Value << subject_name();
    e << YAML::Key << "seed" << YAML::Value << seed;
    e << YAML::Key << "beam_states" << YAML::Value << beam_states;
    e << YAML::Key << "beam_size" << YAML::Value << search.beam_size;
    e << YAML::Key << "passes" << YAML::Value << search.passes;
    e << YAML::Key << "dropout_samples" << YAML::Value << dropout_samples;
    e << YAML::Key << "random_nests" << YAML::Value << random_nests;
    e << YAML::Key << "references" << YAML::Value << YAML::Flow << references;
    e << YAML::Key << "weights" << YAML::Value << search.weights;
    e << YAML::Key << "coefficients" << YAML::Value << YAML::Flow
      << std::vector<double>(search.coefficients.begin(), search.coefficients.end());
    e << YAML::EndMap << YAML::EndMap;
    return e.c_str();
}

std::array<double, sf::kNumCostTerms> Member::term_totals() const {
    std::array<double, sf::kNumCostTerms> t{};
    for (const auto &stage : stage_terms) {
        for (size_t i = 0; i < t.size(); i++) t[i] += stage[i];
    }
    return t;
}

const char *member_kind_name(MemberKind k) {
    switch (k) {
    case MemberKind::Beam: return "beam";
    case MemberKind::Dropout: return "dropout";
    case MemberKind::Random: return "random";
    case MemberKind::Reference: return "reference";
    }
    return "unknown";
}

ReportAnalysis analyze_population(const std::vector<Member> &members, size_t pairs) {
    ReportAnalysis a;
    std::vector<size_t> idx;
    trainer::PipelinePredictions p;
    for (size_t i = 0; i < members.size(); i++) {
        const Member &m = members[i];
        if (m.kind == MemberKind::Reference || !m.ok() || !(m.measured > 0) || !(m.predicted > 0)) continue;
        idx.push_back(i);
        p.predicted.push_back(m.predicted);
        p.measured.push_back(m.measured);
    }
    a.ranked = idx.size();
    if (idx.empty()) return a;
    a.pairwise_accuracy = trainer::pairwise_accuracy({p});
    a.kendall_tau = trainer::kendall_tau_b(p.predicted, p.measured);
    a.top1_regret = trainer::top1_regret(p);
    // The manual model's unit is only roughly a nanosecond: R^2 after the best constant scale.
    double offset = 0;
    for (size_t i = 0; i < idx.size(); i++) offset += std::log(p.measured[i]) - std::log(p.predicted[i]);
    trainer::PipelinePredictions scaled = p;
    for (double &v : scaled.predicted) v *= std::exp(offset / double(idx.size()));
    a.r2_log = trainer::r2_of_logs({scaled});
    const auto by = [&](const std::vector<double> &v) {
        return idx[size_t(std::min_element(v.begin(), v.end()) - v.begin())];
    };
    a.predicted_best = by(p.predicted);
    a.measured_best = by(p.measured);
    std::vector<MisrankedPair> wrong;
    for (size_t i = 0; i < idx.size(); i++) {
        for (size_t j = 0; j < idx.size(); j++) {
            if (p.predicted[i] < p.predicted[j] && p.measured[i] > p.measured[j]) {
                wrong.push_back({idx[i], idx[j], p.measured[i] / p.measured[j], p.predicted[j] / p.predicted[i]});
            }
        }
    }
    std::stable_sort(wrong.begin(), wrong.end(), [](const MisrankedPair &x, const MisrankedPair &y) {
        return x.measured_ratio > y.measured_ratio;
    });
    std::map<size_t, int> uses;
    for (const MisrankedPair &w : wrong) {
        if (a.worst.size() >= pairs) break;
        if (uses[w.better] >= 2 || uses[w.worse] >= 2) continue;
        uses[w.better]++, uses[w.worse]++;
        a.worst.push_back(w);
    }
    return a;
}

Report run_schedule_report(const ReportConfig &config, const std::string &dataset_path,
                           const std::function<void(const Member &)> &on_member) {
    config.validate();
    const Halide::Target target = runner::runnable_here(Halide::Target(config.runner.target));
    const Halide::MachineParams machine = runner::machine_params_for(runner::fingerprint_this_machine());
    ss::SearchOptions search = config.search;
    if (search.cores <= 0) search.cores = machine.parallelism;
    std::unique_ptr<ds::DatasetWriter> writer =
        ds::DatasetWriter::create(dataset_path, run_file_info(config.runner, config.effective_text()));

    // The compute_root reference: its output checks every other, its payload describes the stages.
    runner::BenchmarkJob reference;
    reference.name = config.subject_name() + " / compute_root";
    reference.return_output = true;
    reference.prepare = [config]() {
        BuiltSubject b = build(config);
        runner::PreparedJob job{b.pipeline, b.output};
        job.payload = encode(pipeline_payload(sf::FunctionDAG::build(b.pipeline)));
        b.schedule_compute_root();
        return job;
    };
    const runner::JobResult ref = runner::run_jobs({reference}, config.runner).at(0);
    Report report;
    report.reference_runtime = ref.status == runner::JobStatus::Ok ? ref.timing.label_seconds : kNaN;
    ds::PipelineRecord pipeline;
    if (!config.app.empty()) {
        pipeline.spec = "app " + config.app;
        pipeline.id = common::mix64(common::fnv1a64(pipeline.spec.data(), pipeline.spec.size()));
    } else {
        pipeline.spec = config.pipeline.to_text();
        pipeline.id = config.pipeline.id();
        pipeline.seed = config.pipeline.seed;
        pipeline.generator_version = config.pipeline.generator_version;
    }
    PipelinePayload stages;
    if (ref.payload.empty()) {
        throw std::runtime_error(reference.name + " failed (" + runner::status_name(ref.status) + "): " + ref.message);
    }
    if (const std::string why = decode(ref.payload, stages); !why.empty())
        throw std::runtime_error(reference.name + ": " + malformed_result(why));
    pipeline.stages = std::move(stages.stages);
    pipeline.features = std::move(stages.features);
    pipeline.reference_status = dataset_status(ref.status);
    pipeline.reference_runtime = report.reference_runtime;
    report.stage_names = pipeline.stages;
    const uint64_t pipeline_row = writer->add_pipeline(pipeline);

    // The plan: references, then the population.
    std::vector<Planned> plan;
    for (const std::string &r : config.references) {
        Planned p;
        p.member.label = r;
        p.member.kind = MemberKind::Reference;
        p.member.predicted = kNaN;
        p.job.prepare = [config, r, target, machine]() {
            BuiltSubject b = build(config);
            std::string payload;
            if (r == "manual") {
                apps::schedule_manual(b.app, target);
            } else { // its schedule's source goes to schedules/ beside the population's
                const Halide::AutoSchedulerResults done =
                    runner::run_halide_autoscheduler(r, b.pipeline, target, machine);
                payload = encode(SchedulePayload{done.schedule_source, "", kNaN, {}, {}});
            }
            runner::PreparedJob job{b.pipeline, b.output};
            job.payload = std::move(payload);
            return job;
        };
        plan.push_back(std::move(p));
    }
    uint32_t sample = 0;
    for (int k = 0; k < config.beam_states; k++, sample++) {
        Planned p;
        p.member.label = "beam " + std::to_string(k);
        p.member.kind = MemberKind::Beam;
        p.member.sample = sample;
        p.member.seed = search.seed;
        p.job.prepare = [config, search, target, k]() {
            BuiltSubject b = build(config);
            const sf::FunctionDAG dag = sf::FunctionDAG::build(b.pipeline);
            const std::unique_ptr<ss::CostModel> model = ss::make_cost_model(search.weights, search.coefficients);
            const ss::SearchResult found = ss::beam_search(dag, target, *model, search);
            // The result itself, then the last pass's final beam past its own best.
            if (size_t(k) >= std::max<size_t>(found.finalists.size(), 1))
                throw std::runtime_error(std::string(kNoSuchMember) + "the final beam holds " +
                                         std::to_string(found.finalists.size()) + " states");
            const sf::LoopNest &nest = k == 0 ? found.nest : found.finalists[size_t(k)].nest;
            runner::PreparedJob job{b.pipeline, b.output};
            job.payload = member_payload(dag, nest, target, search, *model);
            return job;
        };
        plan.push_back(std::move(p));
    }
    for (int k = 0; k < config.dropout_samples + config.random_nests; k++, sample++) {
        const bool dropout = k < config.dropout_samples;
        const int n = dropout ? k + 1 : k - config.dropout_samples;
        Planned p;
        p.member.kind = dropout ? MemberKind::Dropout : MemberKind::Random;
        p.member.label = std::string(dropout ? "dropout " : "random ") + std::to_string(n);
        p.member.sample = sample;
        p.member.seed = common::derive_seed(config.seed, uint64_t(dropout ? n : 1000000 + n));
        ss::SearchOptions s = search;
        s.beam_size = 1, s.passes = 1, s.dropout = 0.5, s.seed = p.member.seed;
        p.job.prepare = [config, s, target, dropout]() {
            BuiltSubject b = build(config);
            const sf::FunctionDAG dag = sf::FunctionDAG::build(b.pipeline);
            const std::unique_ptr<ss::CostModel> model = ss::make_cost_model(s.weights, s.coefficients);
            model->set_pipeline(dag, s.cores);
            const sf::LoopNest nest =
                dropout ? ss::beam_search(dag, target, *model, s).nest : sf::random_loop_nest(dag, target, s.seed);
            runner::PreparedJob job{b.pipeline, b.output};
            job.payload = member_payload(dag, nest, target, s, *model);
            return job;
        };
        plan.push_back(std::move(p));
    }

    std::vector<runner::BenchmarkJob> jobs;
    for (size_t i = 0; i < plan.size(); i++) {
        Planned &p = plan[i];
        p.job.name = config.subject_name() + " / " + p.member.label;
        if (ref.output) p.job.reference = ref.output;
        p.job.group = int64_t(i / kMembersPerTimingGroup);
        jobs.push_back(p.job);
    }
    runner::run_jobs(jobs, config.runner, [&](size_t j, runner::JobResult &r) {
        Member &m = plan[j].member;
        m.status = r.status;
        m.message = r.message;
        m.measured = r.status == runner::JobStatus::Ok ? r.timing.label_seconds : kNaN;
        SchedulePayload p;
        const std::string why = r.payload.empty() ? "" : decode(r.payload, p);
        if (!why.empty()) {
            m.status = runner::JobStatus::Crash, m.message = malformed_result(why);
            m.measured = kNaN;
        } else if (!r.payload.empty()) {
            m.predicted = p.cost;
            m.source = std::move(p.source);
            m.nest = std::move(p.nest);
            m.features = std::move(p.features);
            for (size_t i = 0; i + sf::kNumCostTerms <= p.terms.size(); i += sf::kNumCostTerms) {
                m.stage_terms.emplace_back();
                std::copy_n(p.terms.begin() + long(i), sf::kNumCostTerms, m.stage_terms.back().begin());
            }
        }
        r.output.reset();
        m.result = r;
        if (on_member) on_member(m);
    });

    for (Planned &p : plan) {
        Member &m = p.member;
        if (m.message.find(kNoSuchMember) != std::string::npos) continue;
        if (m.kind != MemberKind::Reference) {
            ds::ScheduleRecord s;
            s.pipeline_row = pipeline_row;
            s.sample = m.sample;
            s.seed = m.seed;
            s.mode = m.kind == MemberKind::Beam      ? ds::SearchMode::Beam
                     : m.kind == MemberKind::Dropout ? ds::SearchMode::Dropout
                                                     : ds::SearchMode::Random;
            const bool searched = m.kind != MemberKind::Random;
            s.beam_size = searched ? (m.kind == MemberKind::Beam ? search.beam_size : 1) : 0;
            s.passes = searched ? (m.kind == MemberKind::Beam ? search.passes : 1) : 0;
            s.dropout = m.kind == MemberKind::Dropout ? 0.5 : 1.0;
            s.status = dataset_status(m.status);
            s.message = m.message;
            s.predicted_cost = m.predicted;
            s.source = m.source;
            s.nest = m.nest;
            s.features = m.features;
            record_times(m.result, s);
            writer->add_schedule(s);
        }
        report.members.push_back(std::move(m));
    }
    writer->close();
    report.analysis = analyze_population(report.members, size_t(std::max(config.pairs, 0)));
    return report;
}

} // namespace schedforge::datagen
