// Whole-file operations behind the `dataset` CLI: summary, merge, compact, split and export.
//
// Every operation that writes a dataset writes FILE.partial and renames it when complete, so a
// failure or kill leaves no half-made output under the final name.
#pragma once

#include "datasets/schema.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace schedforge::datasets {

class DatasetReader;

// Runs `write(path + ".partial")`, then renames the partial file to `path`; removes it on failure.
void write_via_partial(const std::string &path, const std::function<void(const std::string &)> &write);

struct DatasetSummary {
    uint64_t pipelines = 0, schedules = 0;
    std::array<uint64_t, kNumStatuses> by_status{};
    // Over ok samples: runtime_min's min, median and max (seconds).
    double runtime_min = 0, runtime_median = 0, runtime_max = 0;
    // Per pipeline with an ok sample 0 and an ok reference: geometric means of the reference
    // (compute_root) runtime over sample 0's (beam search), and of sample 0's over the fastest
    // sample's (what sampling found beyond beam search).
    double beam_speedup_over_root = 0, best_speedup_over_beam = 0;
    uint64_t pipelines_compared = 0;
    uint64_t file_bytes = 0;
};
DatasetSummary summarize(const DatasetReader &reader, const std::string &path);

// Merges datasets into `out` (which must not exist). They must agree on feature versions and
// names, Halide version, target and hardware (UserError naming the first mismatch) unless
// `force`. A (pipeline id, sample) pair already taken from an earlier input is skipped.
struct MergeReport {
    uint64_t pipelines = 0, schedules = 0, duplicates_skipped = 0;
};
MergeReport merge_datasets(const std::vector<std::string> &inputs, const std::string &out, bool force);
// The attributes of a merge of `readers` (opened from `inputs`): the first's, created now, with
// every distinct config; the checks above (UserError).
FileInfo merged_file_info(const std::vector<std::unique_ptr<DatasetReader>> &readers,
                          const std::vector<std::string> &inputs, bool force);

// Rewrites a file in place with the same attributes and records, in bulk (writer.h: a file
// written record by record under SWMR takes ~50 times its content). The original stays until
// the copy is complete. UserError if another process is writing it.
struct CompactReport {
    uint64_t pipelines = 0, schedules = 0, bytes_before = 0, bytes_after = 0;
};
CompactReport compact_dataset(const std::string &path);

// Splits by pipeline: a pipeline goes to train, validation or test by a hash of its id (so the
// split is deterministic and every schedule of a pipeline lands in the same part), in the given
// fractions. Writes DIR/train.h5, DIR/validation.h5, DIR/test.h5 (which must not exist).
struct SplitReport {
    std::array<uint64_t, 3> pipelines{}, schedules{};
};
SplitReport split_dataset(const std::string &input, const std::string &out_dir, const std::array<double, 3> &fractions);
// Which part (0 train, 1 validation, 2 test) a pipeline id falls in.
int split_part(uint64_t pipeline_id, const std::array<double, 3> &fractions);

// Exports for quick looks: "csv" writes DIR/pipelines.csv and DIR/schedules.csv (one row per
// record, no features); "npy" writes NumPy arrays: pipeline_features, schedule_features,
// schedule_feature_offsets (CSR, schedules + 1), runtime_min, status, pipeline_row.
void export_dataset(const std::string &input, const std::string &out_dir, const std::string &format);

// NumPy .npy bytes of a row-major array (descr: '<f4', '<f8', '<u8' or '|u1').
std::string npy_bytes(const std::string &descr, const std::vector<uint64_t> &shape, const void *data, size_t bytes);

} // namespace schedforge::datasets
