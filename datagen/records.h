// What a worker sends back about a pipeline or a schedule, and how it becomes a dataset record.
// generate-dataset and schedule-report both run their searches in the runner's workers; these
// are the one encoding of their payloads (runner::PreparedJob::payload), in one place.
#pragma once

#include "datasets/schema.h"
#include "runner/benchmark_runner.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace schedforge::datasets {
class DatasetReader;
} // namespace schedforge::datasets

namespace schedforge::featurize {
class FunctionDAG;
struct StageFeatures;
} // namespace schedforge::featurize

namespace schedforge::datagen {

// What a worker sends back travels as one of the two records below, encoded and decoded only
// here. An encoding starts with its kind and version, so a parent that reads a payload of the
// other kind, of another build's version, or cut short, gets an error that names it; callers
// record it as the job's failure (status crash), never as an empty record.
inline constexpr uint8_t kPayloadVersion = 1;

// A pipeline's stage names and per-stage pipeline features (stages x features, row-major), in
// the FunctionDAG's order.
struct PipelinePayload {
    std::vector<std::string> stages;
    std::vector<float> features;
};
PipelinePayload pipeline_payload(const featurize::FunctionDAG &dag);

// Per-stage schedule features as datasets store them: the stages' rows, row-major.
std::vector<float> flattened(const std::vector<featurize::StageFeatures> &features);

// A schedule: its source, its LoopNest as text (featurize/loop_nest_text.h), the search's
// predicted cost, per-stage schedule features (row-major) and the manual model's term
// contributions, stages x terms row-major (empty where not computed).
struct SchedulePayload {
    std::string source, nest;
    double cost = 0;
    std::vector<float> features;
    std::vector<double> terms;
};

std::string encode(const PipelinePayload &p);
std::string encode(const SchedulePayload &p);
// "" when `bytes` hold a whole record of p's kind and this build's version (p then holds it);
// otherwise why not, and p is left as it was.
std::string decode(const std::string &bytes, PipelinePayload &p);
std::string decode(const std::string &bytes, SchedulePayload &p);
// The message of a job whose record did not decode (its status becomes crash).
inline std::string malformed_result(const std::string &why) { return "malformed result from worker: " + why; }

datasets::Status dataset_status(runner::JobStatus s);

// Fills s's times, thread count and timing samples from the job that ran it, and its runtime
// label (as the timing protocol defines it) and median if s.status is ok, else NaN. Set s.status
// first.
void record_times(const runner::JobResult &r, datasets::ScheduleRecord &s);

// What a file holds, by identity (what --resume need not run again).
struct HeldRecords {
    std::map<uint64_t, uint64_t> pipeline_rows;      // pipeline id -> row
    std::set<std::pair<uint64_t, uint32_t>> samples; // (pipeline id, sample)
};
HeldRecords held_records(const datasets::DatasetReader &reader);

} // namespace schedforge::datagen
