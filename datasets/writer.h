// DatasetWriter: appends pipelines and schedules to a dataset file, crash-safe.
//
// Files are written in HDF5's single-writer/multiple-reader (SWMR) mode: every record is
// flushed as it is appended, so a crash or kill -9 at any moment leaves a valid file holding
// every record appended before, and other processes can read the file while it grows (with
// HDF5's SWMR read flag; h5py: File(path, "r", swmr=True)). A record becomes visible in two
// steps: first its variable-length parts (texts, features, timings) are appended and flushed,
// then its row. Readers go by the rows, so a kill between the steps leaves only unreferenced
// bytes past the end, which reopen() trims.
//
// The price of a flush per record is space: each flush rewrites the compressed chunk being
// filled, and HDF5 does not reuse the space of the old copy under SWMR, so such a file takes
// about 50 times its content (30-60 KB a schedule). Whole-file copies (merge, split, compact,
// refeaturize) are written in bulk mode instead, behind a partial file that is renamed when
// complete: chunks are written once, at close, and the file is as small as its content.
#pragma once

#include "datasets/schema.h"

#include <memory>
#include <string>

namespace schedforge::datasets {

// A claim on a dataset file that excludes every other schedforge writer: an fcntl
// open-file-description lock, which HDF5's own flock() locks (dropped under SWMR) do not see.
// Forked children do not keep it: it ends with the process that took it.
class WriteLock {
public:
    explicit WriteLock(const std::string &path); // UserError if another process holds it
    ~WriteLock();
    WriteLock(const WriteLock &) = delete;
    WriteLock &operator=(const WriteLock &) = delete;

private:
    int fd_ = -1;
};

enum class WriteMode {
    Durable, // SWMR, every record flushed: readable while it grows, valid after a kill
    Bulk,    // written at close only: compact; for files written via a partial file
};

// Where records go as they are made: a dataset file (DatasetWriter), or whatever a caller hands
// the dataset engine (datagen::generate_into; tests keep them in memory).
class RecordSink {
public:
    virtual ~RecordSink() = default;
    // Appends a pipeline; returns its row, which its schedules' pipeline_row name.
    virtual uint64_t add_pipeline(const PipelineRecord &pipeline) = 0;
    // Appends a schedule of a pipeline already added.
    virtual void add_schedule(const ScheduleRecord &schedule) = 0;
};

class DatasetWriter : public RecordSink {
public:
    // Creates `path` (which must not exist: UserError) with the given attributes.
    static std::unique_ptr<DatasetWriter> create(const std::string &path, const FileInfo &info,
                                                 WriteMode mode = WriteMode::Durable);
    // Reopens a file for appending (e.g. after a kill): clears the flags a killed writer left,
    // trims bytes no row refers to, and returns to SWMR mode. UserError if the file cannot be
    // opened or is not a dataset of this schema version.
    static std::unique_ptr<DatasetWriter> reopen(const std::string &path);

    ~DatasetWriter() override; // closes (errors on close are lost: call close() to see them)

    // Appends a pipeline; returns its row. Its feature rows must be stages x the feature count.
    uint64_t add_pipeline(const PipelineRecord &pipeline) override;
    // Appends a schedule of an already added pipeline (row < num_pipelines()).
    void add_schedule(const ScheduleRecord &schedule) override;

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
