// Synthetic dataset records for the datasets tests: deterministic, with every field set.
#pragma once

#include "datasets/schema.h"
#include "featurize/pipeline_features.h"
#include "featurize/schedule_features.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace schedforge::testing {

// This build's feature versions and names (verify compares them), made-up everything else.
inline datasets::FileInfo test_file_info() {
    datasets::FileInfo info;
    info.pipeline_feature_version = featurize::PipelineFeatures::version();
    info.schedule_feature_version = featurize::ScheduleFeatures::version();
    info.pipeline_feature_names = featurize::PipelineFeatures::names();
    info.schedule_feature_names = featurize::ScheduleFeatures::names();
    info.producer = "schedforge test";
    info.producer_commit = "0123456789abcdef";
    info.halide_version = "14.0.0";
    info.target = "x86-64-linux";
    info.hardware = "cpu_model = test\nlogical_cpus = 2\n";
    info.timing_protocol = "min_samples = 5\n";
    info.config = "seed: 1\nnote: \"ünïcødé\"\n";
    info.created = "2026-11-21T00:00:00Z";
    return info;
}

constexpr size_t kPipelineColumns = featurize::PipelineFeatures::num_features();
constexpr size_t kScheduleColumns = featurize::ScheduleFeatures::num_features();

inline datasets::PipelineRecord test_pipeline(uint64_t id, size_t stages, size_t columns = kPipelineColumns) {
    datasets::PipelineRecord p;
    p.id = id;
    p.seed = id * 3 + 1;
    p.generator_version = 1;
    p.spec = "pipeline " + std::to_string(id) + "\nstage lines\n";
    for (size_t s = 0; s < stages; s++) p.stages.push_back("f" + std::to_string(s) + (s % 2 ? ".update(0)" : ""));
    for (size_t i = 0; i < stages * columns; i++) p.features.push_back(float(id) + 0.25f * float(i));
    p.reference_status = datasets::Status::Ok;
    p.reference_runtime = 1e-3 * double(id + 1);
    return p;
}

inline datasets::ScheduleRecord test_schedule(uint64_t pipeline_row, uint32_t sample, size_t stages,
                                              datasets::Status status = datasets::Status::Ok,
                                              size_t columns = kScheduleColumns) {
    datasets::ScheduleRecord s;
    s.pipeline_row = pipeline_row;
    s.sample = sample;
    s.seed = 1000 + sample;
    s.mode = sample ? datasets::SearchMode::Dropout : datasets::SearchMode::Beam;
    s.beam_size = sample ? 1 : 32;
    s.passes = sample ? 1 : 5;
    s.dropout = sample ? 0.5 : 1.0;
    s.status = status;
    s.predicted_cost = 100.0 + sample;
    s.search_seconds = 0.5;
    s.compile_seconds = 0.25;
    s.benchmark_seconds = 0.125;
    s.threads = 2;
    s.source = "f.compute_root(); // sample " + std::to_string(sample) + "\n";
    s.nest =
        "schedforge-loop-nest 1 nodes 1\nnode 0 f compute root store root stages 0 # " + std::to_string(sample) + "\n";
    for (size_t i = 0; i < stages * columns; i++) s.features.push_back(float(sample) - 0.5f * float(i));
    if (status == datasets::Status::Ok) {
        s.timings = {3e-3 + sample * 1e-4, 2e-3 + sample * 1e-4, 2.5e-3 + sample * 1e-4};
        s.runtime_min = 2e-3 + sample * 1e-4;
        s.runtime_median = 2.5e-3 + sample * 1e-4;
    } else {
        s.message = "killed by signal SIGSEGV";
        s.runtime_min = s.runtime_median = NAN;
    }
    return s;
}

} // namespace schedforge::testing
