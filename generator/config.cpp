#include "config.h"

#include "common/errors.h"
#include "common/yaml_reader.h"

namespace schedforge::gen {

namespace {

void set_kind(FlavourMix &mix, StageKind k, double w) { mix.kind_weights[int(k)] = w; }
void set_type(FlavourMix &mix, ScalarType t, double w) { mix.type_weights[int(t)] = w; }

using yaml::fail;
using yaml::integer;
using yaml::MapReader;
using yaml::number;

void read_range(const YAML::Node &node, const std::string &key, const std::string &source, IntRange *out) {
    MapReader r(node, key, source);
    r.on("min", [&](const YAML::Node &n, const std::string &k) { out->min = integer(n, k, source); });
    r.on("max", [&](const YAML::Node &n, const std::string &k) { out->max = integer(n, k, source); });
    r.run();
}

void read_mix(const YAML::Node &node, const std::string &key, const std::string &source, FlavourMix *mix) {
    MapReader r(node, key, source);
    r.on("kinds", [&](const YAML::Node &kinds, const std::string &k) {
        if (!kinds.IsMap()) fail(source, "'" + k + "' must be a mapping of kind: weight");
        for (const auto &kv : kinds) {
            const std::string name = kv.first.as<std::string>();
            StageKind kind;
            if (!parse_kind_name(name, &kind) || !is_vocabulary_kind(kind)) {
                fail(source, "unknown stage kind '" + k + "." + name + "'");
            }
            mix->kind_weights[int(kind)] = number(kv.second, k + "." + name, source);
        }
    });
    r.on("types", [&](const YAML::Node &types, const std::string &k) {
        if (!types.IsMap()) fail(source, "'" + k + "' must be a mapping of type: weight");
        for (const auto &kv : types) {
            const std::string name = kv.first.as<std::string>();
            ScalarType t;
            if (!parse_type_name(name, &t)) fail(source, "unknown type name '" + k + "." + name + "'");
            mix->type_weights[int(t)] = number(kv.second, k + "." + name, source);
        }
    });
    r.run();
}

void check_range(const IntRange &r, int64_t lowest, const std::string &key, const std::string &source) {
    if (r.min < lowest) {
        fail(source,
             "'" + key + ".min' is " + std::to_string(r.min) + "; it must be at least " + std::to_string(lowest));
    }
    if (r.max < r.min) {
        fail(source, "'" + key + "' is empty: max " + std::to_string(r.max) + " < min " + std::to_string(r.min));
    }
}

void check_mix(const FlavourMix &mix, const std::string &key, const std::string &source) {
    double kinds = 0, types = 0;
    for (int i = 0; i < kNumStageKinds; i++) {
        if (mix.kind_weights[i] < 0) {
            fail(source, "'" + key + ".kinds." + kind_name(StageKind(i)) + "' must not be negative");
        }
        kinds += mix.kind_weights[i];
    }
    for (int i = 0; i < kNumScalarTypes; i++) {
        if (mix.type_weights[i] < 0) {
            fail(source, "'" + key + ".types." + type_name(ScalarType(i)) + "' must not be negative");
        }
        // Bool alone cannot make a pipeline: inputs and outputs need a numeric type.
        if (ScalarType(i) != ScalarType::Bool) types += mix.type_weights[i];
    }
    if (kinds <= 0) fail(source, "'" + key + ".kinds' gives no stage kind a positive weight");
    if (types <= 0) fail(source, "'" + key + ".types' gives no numeric type a positive weight");
}

} // namespace

GeneratorConfig::GeneratorConfig() {
    using K = StageKind;
    using T = ScalarType;
    // Imaging: stencils, resampling and pointwise math dominate; DNN kinds appear rarely.
    for (auto [k, w] : std::initializer_list<std::pair<K, double>>{{K::Pointwise, 4},
                                                                   {K::Stencil, 3},
                                                                   {K::Conv, 0.5},
                                                                   {K::ChannelMix, 0.5},
                                                                   {K::Pool, 0.5},
                                                                   {K::Activation, 0.5},
                                                                   {K::Pad, 0.5},
                                                                   {K::Upsample, 1},
                                                                   {K::Downsample, 1},
                                                                   {K::Matmul, 0.3},
                                                                   {K::Scan, 0.5},
                                                                   {K::Histogram, 0.5},
                                                                   {K::Lut, 0.7},
                                                                   {K::Gather, 0.7},
                                                                   {K::Transpose, 0.5},
                                                                   {K::Concat, 0.5},
                                                                   {K::Slice, 0.5}}) {
        set_kind(imaging, k, w);
    }
    for (auto [t, w] : std::initializer_list<std::pair<T, double>>{{T::Bool, 0.5},
                                                                   {T::UInt8, 3},
                                                                   {T::UInt16, 2},
                                                                   {T::UInt32, 0.5},
                                                                   {T::Int8, 0.5},
                                                                   {T::Int16, 1},
                                                                   {T::Int32, 1},
                                                                   {T::Float32, 3}}) {
        set_type(imaging, t, w);
    }
    // DNN: convolutions, channel mixing, pooling and activations dominate; float and int8.
    for (auto [k, w] : std::initializer_list<std::pair<K, double>>{{K::Pointwise, 2},
                                                                   {K::Stencil, 0.5},
                                                                   {K::Conv, 4},
                                                                   {K::ChannelMix, 2},
                                                                   {K::Pool, 1.5},
                                                                   {K::Activation, 3},
                                                                   {K::Pad, 0.5},
                                                                   {K::Upsample, 0.5},
                                                                   {K::Downsample, 0.5},
                                                                   {K::Matmul, 1},
                                                                   {K::Scan, 0.2},
                                                                   {K::Histogram, 0.2},
                                                                   {K::Lut, 0.3},
                                                                   {K::Gather, 0.3},
                                                                   {K::Transpose, 0.5},
                                                                   {K::Concat, 1},
                                                                   {K::Slice, 0.5}}) {
        set_kind(dnn, k, w);
    }
    for (auto [t, w] : std::initializer_list<std::pair<T, double>>{{T::Bool, 0.2},
                                                                   {T::UInt8, 1},
                                                                   {T::UInt16, 0.2},
                                                                   {T::UInt32, 0.2},
                                                                   {T::Int8, 1},
                                                                   {T::Int16, 0.3},
                                                                   {T::Int32, 0.5},
                                                                   {T::Float32, 5}}) {
        set_type(dnn, t, w);
    }
}

void validate(const GeneratorConfig &c) {
    const std::string &s = c.source;
    check_range(c.stages, 1, "stages", s);
    check_range(c.expr_depth, 0, "expr_depth", s);
    check_range(c.input_count, 1, "input.count", s);
    check_range(c.width, 1, "input.width", s);
    check_range(c.height, 1, "input.height", s);
    check_range(c.channels, 1, "input.channels", s);
    check_range(c.elements, 1, "elements", s);
    check_range(c.batch, 1, "dnn.batch", s);
    check_range(c.dnn_channels, 1, "dnn.channels", s);
    if (c.max_fan_in < 1) fail(s, "'max_fan_in' must be at least 1");
    if (c.max_work < 1) fail(s, "'max_work' must be at least 1");
    if (c.resample_factors.empty()) fail(s, "'resample_factors' must list at least one factor");
    for (int64_t f : c.resample_factors) {
        if (f < 2 || f > 16) fail(s, "'resample_factors' entries must be in [2, 16], got " + std::to_string(f));
    }
    if (!(c.dnn_fraction >= 0 && c.dnn_fraction <= 1)) fail(s, "'dnn.fraction' must be in [0, 1]");
    // A flavour that can never be drawn needs no valid mix.
    if (c.dnn_fraction < 1) check_mix(c.imaging, "imaging", s);
    if (c.dnn_fraction > 0) check_mix(c.dnn, "dnn", s);
    if (c.width.min * c.height.min > c.elements.max) {
        fail(s, "'input.width.min' x 'input.height.min' exceeds 'elements.max'");
    }
}

GeneratorConfig parse_generator_config(const std::string &yaml_text, const std::string &source) {
    GeneratorConfig c;
    c.source = source;
    const YAML::Node root = yaml::parse(yaml_text, source);
    try {
        MapReader top(root, "", source);
        top.on("version", [&](const YAML::Node &n, const std::string &k) {
            const int64_t v = integer(n, k, source);
            if (v != 1)
                fail(source, "unsupported config version " + std::to_string(v) + " (this build reads version 1)");
        });
        top.on("stages", [&](const YAML::Node &n, const std::string &k) { read_range(n, k, source, &c.stages); });
        top.on("max_fan_in", [&](const YAML::Node &n, const std::string &k) { c.max_fan_in = integer(n, k, source); });
        top.on("expr_depth",
               [&](const YAML::Node &n, const std::string &k) { read_range(n, k, source, &c.expr_depth); });
        top.on("input", [&](const YAML::Node &n, const std::string &k) {
            MapReader r(n, k, source);
            r.on("count",
                 [&](const YAML::Node &m, const std::string &mk) { read_range(m, mk, source, &c.input_count); });
            r.on("width", [&](const YAML::Node &m, const std::string &mk) { read_range(m, mk, source, &c.width); });
            r.on("height", [&](const YAML::Node &m, const std::string &mk) { read_range(m, mk, source, &c.height); });
            r.on("channels",
                 [&](const YAML::Node &m, const std::string &mk) { read_range(m, mk, source, &c.channels); });
            r.run();
        });
        top.on("elements", [&](const YAML::Node &n, const std::string &k) { read_range(n, k, source, &c.elements); });
        top.on("max_work", [&](const YAML::Node &n, const std::string &k) { c.max_work = integer(n, k, source); });
        top.on("resample_factors", [&](const YAML::Node &n, const std::string &k) {
            if (!n.IsSequence()) fail(source, "'" + k + "' must be a list of integers");
            c.resample_factors.clear();
            for (const auto &f : n) c.resample_factors.push_back(integer(f, k, source));
        });
        top.on("imaging", [&](const YAML::Node &n, const std::string &k) { read_mix(n, k, source, &c.imaging); });
        top.on("dnn", [&](const YAML::Node &n, const std::string &k) {
            // The DNN section holds the flavour's mix plus its own sizes.
            YAML::Node mix_only = YAML::Node(YAML::NodeType::Map);
            MapReader r(n, k, source);
            r.on("fraction",
                 [&](const YAML::Node &m, const std::string &mk) { c.dnn_fraction = number(m, mk, source); });
            r.on("batch", [&](const YAML::Node &m, const std::string &mk) { read_range(m, mk, source, &c.batch); });
            r.on("channels",
                 [&](const YAML::Node &m, const std::string &mk) { read_range(m, mk, source, &c.dnn_channels); });
            r.on("kinds", [&](const YAML::Node &m, const std::string &) { mix_only["kinds"] = m; });
            r.on("types", [&](const YAML::Node &m, const std::string &) { mix_only["types"] = m; });
            r.run();
            read_mix(mix_only, k, source, &c.dnn);
        });
        top.run();
    } catch (const YAML::Exception &e) {
        fail(source, std::string("invalid config: ") + e.what());
    }
    validate(c);
    return c;
}

GeneratorConfig load_generator_config(const std::string &path) {
    return parse_generator_config(yaml::read_file(path), path);
}

} // namespace schedforge::gen
