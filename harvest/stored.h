// A stored dataset's pipelines, built again: `dataset refeaturize` and `dataset retime`
// recompute what a file holds from the pipelines it names. A random pipeline is drawn again from
// its seed with the generator config the file records (and must come out as the stored spec
// text); an app is built by name.
#pragma once

#include "datasets/schema.h"
#include "generator/config.h"
#include "generator/spec.h"
#include "harvest/subject.h"

#include <optional>
#include <string>
#include <vector>

namespace schedforge::harvest {

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

// Stage names without the suffixes Halide adds to tell Funcs of one name apart (stable_name).
std::vector<std::string> stable_names(std::vector<std::string> names);

} // namespace schedforge::harvest
