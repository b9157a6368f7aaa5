#include "datagen/retime.h"

#include "common/errors.h"
#include "datagen/generate.h"
#include "datagen/records.h"
#include "datagen/stored.h"
#include "datasets/operations.h"
#include "datasets/reader.h"
#include "datasets/writer.h"
#include "featurize/apply.h"
#include "featurize/function_dag.h"
#include "featurize/loop_nest_text.h"
#include "runner/output_check.h"

#include <filesystem>
#include <optional>
#include <vector>

namespace schedforge::datagen {

namespace ds = datasets;
namespace sf = featurize;
namespace ss = sampler;

namespace {

constexpr const char *kFastMathNote = "fast-math rounding";

struct Pipeline {
    ds::PipelineRecord record;
    std::vector<size_t> schedules; // into the records: those this run writes, in file order
    std::optional<uint64_t> row;   // its row in the output, once there
    size_t pending = 0;            // its jobs (reference included) not finished yet
    bool cancelled = false;        // a job of it was (stop): left for --resume
    bool reference_done = false;
    std::optional<Halide::Buffer<>> reference;
    double reference_scale = 0;
    std::vector<std::pair<size_t, runner::JobResult>> waiting; // schedules done before their reference
};

// What a stopped or killed run left in the partial file (for --resume), once it is known to be
// this run's.
HeldRecords read_existing(const std::string &partial, const ds::FileInfo &mine) {
    const auto reader = ds::DatasetReader::open(partial);
    const ds::FileInfo &f = reader->info();
    std::string other;
    // A later build may continue (a long relabelling spans sessions) as long as its features are
    // the same; the file keeps the first run's producer_commit.
    if (f.producer != mine.producer || !ds::same_features(f, mine)) {
        other = "with other features or of another input file";
    } else if (f.hardware != mine.hardware) {
        other = "on another machine";
    } else if (f.target != mine.target) {
        other = "for another target";
    } else if (f.timing_protocol != mine.timing_protocol) {
        other = "with another timing protocol";
    } else if (f.config != mine.config) {
        other = "of another input file";
    }
    if (!other.empty()) throw UserError(partial + ": left by a retime " + other + "; remove it to start again");
    return held_records(*reader);
}

} // namespace

RetimeReport retime_dataset(const std::string &input, const std::string &out, const runner::RunnerOptions &runner,
                            bool resume, const std::atomic<bool> *stop,
                            const std::function<void(uint64_t, uint64_t)> &progress) {
    std::error_code ec;
    if (std::filesystem::exists(out, ec)) throw UserError(out + ": already exists (remove it or choose another name)");
    const std::string partial = out + ".partial";
    const bool continuing = resume && std::filesystem::exists(partial, ec);
    if (!resume && std::filesystem::exists(partial, ec)) {
        throw UserError(partial + ": left by a stopped or killed retime; --resume continues it (or remove it)");
    }
    runner::validate(runner);
    const auto reader = ds::DatasetReader::open(input);
    const ds::FileInfo &in = reader->info();
    if (in.schema_version < 3) {
        throw UserError(input + ": schema version " + std::to_string(in.schema_version) +
                        " stores no loop nests to time again (version 3 on does)");
    }
    const std::optional<gen::GeneratorConfig> generator = recorded_generator(in.config, input);
    ds::FileInfo info = run_file_info(runner, in.config); // this run's machine and protocol
    // Whose schedules they are (the features are this build's: earlier recomputes are dropped).
    info.producer +=
        " (timed again: the schedules of " + without_recompute_notes(in.producer) + " " + in.producer_commit + ")";
    const Halide::Target target(info.target);
    const sf::CacheSizes caches = recorded_cache_sizes(info.hardware); // this machine's
    const HeldRecords existing = continuing ? read_existing(partial, info) : HeldRecords();

    // Every record read and checked, and its jobs planned, before the first worker starts.
    const std::vector<ds::ScheduleRecord> summaries = reader->schedule_summaries();
    std::vector<Pipeline> pipelines(reader->num_pipelines());
    std::vector<ds::ScheduleRecord> records(summaries.size());
    std::vector<runner::BenchmarkJob> jobs;
    std::vector<std::pair<size_t, size_t>> job_subject; // per job: pipeline row, record (or SIZE_MAX: reference)
    RetimeReport report;
    report.pipelines = pipelines.size();
    report.schedules = summaries.size();
    {
        std::vector<std::vector<size_t>> of_pipeline(pipelines.size());
        for (uint64_t s = 0; s < summaries.size(); s++) of_pipeline.at(summaries[s].pipeline_row).push_back(s);
        for (size_t row = 0; row < pipelines.size(); row++) {
            Pipeline &p = pipelines[row];
            p.record = reader->pipeline(row);
            const auto there = existing.pipeline_rows.find(p.record.id);
            if (there != existing.pipeline_rows.end()) p.row = there->second;
            for (size_t s : of_pipeline[row]) {
                if (existing.samples.count({p.record.id, summaries[s].sample})) {
                    report.resumed++;
                } else {
                    p.schedules.push_back(s);
                }
            }
            if (p.row && p.schedules.empty()) continue; // all in the partial file
            const std::string where = input + ": pipeline row " + std::to_string(row);
            const StoredSubject subject = stored_subject(p.record, generator, where);
            const sf::FunctionDAG dag = sf::FunctionDAG::build(subject.build().pipeline);
            p.record = with_current_features(p.record, dag, where);

            runner::BenchmarkJob reference;
            reference.name = "pipeline row " + std::to_string(row) + " reference";
            reference.return_output = true;
            reference.group = int64_t(row); // a pipeline's jobs take their timing rounds together
            reference.prepare = [subject]() {
                BuiltSubject b = subject.build();
                b.schedule_compute_root();
                return runner::PreparedJob{b.pipeline, b.output};
            };
            jobs.push_back(std::move(reference));
            job_subject.emplace_back(row, SIZE_MAX);
            p.pending++;

            for (size_t s : p.schedules) {
                ds::ScheduleRecord &rec = records[s] = reader->schedule(s);
                if (rec.nest.empty()) {
                    report.without_nest++;
                    continue;
                }
                rec.features =
                    stored_nest_features(dag, rec.nest, target, caches, where + ", schedule row " + std::to_string(s));
                runner::BenchmarkJob job;
                job.name = "pipeline row " + std::to_string(row) + " schedule row " + std::to_string(s);
                job.return_output = true;
                job.group = int64_t(row);
                job.prepare = [subject, text = rec.nest]() {
                    BuiltSubject b = subject.build();
                    const sf::FunctionDAG d = sf::FunctionDAG::build(b.pipeline);
                    sf::apply(d, sf::parse_nest_text(d, text));
                    return runner::PreparedJob{b.pipeline, b.output};
                };
                jobs.push_back(std::move(job));
                job_subject.emplace_back(row, s);
                p.pending++;
            }
        }
    }

    // Finished pipelines go to the partial file in input order, each record flushed, so that a
    // kill loses only the pipelines in flight.
    std::unique_ptr<ds::DatasetWriter> writer =
        continuing ? ds::DatasetWriter::reopen(partial) : ds::DatasetWriter::create(partial, info);
    auto write = [&](Pipeline &p) {
        if (!p.row) p.row = writer->add_pipeline(p.record);
        for (size_t s : p.schedules) {
            records[s].pipeline_row = *p.row;
            writer->add_schedule(records[s]);
            records[s] = ds::ScheduleRecord(); // written: its timings and features need no longer be held
        }
        p.schedules.clear();
    };
    size_t next = 0; // the first pipeline not yet written
    auto write_finished = [&]() {
        for (; next < pipelines.size() && pipelines[next].pending == 0 && !pipelines[next].cancelled; next++) {
            write(pipelines[next]);
        }
    };
    write_finished(); // pipelines the partial file holds whole

    // A schedule's result into its record, its output checked against its pipeline's reference.
    auto finish = [&](Pipeline &p, size_t s, runner::JobResult &r) {
        ds::ScheduleRecord &rec = records[s];
        const double search_seconds = rec.search_seconds; // the search's, when it was labelled
        const bool admitted_rounding = rec.status == ds::Status::Ok && rec.message.rfind(kFastMathNote, 0) == 0;
        rec.status = dataset_status(r.status);
        rec.message = r.message;
        if (rec.status == ds::Status::Ok && p.reference && r.output) {
            const std::string diff = runner::compare_buffers(*p.reference, *r.output, runner.integer_tolerance,
                                                             runner::scaled_abs_tolerance(p.reference_scale));
            if (!diff.empty() && admitted_rounding) {
                rec.message = std::string(kFastMathNote) + " (admitted under StrictFloat when labelled): " + diff;
            } else if (!diff.empty()) {
                rec.status = ds::Status::WrongOutput, rec.message = "output differs from compute_root's: " + diff;
            }
        }
        record_times(r, rec);
        rec.search_seconds = search_seconds;
        r.output.reset();
        report.timed++;
        if (rec.status == ds::Status::Ok) report.ok++;
    };
    uint64_t done = 0;
    runner::run_jobs(
        jobs, runner,
        [&](size_t job, runner::JobResult &r) {
            const auto [row, s] = job_subject[job];
            Pipeline &p = pipelines[row];
            p.pending--;
            if (r.status == runner::JobStatus::Cancelled) {
                p.cancelled = true;
            } else if (s == SIZE_MAX) {
                p.reference_done = true;
                p.record.reference_status = dataset_status(r.status);
                p.record.reference_runtime = r.status == runner::JobStatus::Ok
                                                 ? r.timing.label_seconds
                                                 : std::numeric_limits<double>::quiet_NaN();
                if (r.status == runner::JobStatus::Ok && r.output) {
                    p.reference = std::move(r.output);
                    p.reference_scale = runner::float_scale(*p.reference);
                }
                for (auto &[waiting, result] : p.waiting) finish(p, waiting, result);
                p.waiting.clear();
            } else if (p.reference_done) {
                finish(p, s, r);
            } else {
                p.waiting.emplace_back(s, std::move(r));
            }
            if (p.pending == 0) p.reference.reset(); // outputs can be large: freed once checked
            if (progress) progress(++done, jobs.size());
            write_finished();
        },
        stop);

    // Stopped: what finished whole is kept (in any order), the rest is left for --resume. (Jobs
    // that never started are not reported to the callback: their pipelines are still pending.)
    for (Pipeline &p : pipelines) {
        if (p.cancelled || p.pending > 0) {
            report.stopped = true;
        } else if (p.pending == 0 && (!p.row || !p.schedules.empty())) {
            write(p);
        }
    }
    writer->close();
    if (report.stopped) return report;
    ds::compact_dataset(partial); // complete: shed what the record-by-record flushes left
    std::filesystem::rename(partial, out);
    return report;
}

} // namespace schedforge::datagen
