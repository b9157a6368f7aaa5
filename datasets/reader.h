// DatasetReader: reads a dataset file (a finished one, or one a writer is still appending to).
//
// Opening reads the attributes and both tables; texts, features and timings are read per
// record on demand. Files are opened read-only with HDF5's SWMR read flag, so a file being
// written, or left behind by a killed writer, reads as the records completed so far.
#pragma once

#include "datasets/schema.h"

#include <memory>
#include <string>
#include <vector>

namespace schedforge::datasets {

class DatasetReader {
public:
    // UserError if the file is missing, not HDF5, not a dataset, or of another schema version.
    static std::unique_ptr<DatasetReader> open(const std::string &path);
    ~DatasetReader();

    const FileInfo &info() const;
    uint64_t num_pipelines() const;
    uint64_t num_schedules() const;

    // Whole records (texts, features, timings included). Rows must be in range.
    PipelineRecord pipeline(uint64_t row) const;
    ScheduleRecord schedule(uint64_t row) const;
    // Records without their variable-length parts (spec, stages, source, message, features,
    // timings empty): everything a summary needs, read without touching the large arrays.
    std::vector<PipelineRecord> pipeline_summaries() const;
    std::vector<ScheduleRecord> schedule_summaries() const;

    struct Impl;

private:
    explicit DatasetReader(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

} // namespace schedforge::datasets
