// HarvestConfig: one dataset-generation run (configs/datasets/*.yaml documents every key).
//
// Precedence: built-in defaults < the YAML file < generate-dataset's flags. The generator and
// search configs it names are read too, and the effective run (every resolved setting, with
// those files' texts) is what a dataset records in its `config` attribute and what --resume
// compares.
#pragma once

#include "generator/config.h"
#include "harvest/shard.h"
#include "sampler/benchmark_runner.h"
#include "sampler/search_options.h"

#include <cstdint>
#include <string>
#include <vector>

namespace schedforge::harvest {

// A sample made to fail on purpose (tests of the run's robustness).
// WrongOutput: the scheduled pipeline's output, changed (a schedule that computes the wrong thing).
enum class FaultKind { Crash, Hang, OutOfMemory, CompileError, WrongOutput };
struct Fault {
    int64_t pipeline = 0; // pipeline index in the run
    int64_t sample = 0;   // sample index within the pipeline
    FaultKind kind = FaultKind::Crash;
};

// How one kind of sample searches.
struct SampleSearch {
    int beam_size = 32;
    int passes = 5;
    double dropout = 1.0;
};

struct HarvestConfig {
    std::string generator_text, search_text; // the configs' YAML ("" = built-in defaults)
    gen::GeneratorConfig generator;
    sampler::SearchOptions search; // everything but beam, passes, dropout and seed
    int64_t pipelines = 4;
    int64_t schedules_per_pipeline = 32;
    uint64_t seed = 0;
    // The part of the run's pipelines this process generates (harvest/shard.h); set by
    // generate-dataset's --shard or a launcher, never by the file.
    Shard shard;
    // Sample 0 of each pipeline: plain beam search. Samples 1..: the paper's §5 sampling, a 50%
    // chance of rejecting each state considered.
    SampleSearch beam_sample{32, 5, 1.0};
    SampleSearch dropout_samples{1, 1, 0.5};
    sampler::RunnerOptions runner;
    std::vector<Fault> faults;

    // Checks ranges; throws UserError naming `source` and the key.
    void validate(const std::string &source) const;
    // Every resolved setting as YAML, the pipeline count excepted (a resumed run may extend it);
    // a shard's file says which shard it is (`shard: K/N`), so that --resume continues only it.
    std::string effective_text() const;
};

// Reads a dataset config file. Paths of the generator and search configs inside it are relative
// to the file's folder. UserError for a missing file, malformed YAML, an unknown key or a bad value.
HarvestConfig load_harvest_config(const std::string &path);
HarvestConfig parse_harvest_config(const std::string &yaml_text, const std::string &source,
                                   const std::string &base_folder);

} // namespace schedforge::harvest
