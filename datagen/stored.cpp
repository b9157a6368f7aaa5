#include "datagen/stored.h"

#include "apps/app.h"
#include "common/build_info.h"
#include "common/errors.h"
#include "common/text.h"
#include "common/yaml_reader.h"
#include "datagen/records.h"
#include "featurize/function_dag.h"
#include "featurize/loop_nest_text.h"
#include "featurize/schedule_features.h"
#include "generator/synthesize.h"

#include <cstdlib>
#include <map>
#include <set>

namespace schedforge::datagen {

namespace {

constexpr const char *kAppPrefix = "app ";

// Stage names without the suffixes Halide adds to tell Funcs of one name apart (stable_name).
std::vector<std::string> stable_names(std::vector<std::string> names) {
    for (std::string &n : names) n = featurize::stable_name(n);
    return names;
}

} // namespace

std::optional<gen::GeneratorConfig> recorded_generator(const std::string &config_text, const std::string &path) {
    std::set<std::string> texts;
    try {
        for (const YAML::Node &document : YAML::LoadAll(config_text)) { // a merged file holds one per run
            if (document.IsMap() && document["generator_config"])
                texts.insert(document["generator_config"].as<std::string>());
        }
    } catch (const YAML::Exception &e) {
        throw UserError(path + ": its config attribute is not YAML (" + e.what() + ")");
    }
    if (texts.size() != 1) return std::nullopt;
    if (texts.begin()->empty()) return gen::GeneratorConfig();
    return gen::parse_generator_config(*texts.begin(), path + " (recorded generator config)");
}

StoredSubject stored_subject(const datasets::PipelineRecord &p, const std::optional<gen::GeneratorConfig> &generator,
                             const std::string &where) {
    StoredSubject s;
    if (p.spec.rfind(kAppPrefix, 0) == 0) {
        s.app = p.spec.substr(std::string(kAppPrefix).size());
        if (!apps::make_app(s.app)) throw UserError(where + ": unknown app '" + s.app + "'");
        return s;
    }
    if (!generator) throw UserError(where + ": the file records no single generator config to draw it with");
    if (p.generator_version != gen::kGeneratorVersion) {
        throw UserError(where + ": drawn by generator version " + std::to_string(p.generator_version) +
                        ", this build has version " + std::to_string(gen::kGeneratorVersion));
    }
    s.spec = gen::synthesize_pipeline(*generator, p.seed);
    if (s.spec.to_text() != p.spec) {
        throw UserError(where + ": seed " + std::to_string(p.seed) + " draws another pipeline in this build");
    }
    return s;
}

datasets::PipelineRecord with_current_features(const datasets::PipelineRecord &p, const featurize::FunctionDAG &dag,
                                               const std::string &where) {
    datasets::PipelineRecord fresh = p;
    fresh.stages.clear(), fresh.features.clear();
    PipelinePayload current = pipeline_payload(dag);
    fresh.stages = std::move(current.stages);
    fresh.features = std::move(current.features);
    if (stable_names(fresh.stages) != stable_names(p.stages)) {
        throw UserError(where + ": its stages are not those this build finds");
    }
    return fresh;
}

std::vector<float> stored_nest_features(const featurize::FunctionDAG &dag, const std::string &nest,
                                        const Halide::Target &target, const featurize::CacheSizes &caches,
                                        const std::string &where) {
    featurize::LoopNest parsed;
    try {
        parsed = featurize::parse_nest_text(dag, nest);
    } catch (const UserError &e) {
        throw UserError(where + ": " + e.what());
    }
    return flattened(featurize::compute_schedule_features(dag, parsed, target, caches));
}

featurize::CacheSizes recorded_cache_sizes(const std::string &hardware) {
    std::map<std::string, std::string> fields = common::key_value_lines(hardware);
    auto number = [&](const std::string &key) { return std::atof(fields[key].c_str()); };
    // The record has no L3 sharing: its physical cores, exact where one L3 serves the machine.
    featurize::CacheSizes sizes = featurize::machine_cache_sizes(number("cache_L2_Unified"), number("cache_L3_Unified"),
                                                                 number("physical_cores"));
    // The runner's timing threads: one a CPU the worker may use, all of the machine's.
    if (number("logical_cpus") >= 1) sizes.threads = int(number("logical_cpus"));
    return sizes;
}

namespace {
constexpr const char *kRecomputed = " (features recomputed by ";
}

std::string without_recompute_notes(std::string producer) {
    for (;;) {
        const size_t at = producer.rfind(kRecomputed);
        if (at == std::string::npos) return producer;
        // Only a note that closes the string, with no parenthesis of its own inside.
        const size_t close = producer.find_first_of("()", at + std::char_traits<char>::length(kRecomputed));
        if (close != producer.size() - 1 || producer[close] != ')') return producer;
        producer.erase(at);
    }
}

std::string recompute_note() {
    return kRecomputed + common::producer() + " " + common::producer_commit() + ", " + datasets::utc_timestamp() + ")";
}

} // namespace schedforge::datagen
