// Internal to datasets/: the schema as HDF5 objects (SCHEMA.md is the reader's view).
//
// Tables are 1-D datasets of compound rows; per-stage features are 2-D float32 arrays; texts are
// uint8 byte arrays (variable-length strings can be neither checksummed nor compressed); timing
// samples are a float64 array. Rows point into the arrays with [begin, end) offsets. Every
// dataset is chunked, unlimited along its first axis, and filtered shuffle + gzip + fletcher32.
#pragma once

#include "datasets/hdf5_handles.h"
#include "datasets/schema.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace schedforge::datasets::layout {

// Dataset paths.
inline constexpr const char *kPipelines = "pipelines";
inline constexpr const char *kPipelineFeatures = "pipeline_features";
inline constexpr const char *kPipelineText = "pipeline_text";
inline constexpr const char *kSchedules = "schedules";
inline constexpr const char *kScheduleFeatures = "schedule_features";
inline constexpr const char *kScheduleText = "schedule_text";
inline constexpr const char *kTimings = "timings";
// The attribute a virtual merge lists its shards in (virtual_merge.h).
inline constexpr const char *kVirtualSources = "virtual_sources";

// One row of /pipelines (memory layout; the file type is the same fields, packed).
struct PipelineRow {
    uint64_t id, seed;
    uint32_t generator_version, num_stages;
    uint64_t spec_begin, spec_end;         // bytes of /pipeline_text
    uint64_t stages_begin, stages_end;     // bytes of /pipeline_text: stage names, one a line
    uint64_t features_begin, features_end; // rows of /pipeline_features
    uint8_t reference_status;
    double reference_runtime;
};

// One row of /schedules.
struct ScheduleRow {
    uint64_t pipeline_row;
    uint32_t sample;
    uint64_t seed;
    uint8_t mode;
    int32_t beam_size, passes;
    double dropout;
    uint8_t status;
    double predicted_cost, runtime_min, runtime_median;
    double search_seconds, compile_seconds, benchmark_seconds;
    int32_t threads;
    uint64_t features_begin, features_end; // rows of /schedule_features
    uint64_t timings_begin, timings_end;   // entries of /timings
    uint64_t source_begin, source_end;     // bytes of /schedule_text
    uint64_t message_begin, message_end;   // bytes of /schedule_text
    uint64_t nest_begin, nest_end;         // bytes of /schedule_text (schema version 3 on; else 0, 0)
};

// The fields a row shares with its record (same name, same type), for copying either way.
// clang-format off
#define SCHEDFORGE_PIPELINE_SHARED_FIELDS(X) X(id) X(seed) X(generator_version) X(reference_runtime)
#define SCHEDFORGE_SCHEDULE_SHARED_FIELDS(X)                                                      \
    X(pipeline_row) X(sample) X(seed) X(beam_size) X(passes) X(dropout) X(predicted_cost)         \
    X(runtime_min) X(runtime_median) X(search_seconds) X(compile_seconds) X(benchmark_seconds)   \
    X(threads)
// clang-format on

// Compound types of the rows: `memory` for reading and writing, `file` packed (what is stored).
h5::Handle pipeline_row_type(bool packed);
// A file's schedule rows have the fields of its schema version: read older files with theirs.
h5::Handle schedule_row_type(bool packed, int schema_version = kSchemaVersion);

// Creates an empty, chunked, filtered dataset of `type` with `columns` (0: 1-D) per row.
h5::Handle create_array(hid_t file, const char *name, hid_t type, hsize_t columns, hsize_t chunk_rows);

// Opens a dataset file read-only (with the SWMR read flag, so files being written or left by a
// killed writer open too); UserError naming the path when it cannot.
h5::Handle open_for_reading(const std::string &path);
// Opens one of the datasets above; UserError when the file lacks it.
h5::Handle open_array(hid_t file, const std::string &path, const char *name);

// Number of rows (first extent) of an open dataset.
uint64_t rows(hid_t dataset);

// Appends `count` rows (each `columns` wide; 0: 1-D) to the end of `dataset`; returns the rows
// they now occupy, [begin, end).
std::pair<uint64_t, uint64_t> append(hid_t dataset, hid_t memory_type, const void *data, uint64_t count,
                                     hsize_t columns);
// Shrinks or grows the first extent to `count` rows.
void resize(hid_t dataset, uint64_t count, hsize_t columns);
// Reads rows [begin, end) into `out` (sized by the caller to (end - begin) * max(columns, 1)).
void read_rows(hid_t dataset, hid_t memory_type, uint64_t begin, uint64_t end, hsize_t columns, void *out);

// A whole table (kPipelines or kSchedules) as rows of `memory_type`; fields the file lacks (an
// older schema's) stay value-initialized.
template<typename Row>
std::vector<Row> read_table(hid_t file, const char *name, hid_t memory_type) {
    const h5::Handle d = h5::dataset(H5Dopen2(file, name, H5P_DEFAULT), name);
    std::vector<Row> table(rows(d.get()));
    read_rows(d.get(), memory_type, 0, table.size(), 0, table.data());
    return table;
}

// File attributes.
void write_attribute(hid_t object, const char *name, const std::string &value);
void write_attribute(hid_t object, const char *name, int64_t value);
void write_attribute(hid_t object, const char *name, const std::vector<std::string> &values);
bool has_attribute(hid_t object, const char *name);
std::string read_string_attribute(hid_t object, const char *name);
int64_t read_int_attribute(hid_t object, const char *name);
std::vector<std::string> read_strings_attribute(hid_t object, const char *name);

void write_file_info(hid_t file, const FileInfo &info);
FileInfo read_file_info(hid_t file); // throws h5::Error naming a missing attribute

} // namespace schedforge::datasets::layout
