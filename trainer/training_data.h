// Training data: the ok schedules of HDF5 datasets, grouped by pipeline, as the network takes
// them. Only schedules that ran correctly (status ok) train the model; a pipeline needs two of
// them to make a batch (the loss compares schedules of one pipeline).
#pragma once

#include "trainer/model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace schedforge::trainer {

struct TrainingPipeline {
    uint64_t id = 0;
    std::string source;                                // "FILE" it came from (the first, when several files hold it)
    PipelineInput input;                               // stage features, outputs, cores
    std::vector<std::vector<float>> schedule_features; // per schedule: [stage][kScheduleFeatures]
    std::vector<double> runtimes;                      // per schedule: minimum over its timings, seconds
    std::vector<double> timing_spread;                 // per schedule: std / mean of its timings
};

struct TrainingData {
    std::vector<TrainingPipeline> pipelines;
    size_t num_schedules() const;
};

struct LoadReport {
    size_t files = 0, pipelines = 0, schedules = 0;
    size_t skipped_schedules = 0;   // not ok, or timed under contention
    size_t contended_schedules = 0; // ok, but timed while other processes held the CPUs
    size_t skipped_pipelines = 0;   // fewer than two ok schedules
};

// Reads every ok schedule of `paths`, except those timed under contention (common/timing_note.h). Pipelines that appear
// in several files (same id) are merged. UserError for a missing or unreadable file, or features other than this
// build's.
TrainingData load_training_data(const std::vector<std::string> &paths, LoadReport *report = nullptr);

// Splits by pipeline id with the same hash as `dataset split`: a pipeline lands in validation
// when split_part() puts it in the validation part of {1 - fraction, fraction, 0}.
void split_by_pipeline(const TrainingData &all, double validation_fraction, TrainingData &train,
                       TrainingData &validation);

// load_training_data, then split_by_pipeline; UserError when no pipeline has two ok schedules or
// none is left to train on.
void load_training_split(const std::vector<std::string> &paths, double validation_fraction, TrainingData &train,
                         TrainingData &validation, LoadReport *report = nullptr);

// A stage belongs to an output when its Func is one; datasets record stage names ("f",
// "f.update(0)") with the output's stages first (the FunctionDAG lists Funcs consumers first,
// and generated pipelines have one output).
std::vector<float> output_stages_from_names(const std::vector<std::string> &stage_names);

} // namespace schedforge::trainer
