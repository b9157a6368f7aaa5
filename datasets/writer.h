// DatasetWriter: appends pipelines and schedules to a dataset file, crash-safe.
//
// Files are written in HDF5's single-writer/multiple-reader (SWMR) mode: every record is
// flushed as it is appended, so a crash or kill -9 at any moment leaves a valid file holding
// every record appended before, and other processes can read the file while it grows (with
// HDF5's SWMR read flag; h5py: File(path, "r", swmr=True)). A record becomes visible in two
// steps: first its variable-length parts (texts, features, timings) are appended and flushed,
// then its row. Readers go by the rows, so a kill between the steps leaves only unreferenced
// bytes past the end, which reopen() trims.
#pragma once

#include "datasets/schema.h"

#include <memory>
#include <string>

namespace schedforge::datasets {

class DatasetWriter {
public:
    // Creates `path` (which must not exist: UserError) with the given attributes.
    static std::unique_ptr<DatasetWriter> create(const std::string &path, const FileInfo &info);
    // Reopens a file for appending (e.g. after a kill): clears the flags a killed writer left,
    // trims bytes no row refers to, and returns to SWMR mode. UserError if the file cannot be
    // opened or is not a dataset of this schema version.
    static std::unique_ptr<DatasetWriter> reopen(const std::string &path);

    ~DatasetWriter(); // closes (errors on close are lost: call close() to see them)

    // Appends a pipeline; returns its row. Its feature rows must be stages x the feature count.
    uint64_t add_pipeline(const PipelineRecord &pipeline);
    // Appends a schedule of an already added pipeline (row < num_pipelines()).
    void add_schedule(const ScheduleRecord &schedule);

    uint64_t num_pipelines() const;
    uint64_t num_schedules() const;
    const FileInfo &info() const;
    void close();

    struct Impl;

private:
    explicit DatasetWriter(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

} // namespace schedforge::datasets
