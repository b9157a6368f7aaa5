// Generator configs: the shipped files load, the defaults file matches the built-in defaults,
// and every kind of bad input is a UserError naming the file and the problem.
#include "common/errors.h"
#include "generator/config.h"

#include <gtest/gtest.h>

#include <fstream>

namespace schedforge::gen {
namespace {

const std::string kConfigs = std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/generator/";

// The message of the UserError that parsing `yaml` throws (fails the test if none is thrown).
std::string error_of(const std::string &yaml) {
    try {
        parse_generator_config(yaml, "test.yaml");
    } catch (const UserError &e) {
        return e.what();
    }
    ADD_FAILURE() << "no error for:\n" << yaml;
    return "";
}

TEST(GeneratorConfig, ShippedConfigsLoad) {
    for (const char *name : {"default.yaml", "small.yaml"}) {
        EXPECT_NO_THROW(load_generator_config(kConfigs + name)) << name;
    }
}

TEST(GeneratorConfig, DefaultFileMatchesBuiltInDefaults) {
    // configs/generator/default.yaml documents the built-in defaults; they must not drift apart.
    const GeneratorConfig file = load_generator_config(kConfigs + "default.yaml");
    const GeneratorConfig builtin;
    auto same = [](IntRange a, IntRange b) { return a.min == b.min && a.max == b.max; };
    EXPECT_TRUE(same(file.stages, builtin.stages));
    EXPECT_TRUE(same(file.expr_depth, builtin.expr_depth));
    EXPECT_TRUE(same(file.input_count, builtin.input_count));
    EXPECT_TRUE(same(file.width, builtin.width));
    EXPECT_TRUE(same(file.height, builtin.height));
    EXPECT_TRUE(same(file.channels, builtin.channels));
    EXPECT_TRUE(same(file.elements, builtin.elements));
    EXPECT_TRUE(same(file.batch, builtin.batch));
    EXPECT_TRUE(same(file.dnn_channels, builtin.dnn_channels));
    EXPECT_EQ(file.max_fan_in, builtin.max_fan_in);
    EXPECT_EQ(file.max_work, builtin.max_work);
    EXPECT_EQ(file.resample_factors, builtin.resample_factors);
    EXPECT_EQ(file.dnn_fraction, builtin.dnn_fraction);
    EXPECT_EQ(file.imaging.kind_weights, builtin.imaging.kind_weights);
    EXPECT_EQ(file.imaging.type_weights, builtin.imaging.type_weights);
    EXPECT_EQ(file.dnn.kind_weights, builtin.dnn.kind_weights);
    EXPECT_EQ(file.dnn.type_weights, builtin.dnn.type_weights);
}

TEST(GeneratorConfig, PartialFileKeepsOtherDefaults) {
    const GeneratorConfig c = parse_generator_config("stages: {min: 2, max: 3}\n", "t.yaml");
    EXPECT_EQ(c.stages.min, 2);
    EXPECT_EQ(c.max_fan_in, GeneratorConfig().max_fan_in);
}

TEST(GeneratorConfigErrors, UnknownTopLevelKeyIsNamed) {
    EXPECT_EQ(error_of("stagez: {min: 1, max: 2}\n"), "test.yaml: unknown key 'stagez'");
}

TEST(GeneratorConfigErrors, UnknownNestedKeyIsNamedWithItsPath) {
    EXPECT_EQ(error_of("input:\n  widht: {min: 1, max: 2}\n"), "test.yaml: unknown key 'input.widht'");
    EXPECT_EQ(error_of("stages: {min: 1, max: 2, mean: 3}\n"), "test.yaml: unknown key 'stages.mean'");
}

TEST(GeneratorConfigErrors, EmptyRange) {
    EXPECT_EQ(error_of("stages: {min: 5, max: 2}\n"), "test.yaml: 'stages' is empty: max 2 < min 5");
}

TEST(GeneratorConfigErrors, NegativeRange) {
    EXPECT_EQ(error_of("input:\n  width: {min: -4, max: 8}\n"),
              "test.yaml: 'input.width.min' is -4; it must be at least 1");
}

TEST(GeneratorConfigErrors, NegativeWeight) {
    EXPECT_EQ(error_of("imaging:\n  kinds: {conv: -1}\n"), "test.yaml: 'imaging.kinds.conv' must not be negative");
}

TEST(GeneratorConfigErrors, UnknownTypeName) {
    EXPECT_EQ(error_of("imaging:\n  types: {float64: 1}\n"), "test.yaml: unknown type name 'imaging.types.float64'");
}

TEST(GeneratorConfigErrors, UnknownKindName) {
    EXPECT_EQ(error_of("dnn:\n  kinds: {attention: 1}\n"), "test.yaml: unknown stage kind 'dnn.kinds.attention'");
}

TEST(GeneratorConfigErrors, NotANumber) {
    EXPECT_EQ(error_of("max_fan_in: lots\n"), "test.yaml: 'max_fan_in' must be an integer, got 'lots'");
}

TEST(GeneratorConfigErrors, AllWeightsZero) {
    EXPECT_EQ(
        error_of("dnn:\n  fraction: 0\nimaging:\n  kinds: {pointwise: 0, stencil: 0, conv: 0, channel_mix: 0, pool: 0,"
                 " activation: 0, pad: 0, upsample: 0, downsample: 0, matmul: 0, scan: 0, histogram: 0, lut: 0,"
                 " gather: 0, transpose: 0, concat: 0, slice: 0}\n"),
        "test.yaml: 'imaging.kinds' gives no stage kind a positive weight");
}

TEST(GeneratorConfigErrors, MalformedYamlNamesLine) {
    const std::string e = error_of("stages: {min: 1, max: 2\nwidth: 3\n");
    EXPECT_EQ(e.rfind("test.yaml: malformed YAML at line ", 0), 0u) << e;
}

TEST(GeneratorConfigErrors, WrongVersion) {
    EXPECT_EQ(error_of("version: 2\n"), "test.yaml: unsupported config version 2 (this build reads version 1)");
}

TEST(GeneratorConfigErrors, EmptyFile) {
    EXPECT_EQ(error_of(""), "test.yaml: the file is empty; expected a mapping of settings");
}

TEST(GeneratorConfigErrors, UnreadableFile) {
    try {
        load_generator_config("/nonexistent/config.yaml");
        FAIL() << "no error";
    } catch (const UserError &e) {
        EXPECT_EQ(std::string(e.what()),
                  "/nonexistent/config.yaml: cannot read config file (No such file or directory)");
    }
}

TEST(GeneratorConfigErrors, FolderInsteadOfFile) { EXPECT_THROW(load_generator_config("/tmp"), UserError); }

} // namespace
} // namespace schedforge::gen
