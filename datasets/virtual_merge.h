// Virtual merges: one dataset file that reads as the union of finished shards without copying
// their features (`dataset merge --virtual OUT IN...`).
//
// The merged file holds real tables (`/pipelines`, `/schedules`), whose CSR offsets and pipeline
// rows are rebased onto the concatenation of the shards' arrays, and HDF5 virtual datasets for
// the five arrays (`/pipeline_features`, `/pipeline_text`, `/schedule_features`,
// `/schedule_text`, `/timings`), each mapping the used part of every shard's array in order. So a
// reader of the schema (h5py, h5dump, DatasetReader) reads it as any dataset, with no schedforge
// code, and it costs the tables' bytes (about 250 a schedule) where a copy costs about 1.2 KB.
//
// HDF5 reads a virtual dataset's missing source as fill values, silently. So the file records its
// shards (attribute `virtual_sources`: one "SHA-256 bytes path" line each, the path relative to
// the merged file's folder, where HDF5 looks for it), DatasetReader refuses the file when a shard
// is missing or has another size, and `dataset verify` also compares digests.
#pragma once

#include "datasets/operations.h"

#include <cstdint>
#include <string>
#include <vector>

namespace schedforge::datasets {

struct VirtualSource {
    std::string path; // as recorded: relative to the merged file's folder
    uint64_t bytes = 0;
    std::string sha256;
};

// Writes the virtual merge `out` (which must not exist) of `inputs`: finished schema-version-3
// files that are not virtual merges themselves, under the checks of merge_datasets. A (pipeline
// id, sample) pair already taken from an earlier input is skipped, as there. UserError naming the
// first input it cannot take.
MergeReport merge_virtual(const std::vector<std::string> &inputs, const std::string &out, bool force);

// The shards a file at `path` maps (empty for an ordinary dataset). UserError if unreadable.
std::vector<VirtualSource> virtual_sources(const std::string &path);

// One line per shard of the virtual merge at `path` that is missing, has another size, or (with
// `digests`) other bytes than when it was merged.
std::vector<std::string> check_virtual_sources(const std::string &path, const std::vector<VirtualSource> &sources,
                                               bool digests);

} // namespace schedforge::datasets
