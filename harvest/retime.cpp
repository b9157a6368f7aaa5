#include "harvest/retime.h"

#include "common/errors.h"
#include "datasets/operations.h"
#include "datasets/reader.h"
#include "datasets/writer.h"
#include "featurize/apply.h"
#include "featurize/function_dag.h"
#include "featurize/loop_nest_text.h"
#include "harvest/harvest.h"
#include "harvest/records.h"
#include "harvest/stored.h"
#include "sampler/output_check.h"

#include <filesystem>
#include <optional>
#include <vector>

namespace schedforge::harvest {

namespace ds = datasets;
namespace sf = featurize;
namespace ss = sampler;

namespace {

constexpr const char *kFastMathNote = "fast-math rounding";

struct Pipeline {
    ds::PipelineRecord record;
    std::vector<size_t> schedules; // into the records, in file order
    size_t untimed = 0;            // schedule jobs not finished yet
    bool reference_done = false;
    std::optional<Halide::Buffer<>> reference;
    double reference_scale = 0;
    std::vector<std::pair<size_t, ss::JobResult>> waiting; // schedules done before their reference
};

} // namespace

RetimeReport retime_dataset(const std::string &input, const std::string &out, const ss::RunnerOptions &runner,
                            const std::function<void(uint64_t, uint64_t)> &progress) {
    std::error_code ec;
    if (std::filesystem::exists(out, ec)) throw UserError(out + ": already exists (remove it or choose another name)");
    ss::validate(runner);
    const auto reader = ds::DatasetReader::open(input);
    const ds::FileInfo &in = reader->info();
    if (in.schema_version < 3) {
        throw UserError(input + ": schema version " + std::to_string(in.schema_version) +
                        " stores no loop nests to time again (version 3 on does)");
    }
    const std::optional<gen::GeneratorConfig> generator = recorded_generator(in.config, input);
    ds::FileInfo info = run_file_info(runner, in.config); // this run's machine and protocol
    info.producer += " (timed again: the schedules of " + in.producer + " " + in.producer_commit + ")";
    const Halide::Target target(info.target);

    // Every record read and checked, and its jobs planned, before the first worker starts.
    const std::vector<ds::ScheduleRecord> summaries = reader->schedule_summaries();
    std::vector<Pipeline> pipelines(reader->num_pipelines());
    for (uint64_t s = 0; s < summaries.size(); s++) pipelines.at(summaries[s].pipeline_row).schedules.push_back(s);
    std::vector<ds::ScheduleRecord> records(summaries.size());
    std::vector<ss::BenchmarkJob> jobs;
    std::vector<std::pair<size_t, size_t>> job_subject; // per job: pipeline row, record (or SIZE_MAX: reference)
    RetimeReport report;
    for (size_t row = 0; row < pipelines.size(); row++) {
        const std::string where = input + ": pipeline row " + std::to_string(row);
        Pipeline &p = pipelines[row];
        p.record = reader->pipeline(row);
        const StoredSubject subject = stored_subject(p.record, generator, where);
        const sf::FunctionDAG dag = sf::FunctionDAG::build(subject.build().pipeline);
        p.record = with_current_features(p.record, dag, where);
        report.pipelines++;

        ss::BenchmarkJob reference;
        reference.name = "pipeline row " + std::to_string(row) + " reference";
        reference.return_output = true;
        reference.group = int64_t(row); // a pipeline's jobs take their timing rounds together
        reference.prepare = [subject]() {
            BuiltSubject b = subject.build();
            b.schedule_compute_root();
            return ss::PreparedJob{b.pipeline, b.output};
        };
        jobs.push_back(std::move(reference));
        job_subject.emplace_back(row, SIZE_MAX);

        for (size_t s : p.schedules) {
            ds::ScheduleRecord &rec = records[s] = reader->schedule(s);
            report.schedules++;
            if (rec.nest.empty()) {
                report.without_nest++;
                continue;
            }
            rec.features = stored_nest_features(dag, rec.nest, target, where + ", schedule row " + std::to_string(s));
            ss::BenchmarkJob job;
            job.name = "pipeline row " + std::to_string(row) + " schedule row " + std::to_string(s);
            job.return_output = true;
            job.group = int64_t(row);
            job.prepare = [subject, text = rec.nest]() {
                BuiltSubject b = subject.build();
                const sf::FunctionDAG d = sf::FunctionDAG::build(b.pipeline);
                sf::apply(d, sf::parse_nest_text(d, text));
                return ss::PreparedJob{b.pipeline, b.output};
            };
            jobs.push_back(std::move(job));
            job_subject.emplace_back(row, s);
            p.untimed++;
        }
    }

    // A schedule's result into its record, its output checked against its pipeline's reference.
    auto finish = [&](Pipeline &p, size_t s, ss::JobResult &r) {
        ds::ScheduleRecord &rec = records[s];
        const double search_seconds = rec.search_seconds; // the search's, when it was labelled
        const bool admitted_rounding = rec.status == ds::Status::Ok && rec.message.rfind(kFastMathNote, 0) == 0;
        rec.status = dataset_status(r.status);
        rec.message = r.message;
        if (rec.status == ds::Status::Ok && p.reference && r.output) {
            const std::string diff = ss::compare_buffers(*p.reference, *r.output, runner.integer_tolerance,
                                                         ss::scaled_abs_tolerance(p.reference_scale));
            if (!diff.empty() && admitted_rounding) {
                rec.message = std::string(kFastMathNote) + " (admitted under StrictFloat when labelled): " + diff;
            } else if (!diff.empty()) {
                rec.status = ds::Status::WrongOutput, rec.message = "output differs from compute_root's: " + diff;
            }
        }
        record_times(r, rec);
        rec.search_seconds = search_seconds;
        r.output.reset();
        if (--p.untimed == 0) p.reference.reset(); // outputs can be large: freed once checked
        report.timed++;
        if (rec.status == ds::Status::Ok) report.ok++;
    };
    uint64_t done = 0;
    ss::run_jobs(jobs, runner, [&](size_t job, ss::JobResult &r) {
        const auto [row, s] = job_subject[job];
        Pipeline &p = pipelines[row];
        if (s == SIZE_MAX) {
            p.reference_done = true;
            p.record.reference_status = dataset_status(r.status);
            p.record.reference_runtime =
                r.status == ss::JobStatus::Ok ? r.timing.label_seconds : std::numeric_limits<double>::quiet_NaN();
            if (r.status == ss::JobStatus::Ok && r.output) {
                p.reference = std::move(r.output);
                p.reference_scale = ss::float_scale(*p.reference);
            }
            for (auto &[waiting, result] : p.waiting) finish(p, waiting, result);
            p.waiting.clear();
        } else if (p.reference_done) {
            finish(p, s, r);
        } else {
            p.waiting.emplace_back(s, std::move(r));
        }
        if (progress) progress(++done, jobs.size());
    });

    ds::write_via_partial(out, [&](const std::string &partial) {
        auto writer = ds::DatasetWriter::create(partial, info, ds::WriteMode::Bulk);
        for (Pipeline &p : pipelines) {
            const uint64_t row = writer->add_pipeline(p.record);
            for (size_t s : p.schedules) {
                records[s].pipeline_row = row;
                writer->add_schedule(records[s]);
            }
        }
        writer->close();
    });
    return report;
}

} // namespace schedforge::harvest
