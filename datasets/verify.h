// verify_dataset: everything a reader relies on, checked end to end (in a child process: a file
// damaged where HDF5 reads without checksums can crash the library, and that is reported too).
//
//   - attributes: schema version, feature versions and names equal to this build's;
//   - every byte of every dataset is read back, so gzip and fletcher32 catch corruption (each
//     unreadable block is reported with its row range, and the scan goes on);
//   - CSR consistency: every [begin, end) lies inside its array, ranges follow each other in row
//     order, feature rows per record equal the pipeline's stage count, schedule rows name an
//     existing pipeline, no (pipeline id, sample) pair appears twice;
//   - values: status and search-mode codes known, runtimes finite and equal to the min of the
//     timing samples exactly when the status is ok (NaN otherwise), features finite.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace schedforge::datasets {

struct VerifyReport {
    uint64_t pipelines = 0, schedules = 0;
    std::vector<std::string> problems; // one line each; empty: the file is sound
    bool ok() const { return problems.empty(); }
};

// UserError when the file cannot be opened as a dataset at all. A check that runs past
// `time_limit_seconds` (0: 60 s plus a second per 10 MB of file) is reported as a problem.
VerifyReport verify_dataset(const std::string &path, double time_limit_seconds = 0);

// The timing rounds a file's `timing_protocol` attribute names (1 where it names none).
int protocol_rounds(const std::string &timing_protocol);

} // namespace schedforge::datasets
