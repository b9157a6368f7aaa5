// generate_dataset: generate-dataset's engine (the source paper's §5, on one machine).
//
// For each pipeline index i of the run, the generator draws pipeline i from seed
// derive_seed(run seed, i); its samples are schedules searched with the manual cost model:
// sample 0 by plain beam search, samples 1.. by beam search with random dropout, each with seed
// derive_seed(pipeline seed, sample). Every pipeline also gets a reference job (every stage
// computed at root) whose output the samples' outputs are checked against.
//
// Jobs are described as data (datagen/jobs.h): the searches run in this process, on the
// benchmark runner's threads (one per core, each search single-threaded), and pooled worker
// processes compile and time what they found (one compiling per core), benchmarks one at a
// time with nothing compiling or searching beside them. A search's results (features, schedule
// source, predicted cost) are the job's payload before its worker starts, so a schedule that then
// crashes, hangs or exhausts memory is still recorded, with its status. Results are written in
// job order, each sample flushed as it is written (datasets/writer.h): a kill loses at most the
// samples in flight, and resume=true runs exactly the (pipeline, sample) pairs the file lacks.
//
// A sharded run (config.shard, datagen/shard.h) plans only its shard's pipelines, each with the
// index, seed and samples it has in the whole run.
//
// Everything but the measured times depends only on the config: the same config and seed give
// the same pipelines, schedules and features, whatever the worker or thread count.
#pragma once

#include "datagen/config.h"
#include "datagen/records.h"
#include "datasets/schema.h"
#include "datasets/writer.h"
#include "runner/benchmark_runner.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace schedforge::datagen {

struct GenerationStats {
    int64_t samples_planned = 0;                             // pipelines x schedules per pipeline
    int64_t samples_present = 0;                             // already in the file (resume)
    int64_t samples_written = 0;                             // by this run
    int64_t pipelines_written = 0;                           // by this run
    std::array<int64_t, datasets::kNumStatuses> by_status{}; // of the samples written
    // Time split. Search and compile are summed over workers (they overlap); benchmark and
    // write are serial; wall is the run's elapsed time.
    double search_seconds = 0, compile_seconds = 0, benchmark_seconds = 0, write_seconds = 0;
    double wall_seconds = 0;
    // Timing samples retaken because other processes held the CPUs, and runtimes (labels or
    // references) timed under contention all the same (runner/timing.h).
    int64_t retaken_timings = 0, contended_labels = 0;
    bool stopped = false; // `stop` turned true before every sample was written
};

// Called in the calling process once when the plan is made, then after each sample is written.
using GenerationProgress = std::function<void(const GenerationStats &)>;

// Runs a batch of jobs, as runner::run_jobs does (the default). Tests pass one that wraps it to
// make chosen jobs fail (tests/support/faults.h), so that no fault injection lives in the
// production config.
using JobRunner = std::function<std::vector<runner::JobResult>(
    const std::vector<runner::BenchmarkJob> &, const runner::RunnerOptions &,
    const std::function<void(size_t, runner::JobResult &)> &, const std::atomic<bool> *)>;

// Creates `out_path` (UserError if it exists) or, with `resume`, continues it (UserError if it
// is missing or was made with another config), and compacts it once it holds every sample
// (datasets::compact_dataset). Returns what it did. Runtime failures of single
// samples are recorded, never thrown.
GenerationStats generate_dataset(const DatasetConfig &config, const std::string &out_path, bool resume,
                                 const std::atomic<bool> *stop = nullptr, const GenerationProgress &on_sample = {},
                                 const JobRunner &run = runner::run_jobs);

// The engine without the file: plans the run's samples that `held` lacks (what a resumed file
// holds, records.h), runs their jobs with `run`, and hands the records to `sink` in order, each
// schedule's pipeline_row the row `sink` gave its pipeline (a pipeline in `held` keeps its row).
// generate_dataset is this with the dataset file as the sink.
GenerationStats generate_into(const DatasetConfig &config, datasets::RecordSink &sink, const HeldRecords &held,
                              const std::atomic<bool> *stop = nullptr, const GenerationProgress &on_sample = {},
                              const JobRunner &run = runner::run_jobs);

// The file attributes a run writes (versions, producer, hardware, protocol, config).
datasets::FileInfo dataset_file_info(const DatasetConfig &config);
// The same for any run of the runner's jobs whose effective config is `config_text`.
datasets::FileInfo run_file_info(const runner::RunnerOptions &runner, const std::string &config_text);

} // namespace schedforge::datagen
