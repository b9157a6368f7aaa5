#include "trainer/training_data.h"

#include "common/errors.h"
#include "common/timing_note.h"
#include "datasets/operations.h"
#include "datasets/reader.h"

#include <cmath>
#include <unordered_map>

namespace schedforge::trainer {

namespace ds = datasets;

size_t TrainingData::num_schedules() const {
    size_t n = 0;
    for (const TrainingPipeline &p : pipelines) n += p.runtimes.size();
    return n;
}

std::vector<float> output_stages_from_names(const std::vector<std::string> &stage_names) {
    auto func_of = [](const std::string &stage) { return stage.substr(0, stage.find(".update(")); };
    std::vector<float> out(stage_names.size(), 0.0f);
    if (stage_names.empty()) return out;
    const std::string output = func_of(stage_names[0]);
    for (size_t s = 0; s < stage_names.size(); s++) out[s] = func_of(stage_names[s]) == output ? 1.0f : 0.0f;
    return out;
}

namespace {

double relative_spread(const std::vector<double> &timings) {
    if (timings.size() < 2) return 0;
    double mean = 0, var = 0;
    for (double t : timings) mean += t;
    mean /= double(timings.size());
    for (double t : timings) var += (t - mean) * (t - mean);
    var /= double(timings.size() - 1);
    return mean > 0 ? std::sqrt(var) / mean : 0;
}

void check_features(const char *kind, int version, const std::vector<std::string> &names, int build_version,
                    const std::vector<std::string> &build_names, const std::string &path) {
    if (version == build_version && names == build_names) return;
    throw UserError(path + ": " + kind + " features version " + std::to_string(version) + " x " +
                    std::to_string(names.size()) + " are not this build's (version " + std::to_string(build_version) +
                    " x " + std::to_string(build_names.size()) +
                    "; `dataset refeaturize` recomputes them from files of " + "schema version 3 on)");
}

void check_features(const ds::FileInfo &info, const std::string &path) {
    check_features("pipeline", info.pipeline_feature_version, info.pipeline_feature_names,
                   featurize::PipelineFeatures::version(), featurize::PipelineFeatures::names(), path);
    check_features("schedule", info.schedule_feature_version, info.schedule_feature_names,
                   featurize::ScheduleFeatures::version(), featurize::ScheduleFeatures::names(), path);
}

} // namespace

TrainingData load_training_data(const std::vector<std::string> &paths, LoadReport *report) {
    LoadReport rep;
    TrainingData all;
    std::unordered_map<uint64_t, size_t> by_id;
    for (const std::string &path : paths) {
        const std::unique_ptr<ds::DatasetReader> reader = ds::DatasetReader::open(path);
        check_features(reader->info(), path);
        rep.files++;
        const std::vector<ds::ScheduleRecord> summaries = reader->schedule_summaries();
        std::unordered_map<uint64_t, size_t> row_to_index; // pipeline row -> index in all.pipelines
        for (uint64_t row = 0; row < summaries.size(); row++) {
            const ds::ScheduleRecord &summary = summaries[row];
            if (summary.status != ds::Status::Ok || !(summary.runtime_min > 0)) {
                rep.skipped_schedules++;
                continue;
            }
            auto known = row_to_index.find(summary.pipeline_row);
            if (known == row_to_index.end()) {
                const ds::PipelineRecord p = reader->pipeline(summary.pipeline_row);
                auto [it, inserted] = by_id.emplace(p.id, all.pipelines.size());
                if (inserted) {
                    TrainingPipeline tp;
                    tp.id = p.id;
                    tp.source = path;
                    tp.input.num_stages = int(p.stages.size());
                    tp.input.pipeline_features = p.features;
                    tp.input.is_output = output_stages_from_names(p.stages);
                    tp.input.num_cores = std::max(1, int(summary.threads));
                    all.pipelines.push_back(std::move(tp));
                }
                known = row_to_index.emplace(summary.pipeline_row, it->second).first;
            }
            TrainingPipeline &tp = all.pipelines[known->second];
            const ds::ScheduleRecord s = reader->schedule(row);
            if (s.features.size() != size_t(tp.input.num_stages) * kScheduleFeatures) {
                rep.skipped_schedules++;
                continue;
            }
            if (common::timed_under_contention(s.message)) { // a label that may be cores x too slow
                rep.skipped_schedules++, rep.contended_schedules++;
                continue;
            }
            tp.schedule_features.push_back(s.features);
            tp.runtimes.push_back(s.runtime_min);
            tp.timing_spread.push_back(relative_spread(s.timings));
        }
    }
    TrainingData kept;
    for (TrainingPipeline &p : all.pipelines) {
        if (p.runtimes.size() < 2) {
            rep.skipped_pipelines++;
            rep.skipped_schedules += p.runtimes.size();
            continue;
        }
        kept.pipelines.push_back(std::move(p));
    }
    rep.pipelines = kept.pipelines.size();
    rep.schedules = kept.num_schedules();
    if (report) *report = rep;
    return kept;
}

void split_by_pipeline(const TrainingData &all, double validation_fraction, TrainingData &train,
                       TrainingData &validation) {
    train.pipelines.clear();
    validation.pipelines.clear();
    for (const TrainingPipeline &p : all.pipelines) {
        const bool held_out =
            validation_fraction > 0 && ds::split_part(p.id, {1 - validation_fraction, validation_fraction, 0}) == 1;
        (held_out ? validation : train).pipelines.push_back(p);
    }
}

void load_training_split(const std::vector<std::string> &paths, double validation_fraction, TrainingData &train,
                         TrainingData &validation, LoadReport *report) {
    const TrainingData all = load_training_data(paths, report);
    if (all.pipelines.empty()) throw UserError("no pipeline in the data has two ok schedules to compare");
    split_by_pipeline(all, validation_fraction, train, validation);
    if (train.pipelines.empty())
        throw UserError("every pipeline fell in the validation part; lower --validation-fraction");
}

} // namespace schedforge::trainer
