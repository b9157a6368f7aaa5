// Publishing a folder of finished datasets: what a reader of the corpus needs beside the files,
// and a check of a downloaded copy.
//
// `dataset publish DIR` (tools/dataset.cpp) runs these in order: prepare_for_publishing verifies
// every DIR/*.h5 (a file with a problem stops the publish, nothing written) and compacts each
// that carries dead space (a stopped run's flushes); the tool draws the runtime plots; then
// write_dataset_card writes DIR/README.md and DIR/read_dataset.py (an h5py example that loads
// features and runtimes), and write_manifest DIR/SHA256SUMS over every file of the folder
// (`sha256sum -c SHA256SUMS` checks it too). check_manifest is `dataset verify --manifest`.
#pragma once

#include "datasets/operations.h"
#include "datasets/schema.h"

#include <cstdint>
#include <string>
#include <vector>

namespace schedforge::datasets {

struct PublishedFile {
    std::string name; // file name inside the folder
    FileInfo info;
    DatasetSummary summary;
    uint64_t bytes_before = 0;               // before compaction (equal to summary.file_bytes when none was needed)
    std::vector<std::string> virtual_shards; // a virtual merge (virtual_merge.h): the files it maps
};

// The folder's datasets, verified and compacted, by name. UserError when the folder holds none,
// when one has problems (all of them named), or when a virtual merge maps a file outside the
// folder (the manifest would not cover it). Virtual merges are not compacted: they hold only
// their tables, and a compaction would copy their shards into them.
std::vector<PublishedFile> prepare_for_publishing(const std::string &dir);

// DIR/README.md (the card) and DIR/read_dataset.py. `plots`: image files in the folder that
// the card shows (e.g. the runtime distribution), with a caption each.
struct CardPlot {
    std::string file, caption;
};
void write_dataset_card(const std::string &dir, const std::vector<PublishedFile> &files,
                        const std::vector<CardPlot> &plots);

// The h5py example a publish writes beside the files.
const std::string &read_dataset_example();

// DIR/SHA256SUMS: one "DIGEST  NAME" line per regular file of the folder but itself, by name.
void write_manifest(const std::string &dir);

// A manifest checked against the files beside it: one line per problem (a file missing, changed,
// or present but not listed); each listed dataset also verified (verify.h) when its digest holds.
struct ManifestCheck {
    uint64_t files = 0;
    std::vector<std::string> problems;
    bool ok() const { return problems.empty(); }
};
// UserError when the manifest cannot be read or a line is malformed.
ManifestCheck check_manifest(const std::string &manifest_path);

} // namespace schedforge::datasets
