// GeneratorConfig: every knob of the random pipeline generator, one documented field each.
//
// Precedence: the built-in defaults below < a YAML file (configs/generator/*.yaml, same key
// names) < command-line flags. load_generator_config() rejects unknown keys, malformed YAML,
// empty or negative ranges and unknown type or kind names with a UserError naming the file
// and the key, so a typo never silently falls back to a default.
#pragma once

#include "spec.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace schedforge::gen {

struct IntRange {
    int64_t min, max; // both inclusive
};

// One flavour of pipeline (imaging or DNN): how often each stage kind and type is drawn.
struct FlavourMix {
    std::array<double, kNumStageKinds> kind_weights{}; // only vocabulary kinds may be > 0
    std::array<double, kNumScalarTypes> type_weights{};
};

struct GeneratorConfig {
    // Stages per pipeline (every Func but the input buffers, boundary wrappers included).
    IntRange stages{4, 12};
    // Most producers one stage may read (pointwise stages draw 1..this many).
    int64_t max_fan_in = 2;
    // Depth of pointwise expression trees.
    IntRange expr_depth{1, 3};
    // Image inputs of a pipeline and their extents (all inputs share width and height).
    IntRange input_count{1, 2};
    IntRange width{64, 512};
    IntRange height{64, 512};
    IntRange channels{1, 4};
    // Every stage's estimated element count stays within these bounds.
    IntRange elements{16, int64_t(1) << 22};
    // Cap on elements x reduction taps of one stage, so no random stage takes seconds to run.
    int64_t max_work = int64_t(1) << 26;
    // Integer factors drawn for up/downsampling (ratios between branches are built from them).
    std::vector<int64_t> resample_factors{2, 3};
    // Chance that a pipeline is DNN-flavoured: 4-D stages with a batch dimension.
    double dnn_fraction = 0.3;
    IntRange batch{1, 4};         // DNN batch size
    IntRange dnn_channels{4, 32}; // output channels of conv / channel_mix stages
    FlavourMix imaging;           // mix for imaging pipelines
    FlavourMix dnn;               // mix for DNN pipelines

    std::string source = "<built-in defaults>"; // where this config came from, for messages

    GeneratorConfig(); // the built-in defaults
};

// Parses YAML text; `source` names it in error messages. Throws UserError.
GeneratorConfig parse_generator_config(const std::string &yaml_text, const std::string &source);
// Reads and parses a file. Throws UserError (unreadable, malformed, invalid).
GeneratorConfig load_generator_config(const std::string &path);
// Checks invariants (ranges, weights); throws UserError naming the offending key.
void validate(const GeneratorConfig &config);

} // namespace schedforge::gen
