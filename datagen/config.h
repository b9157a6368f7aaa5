// DatasetConfig: one dataset-generation run (configs/datasets/*.yaml documents every key).
//
// Precedence: built-in defaults < the YAML file < generate-dataset's flags. The generator and
// search configs it names are read too, and the effective run (every resolved setting, with
// those files' texts) is what a dataset records in its `config` attribute and what --resume
// compares.
#pragma once

#include "generator/config.h"
#include "datagen/shard.h"
#include "runner/benchmark_runner.h"
#include "sampler/search_options.h"

#include <cstdint>
#include <string>
#include <vector>

namespace schedforge::datagen {

// How one kind of sample searches.
struct SampleSearch {
    int beam_size = 32;
    int passes = 5;
    double dropout = 1.0;
};

struct DatasetConfig {
    std::string generator_text, search_text; // the configs' YAML ("" = built-in defaults)
    gen::GeneratorConfig generator;
    sampler::SearchOptions search; // everything but beam, passes, dropout and seed
    int64_t pipelines = 4;
    int64_t schedules_per_pipeline = 32;
    uint64_t seed = 0;
    // The part of the run's pipelines this process generates (datagen/shard.h); set by
    // generate-dataset's --shard or a launcher, never by the file.
    Shard shard;
    // Sample 0 of each pipeline: plain beam search. Samples 1..: the paper's §5 sampling, a 50%
    // chance of rejecting each state considered.
    SampleSearch beam_sample{32, 5, 1.0};
    SampleSearch dropout_samples{1, 1, 0.5};
    runner::RunnerOptions runner;

    // Checks ranges; throws UserError naming `source` and the key.
    void validate(const std::string &source) const;
    // Every resolved setting as YAML, the pipeline count excepted (a resumed run may extend it);
    // a shard's file says which shard it is (`shard: K/N`), so that --resume continues only it.
    std::string effective_text() const;
};

// Reads a dataset config file. Paths of the generator and search configs inside it are relative
// to the file's folder. UserError for a missing file, malformed YAML, an unknown key or a bad value.
DatasetConfig load_dataset_config(const std::string &path);
DatasetConfig parse_dataset_config(const std::string &yaml_text, const std::string &source,
                                   const std::string &base_folder);

} // namespace schedforge::datagen
