// Refeaturizing a dataset: the same pipelines, schedules and timings, with the features this
// build computes. Datasets of schema version 3 on store each schedule's LoopNest (nest_text), so
// a corpus survives a change of the featurizer: benchmarking again is what takes hours, and
// this takes seconds. Pipelines are drawn again from their seeds with the generator config the
// file records (and must come out as the stored spec text), or built as the named app.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace schedforge::datagen {

struct RefeaturizeReport {
    uint64_t pipelines = 0, schedules = 0;
    uint64_t refeaturized = 0;     // schedules whose features were computed from their nest
    uint64_t without_features = 0; // schedules that never had features (the search failed): kept as they are
};

// Writes `out` (which must not exist; via out.partial) from `input`; the file's `producer` says
// which build recomputed the features. UserError when the file cannot be refeaturized by this
// build: a schema version before 3, a schedule with features but no stored nest, a pipeline its
// generator no longer draws, a stored nest that is not a legal schedule of its pipeline, stage
// names that changed. `progress(done, total)` is called after each pipeline.
RefeaturizeReport refeaturize_dataset(const std::string &input, const std::string &out,
                                      const std::function<void(uint64_t, uint64_t)> &progress = {});

} // namespace schedforge::datagen
