#include "datagen/generate.h"
#include "datagen/jobs.h"
#include "datagen/records.h"
#include "runner/host_target.h"

#include "common/build_info.h"
#include "common/errors.h"
#include "common/rng.h"
#include "common/stopwatch.h"
#include "datasets/operations.h"
#include "datasets/reader.h"
#include "datasets/writer.h"
#include "featurize/function_dag.h"
#include "featurize/pipeline_features.h"
#include "featurize/schedule_features.h"
#include "generator/build.h"
#include "generator/synthesize.h"
#include "runner/fingerprint.h"
#include "runner/output_check.h"
#include "runner/system_allocator.h"
#include "sampler/schedule_pipeline.h"

#include <Halide.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

namespace schedforge::datagen {

namespace {

namespace ds = datasets;
namespace sf = featurize;
namespace ss = sampler;

using Clock = std::chrono::steady_clock;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- the searches (describe(), on the runner's threads) --------------------------------------

// Feature rows are stored per stage in the FunctionDAG's order, node by node, then stage by stage
// (inputs have none): the order compute_schedule_features() returns them in (records.h).

// Sample job payload: the searched schedule's source, cost and per-stage features.
std::string schedule_payload(const ss::ScheduledPipeline &scheduled) {
    return encode({scheduled.source, scheduled.nest, scheduled.search.cost, flattened(scheduled.search.features), {}});
}

// A pipeline's Halide build and FunctionDAG, made by the first of its jobs' searches to need them
// and shared, read-only, by the others (they may run at once, on the runner's threads); dropped
// once all of them are done (a later use, the StrictFloat recheck's, builds them again).
class SharedAnalysis {
public:
    struct Analysis {
        explicit Analysis(const gen::PipelineSpec &spec)
            : built(gen::build_pipeline(spec)), dag(sf::FunctionDAG::build(built.pipeline)) {}
        gen::BuiltPipeline built;
        sf::FunctionDAG dag;
    };

    SharedAnalysis(gen::PipelineSpec spec, int uses) : spec_(std::move(spec)), uses_(uses) {}

    // Holds the analysis for one use, until done().
    std::shared_ptr<const Analysis> take() {
        std::lock_guard lock(mutex_);
        if (!analysis_) analysis_ = std::make_shared<const Analysis>(spec_);
        return analysis_;
    }
    void done() {
        std::lock_guard lock(mutex_);
        if (--uses_ <= 0) analysis_.reset();
    }

private:
    const gen::PipelineSpec spec_;
    std::mutex mutex_;
    int uses_;
    std::shared_ptr<const Analysis> analysis_;
};

// Runs `describe` with the pipeline's analysis, and counts the use done however it ends.
template<typename F>
runner::JobSpec with_analysis(SharedAnalysis &shared, F describe) {
    struct Done {
        SharedAnalysis &s;
        ~Done() { s.done(); }
    } done{shared};
    return describe(*shared.take());
}

// ---- in the parent ---------------------------------------------------------------------------

struct PlannedPipeline {
    int64_t index = 0;
    gen::PipelineSpec spec;
    uint64_t id = 0;
};

struct JobInfo {
    size_t pipeline = 0; // index into the plan
    int64_t sample = -1; // -1: the pipeline's reference job
    ss::SearchOptions search;
    ds::SearchMode mode = ds::SearchMode::Beam;
};

// What the file already holds (for --resume), once it is known to be this config's.
HeldRecords read_existing(const std::string &path, const DatasetConfig &config) {
    const std::unique_ptr<ds::DatasetReader> reader = ds::DatasetReader::open(path);
    const ds::FileInfo &info = reader->info();
    const ds::FileInfo mine = dataset_file_info(config);
    if (info.config != mine.config) {
        throw UserError(path + ": made with a different config (seed, samples per pipeline, search, generator or "
                               "timing); --resume needs the same one (only --pipelines may grow)");
    }
    if (!ds::same_features(info, mine)) {
        throw UserError(path + ": written with other feature versions than this build's; start a new file");
    }
    if (info.target != mine.target)
        throw UserError(path + ": written for target " + info.target + ", not " + mine.target);
    return held_records(*reader);
}

// Writes finished jobs in job order (results may finish out of order).
//
// Without StrictFloat, LLVM may fuse and reorder float operations differently per schedule, and
// where a float becomes an integer (a cast, an index) one rounding step can move an output by
// far more than the tolerance: every schedule of such a pipeline then "differs" from
// compute_root's, though each computes the same function. So a sample whose output differs is
// held back, and after the run recheck() compiles it and its compute_root reference again with
// StrictFloat (no timing) and compares those: a match makes it ok, with a note; a difference
// there too keeps it wrong_output. Held-back samples are written last; a run stopped before the
// recheck leaves them unwritten, and --resume runs them again.
class InOrderWriter {
public:
    InOrderWriter(ds::RecordSink &writer, const std::vector<PlannedPipeline> &plan, const std::vector<JobInfo> &jobs,
                  const HeldRecords &existing, int64_t integer_tolerance, bool recheck_strict, GenerationStats &stats,
                  const GenerationProgress &on_sample)
        : writer_(writer), plan_(plan), jobs_(jobs), rows_(existing.pipeline_rows), tolerance_(integer_tolerance),
          recheck_strict_(recheck_strict), stats_(stats), on_sample_(on_sample) {}

    void done(size_t job, runner::JobResult &result) {
        pending_.emplace(job, std::move(result));
        for (auto it = pending_.find(next_); it != pending_.end(); it = pending_.find(next_)) {
            const auto start = Clock::now();
            write(next_, it->second);
            stats_.write_seconds += seconds_since(start);
            pending_.erase(it);
            next_++;
        }
    }

    // Runs `jobs` (the run's, by index) of the held-back samples and their references again with
    // StrictFloat, then writes the samples.
    void recheck(const std::vector<runner::BenchmarkJob> &jobs, runner::RunnerOptions options,
                 const std::atomic<bool> *stop, const JobRunner &run) {
        if (held_.empty() || (stop && *stop)) return;
        options.target = Halide::Target(options.target).with_feature(Halide::Target::StrictFloat).to_string();
        options.timing.warmup_runs = 0; // the output is what counts, not the time
        options.timing.min_samples = options.timing.max_samples = options.timing.rounds = 1;
        std::vector<runner::BenchmarkJob> strict;
        std::map<size_t, size_t> strict_index; // the run's job index -> strict's
        for (const Held &h : held_) {
            for (size_t k : {h.reference_job, h.job}) {
                if (!strict_index.emplace(k, strict.size()).second) continue;
                strict.push_back(jobs[k]);
                strict.back().return_output = true;
            }
        }
        const std::vector<runner::JobResult> results = run(strict, options, {}, stop);
        for (const runner::JobResult &r : results) { // the recheck's cost counts in the run's summary
            stats_.search_seconds += r.prepare_seconds;
            stats_.compile_seconds += r.compile_seconds;
            stats_.benchmark_seconds += r.benchmark_seconds;
        }
        for (Held &h : held_) {
            const runner::JobResult &ref = results[strict_index.at(h.reference_job)],
                                    &r = results[strict_index.at(h.job)];
            if (ref.status == runner::JobStatus::Cancelled || r.status == runner::JobStatus::Cancelled)
                continue; // --resume
            std::string verdict;
            if (ref.status != runner::JobStatus::Ok || !ref.output) {
                verdict = "compute_root failed under StrictFloat: " + ref.message;
            } else if (r.status != runner::JobStatus::Ok || !r.output) {
                verdict = std::string("under StrictFloat: ") + runner::status_name(r.status) + " " + r.message;
            } else {
                verdict = runner::compare_buffers(*ref.output, *r.output, tolerance_,
                                                  runner::scaled_abs_tolerance(h.reference_scale));
                if (verdict.empty()) {
                    h.record.status = ds::Status::Ok;
                    h.record.message = "fast-math rounding: " + h.record.message +
                                       "; with StrictFloat the output matches compute_root's";
                    record_times(h.result, h.record); // the first run's timing, now that it is ok
                } else {
                    verdict = "with StrictFloat too: " + verdict;
                }
            }
            if (!verdict.empty()) h.record.message += " (" + verdict + ")";
            add(h.record);
        }
    }

private:
    struct Held {
        size_t job, reference_job;
        ds::ScheduleRecord record;
        double reference_scale;
        runner::JobResult result; // without its output
    };

    void add(const ds::ScheduleRecord &s) {
        writer_.add_schedule(s);
        stats_.samples_written++;
        stats_.by_status[size_t(s.status)]++;
        if (on_sample_) on_sample_(stats_);
    }

    void write(size_t index, runner::JobResult &r) {
        const JobInfo &job = jobs_[index];
        if (r.status == runner::JobStatus::Cancelled) return;
        stats_.search_seconds += r.prepare_seconds;
        stats_.compile_seconds += r.compile_seconds;
        stats_.benchmark_seconds += r.benchmark_seconds;
        stats_.retaken_timings += r.timing.retaken;
        stats_.contended_labels += r.timing.contended ? 1 : 0;
        const PlannedPipeline &p = plan_[job.pipeline];
        if (job.sample < 0) {
            reference_job_ = index;
            write_pipeline(p, r);
            return;
        }
        ds::ScheduleRecord s;
        s.pipeline_row = rows_.at(p.id);
        s.sample = uint32_t(job.sample);
        s.seed = job.search.seed;
        s.mode = job.mode;
        s.beam_size = job.search.beam_size;
        s.passes = job.search.passes;
        s.dropout = job.search.dropout;
        s.status = dataset_status(r.status);
        s.message = r.message;
        if (SchedulePayload p; !r.payload.empty()) {
            if (const std::string why = decode(r.payload, p); !why.empty()) {
                s.status = ds::Status::Crash, s.message = malformed_result(why);
                r.output.reset();
            }
            s.source = std::move(p.source);
            s.nest = std::move(p.nest);
            s.predicted_cost = p.cost;
            s.features = std::move(p.features);
        }
        bool hold = false;
        if (s.status == ds::Status::Ok && reference_ && r.output) {
            const std::string diff = runner::compare_buffers(*reference_, *r.output, tolerance_,
                                                             runner::scaled_abs_tolerance(reference_scale_));
            if (!diff.empty()) {
                s.status = ds::Status::WrongOutput, s.message = "output differs from compute_root's: " + diff;
                hold = recheck_strict_;
            }
        }
        record_times(r, s);
        if (hold) {
            r.output.reset();
            held_.push_back({index, reference_job_, std::move(s), reference_scale_, std::move(r)});
            return;
        }
        add(s);
    }

    void write_pipeline(const PlannedPipeline &p, runner::JobResult &r) {
        reference_.reset();
        PipelinePayload payload;
        if (!r.payload.empty()) {
            if (const std::string why = decode(r.payload, payload); !why.empty()) {
                r.status = runner::JobStatus::Crash, r.message = malformed_result(why);
                r.output.reset(); // no reference to check the samples against
            }
        }
        if (r.status == runner::JobStatus::Ok && r.output) {
            reference_ = std::move(r.output);
            reference_scale_ = runner::float_scale(*reference_);
        }
        if (rows_.count(p.id)) return; // resumed: the row is there
        ds::PipelineRecord rec;
        rec.id = p.id;
        rec.seed = p.spec.seed;
        rec.generator_version = p.spec.generator_version;
        rec.spec = p.spec.to_text();
        rec.stages = std::move(payload.stages);
        rec.features = std::move(payload.features);
        rec.reference_status = dataset_status(r.status);
        rec.reference_runtime = r.status == runner::JobStatus::Ok ? r.timing.label_seconds : kNaN;
        rows_[p.id] = writer_.add_pipeline(rec);
        stats_.pipelines_written++;
    }

    ds::RecordSink &writer_;
    const std::vector<PlannedPipeline> &plan_;
    const std::vector<JobInfo> &jobs_;
    std::map<uint64_t, uint64_t> rows_;
    int64_t tolerance_;
    bool recheck_strict_;
    GenerationStats &stats_;
    const GenerationProgress &on_sample_;
    std::map<size_t, runner::JobResult> pending_;
    size_t next_ = 0;
    std::optional<Halide::Buffer<>> reference_; // of the pipeline being written
    double reference_scale_ = 0;
    size_t reference_job_ = 0; // its job
    std::vector<Held> held_;   // samples whose output differs, for recheck()
};

} // namespace

ds::FileInfo dataset_file_info(const DatasetConfig &config) {
    return run_file_info(config.runner, config.effective_text());
}

ds::FileInfo run_file_info(const runner::RunnerOptions &runner, const std::string &config_text) {
    ds::FileInfo info;
    info.pipeline_feature_version = sf::PipelineFeatures::version();
    info.pipeline_feature_names = sf::PipelineFeatures::names();
    info.schedule_feature_version = sf::ScheduleFeatures::version();
    info.schedule_feature_names = sf::ScheduleFeatures::names();
    info.producer = common::producer();
    info.producer_commit = common::producer_commit();
    const runner::HardwareFingerprint fp = runner::fingerprint_this_machine();
    info.halide_version = fp.halide_version;
    info.target = runner::runnable_here(Halide::Target(runner.target)).to_string();
    for (const auto &[k, v] : fp.fields()) info.hardware += k + " = " + v + "\n";
    const runner::TimingProtocol &t = runner.timing;
    info.timing_protocol =
        "warmup_runs = " + std::to_string(t.warmup_runs) + "\nmin_samples = " + std::to_string(t.min_samples) +
        "\nmax_samples = " + std::to_string(t.max_samples) + "\naccuracy = " + std::to_string(t.accuracy) +
        "\nmax_seconds = " + std::to_string(t.max_seconds) +
        "\nmin_sampling_seconds = " + std::to_string(t.min_sampling_seconds) +
        "\nthreads = " + std::to_string(t.threads) + "\nmax_cpu_wait = " + std::to_string(t.max_cpu_wait) +
        "\ncontended_seconds = " + std::to_string(t.contended_seconds) + "\nrounds = " + std::to_string(t.rounds) +
        "\nlabel = " + (t.rounds > 1 ? "median of the rounds' minima" : "min") +
        "\nround_processes = " + (t.fresh_processes ? "fresh" : "shared") +
        "\nexclusive_benchmark = " + (runner.exclusive_benchmark ? "true" : "false") +
        "\nprocesses_on_machine = " + std::to_string(runner.processes_on_machine) +
        "\nmachine_lock = " + (runner.machine_lock.empty() ? "none" : runner.machine_lock) +
        "\ntimed_malloc = " + runner::system_allocator() + "\nprocess_malloc = " + runner::process_allocator() + "\n";
    info.config = config_text;
    info.created = ds::utc_timestamp();
    return info;
}

GenerationStats generate_dataset(const DatasetConfig &config, const std::string &out_path, bool resume,
                                 const std::atomic<bool> *stop, const GenerationProgress &on_sample,
                                 const JobRunner &run) {
    const auto start = Clock::now();
    const HeldRecords existing = resume ? read_existing(out_path, config) : HeldRecords();
    std::unique_ptr<ds::DatasetWriter> writer =
        resume ? ds::DatasetWriter::reopen(out_path) : ds::DatasetWriter::create(out_path, dataset_file_info(config));
    GenerationStats stats = generate_into(config, *writer, existing, stop, on_sample, run);
    writer->close();
    // Complete: no more appends, so the file can shed the space its record-by-record flushes left.
    if (!stats.stopped) ds::compact_dataset(out_path);
    stats.wall_seconds = seconds_since(start);
    return stats;
}

GenerationStats generate_into(const DatasetConfig &config, datasets::RecordSink &sink, const HeldRecords &existing,
                              const std::atomic<bool> *stop, const GenerationProgress &on_sample,
                              const JobRunner &run) {
    const auto start = Clock::now();
    GenerationStats stats;

    // The plan: every pipeline and sample, minus what the file holds.
    std::vector<PlannedPipeline> plan;
    std::vector<JobInfo> infos;
    std::vector<runner::BenchmarkJob> jobs;
    const Halide::Target target = runner::runnable_here(Halide::Target(config.runner.target));
    for (int64_t i = 0; i < config.pipelines; i++) {
        if (!config.shard.holds(i)) continue;
        PlannedPipeline p;
        p.index = i;
        p.spec = gen::synthesize_pipeline(config.generator, common::derive_seed(config.seed, uint64_t(i)));
        p.id = p.spec.id();
        std::vector<int64_t> missing;
        for (int64_t s = 0; s < config.schedules_per_pipeline; s++) {
            if (existing.samples.count({p.id, uint32_t(s)})) {
                stats.samples_present++;
            } else {
                missing.push_back(s);
            }
        }
        stats.samples_planned += config.schedules_per_pipeline;
        if (missing.empty()) continue;
        const size_t index = plan.size();
        plan.push_back(p);
        const gen::PipelineSpec spec = p.spec;

        JobInfo ref;
        ref.pipeline = index;
        infos.push_back(ref);
        runner::BenchmarkJob rj;
        rj.name = "pipeline " + std::to_string(i) + " reference";
        rj.return_output = true;
        rj.group = int64_t(index); // a pipeline's jobs take their timing rounds together
        const auto shared = std::make_shared<SharedAnalysis>(spec, int(missing.size()) + 1);
        rj.describe = [spec, shared]() {
            return with_analysis(*shared, [&](const SharedAnalysis::Analysis &a) {
                return generated_job(spec, "", encode(pipeline_payload(a.dag)));
            });
        };
        jobs.push_back(std::move(rj));

        for (int64_t s : missing) {
            JobInfo info;
            info.pipeline = index;
            info.sample = s;
            const SampleSearch &how = s == 0 ? config.beam_sample : config.dropout_samples;
            info.mode = s == 0 ? ds::SearchMode::Beam : ds::SearchMode::Dropout;
            info.search = config.search;
            info.search.beam_size = how.beam_size;
            info.search.passes = how.passes;
            info.search.dropout = how.dropout;
            info.search.seed = common::derive_seed(p.spec.seed, uint64_t(s));
            runner::BenchmarkJob sj;
            sj.name = "pipeline " + std::to_string(i) + " sample " + std::to_string(s);
            sj.return_output = true;
            sj.group = int64_t(index);
            sj.describe = [spec, shared, search = info.search, target]() {
                return with_analysis(*shared, [&](const SharedAnalysis::Analysis &a) {
                    const ss::ScheduledPipeline scheduled = ss::search_schedule(a.dag, target, search);
                    return generated_job(spec, scheduled.nest, schedule_payload(scheduled));
                });
            };
            infos.push_back(info);
            jobs.push_back(std::move(sj));
        }
    }

    if (on_sample) on_sample(stats);
    const bool strict = Halide::Target(config.runner.target).has_feature(Halide::Target::StrictFloat);
    InOrderWriter out(sink, plan, infos, existing, config.runner.integer_tolerance, !strict, stats, on_sample);
    run(
        jobs, config.runner, [&](size_t job, runner::JobResult &r) { out.done(job, r); }, stop);
    out.recheck(jobs, config.runner, stop, run);
    stats.stopped = stats.samples_present + stats.samples_written < stats.samples_planned;
    stats.wall_seconds = seconds_since(start);
    return stats;
}

} // namespace schedforge::datagen
