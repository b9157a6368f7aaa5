// A stored dataset's pipelines, built again: `dataset refeaturize` and `dataset retime`
// recompute what a file holds from the pipelines it names. A random pipeline is drawn again from
// its seed with the generator config the file records (and must come out as the stored spec
// text); an app is built by name.
#pragma once

#include "datagen/subject.h"
#include "datasets/schema.h"
#include "featurize/schedule_features.h"
#include "generator/config.h"
#include "generator/spec.h"

#include <optional>
#include <string>
#include <vector>

namespace Halide {
struct Target;
}
namespace schedforge::featurize {
class FunctionDAG;
}

namespace schedforge::datagen {

// What to build for one pipeline record: an app (`app` set) or the random pipeline `spec`.
struct StoredSubject {
    std::string app;
    gen::PipelineSpec spec;
    BuiltSubject build() const { return build_subject(app, spec); }
};

// The generator config a file's pipelines were drawn with, from its `config` attribute (the
// built-in defaults where it records an empty one). None when the file records no such key
// (schedule-report files of apps need none) or several (a merge of runs with different
// generators). UserError naming `path` when the attribute is not YAML.
std::optional<gen::GeneratorConfig> recorded_generator(const std::string &config_text, const std::string &path);

// The subject of pipeline record `p`. UserError naming `where` for an unknown app, a file without
// one generator config, another generator version, or a seed this build draws differently.
StoredSubject stored_subject(const datasets::PipelineRecord &p, const std::optional<gen::GeneratorConfig> &generator,
                             const std::string &where);

// `p` with this build's stage names and pipeline features, from `dag` (its subject built again).
// UserError naming `where` when this build finds other stages.
datasets::PipelineRecord with_current_features(const datasets::PipelineRecord &p, const featurize::FunctionDAG &dag,
                                               const std::string &where);

// This build's schedule features of stored nest text for `target` and `caches`, as datasets store
// them (flattened). UserError naming `where` for a nest this build cannot read.
std::vector<float> stored_nest_features(const featurize::FunctionDAG &dag, const std::string &nest,
                                        const Halide::Target &target, const featurize::CacheSizes &caches,
                                        const std::string &where);

// The caches of the machine a file's hardware fingerprint ("key = value" lines) describes: its L2,
// and its L3 over its physical cores; the built-in sizes for what the record does not say.
featurize::CacheSizes recorded_cache_sizes(const std::string &hardware);

// A file's producer attribute without the notes of earlier feature recomputes at its end: a file
// whose features are recomputed again (refeaturize, retime) names only the latest.
std::string without_recompute_notes(std::string producer);
// The note refeaturize appends to the producer: " (features recomputed by BUILD COMMIT, TIME)".
std::string recompute_note();

} // namespace schedforge::datagen
