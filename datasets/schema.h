// The dataset schema (datasets/SCHEMA.md describes the file layout for readers
// without our code). This header is the C++ side: the records a writer appends and a reader
// returns, the status and search-mode codes, and the file-level metadata. No HDF5 here.
//
// A dataset holds pipelines (a random program: spec text, stage names, per-stage pipeline
// features) and schedules (one sampled schedule of one pipeline: search parameters, outcome,
// schedule source, per-stage schedule features, every timing sample). Variable-length parts of a
// record live in shared arrays; a row holds [begin, end) offsets into them (CSR).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace schedforge::datasets {

// Bumped whenever a reader of the old layout would misread a new file. Version 2 added the
// `random` search mode; version 1 files are otherwise the same and are read as they are.
// Version 3 added each schedule's loop nest (`nest_begin`, `nest_end`); older files are read
// with empty nests.
constexpr int kSchemaVersion = 3;
constexpr int kOldestReadableSchemaVersion = 1;
inline bool readable_schema_version(int v) { return v >= kOldestReadableSchemaVersion && v <= kSchemaVersion; }

// How a sample ended. Stored as an HDF5 enum (uint8) with these names and values.
enum class Status : uint8_t {
    Ok = 0,
    CompileError = 1, // the search or Halide rejected the schedule, or compilation threw
    Crash = 2,        // the worker died (signal)
    Timeout = 3,      // compile or benchmark exceeded its limit
    Oom = 4,          // out of memory (allocation failure, memory limit, OOM killer)
    WrongOutput = 5,  // ran, but its output differs from the reference schedule's
    RuntimeError = 6, // the compiled pipeline reported an error while running
};
constexpr int kNumStatuses = 7;
const char *status_name(Status s); // "ok", "compile_error", ...

// How a schedule was found (the source paper's §5: one plain beam search, the rest sampled with
// random dropout; schedule-report's populations add random legal loop nests, not searched).
enum class SearchMode : uint8_t { Beam = 0, Dropout = 1, Random = 2 };
const char *search_mode_name(SearchMode m); // "beam", "dropout", "random"

// The current time as the `created` attribute spells it: ISO 8601, UTC ("2026-11-21T20:15:05Z").
std::string utc_timestamp();

// File attributes: what produced the data and how, so that files can be compared and merged.
struct FileInfo {
    int schema_version = kSchemaVersion;
    int pipeline_feature_version = 0;
    std::vector<std::string> pipeline_feature_names;
    int schedule_feature_version = 0;
    std::vector<std::string> schedule_feature_names;
    std::string producer;        // "schedforge 0.1.0"
    std::string producer_commit; // git commit of the producing build ("unknown" outside git)
    std::string halide_version;  // "14.0.0"
    std::string target;          // Halide target string the schedules were compiled for
    std::string hardware;        // hardware fingerprint, "key = value" lines
    std::string timing_protocol; // "key = value" lines
    std::string config;          // the whole run config, as YAML text
    std::string created;         // ISO 8601, UTC
};

// Whether two files' features were computed alike: both kinds' versions and names.
bool same_features(const FileInfo &a, const FileInfo &b);

struct PipelineRecord {
    uint64_t id = 0;   // hash of the spec text (generator's PipelineSpec::id)
    uint64_t seed = 0; // the generator seed that drew it
    uint32_t generator_version = 0;
    std::string spec;                // canonical spec text
    std::vector<std::string> stages; // stage names ("f", "f.update(0)"), the feature rows' order
    std::vector<float> features;     // stages x pipeline features, row-major
    // The reference schedule (every stage computed at root) that outputs are checked against.
    Status reference_status = Status::Ok;
    double reference_runtime = 0; // seconds, min over samples; NaN when not ok
};

struct ScheduleRecord {
    uint64_t pipeline_row = 0; // row of its pipeline in this file
    uint32_t sample = 0;       // index among its pipeline's samples (0: beam search, no dropout)
    uint64_t seed = 0;         // the search's dropout seed
    SearchMode mode = SearchMode::Beam;
    int32_t beam_size = 0, passes = 0;
    double dropout = 1; // probability of keeping each state considered
    Status status = Status::Ok;
    double predicted_cost = 0;                  // the search's cost for the schedule
    double runtime_min = 0, runtime_median = 0; // seconds; NaN when not ok
    double search_seconds = 0, compile_seconds = 0, benchmark_seconds = 0;
    int32_t threads = 0;         // Halide runtime threads while timing
    std::string source;          // the schedule as C++ source (empty if the search failed)
    std::string message;         // why it failed (empty when ok)
    std::string nest;            // the schedule as a LoopNest (featurize/loop_nest_text.h); empty if none
    std::vector<float> features; // stages x schedule features, row-major (empty if none)
    std::vector<double> timings; // every timing sample, seconds, in the order taken
};

} // namespace schedforge::datasets
