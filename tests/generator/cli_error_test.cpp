// The CLIs' handling of bad input: exit 2, one line on stderr naming the problem, nothing written.
#include "tests/support/commands.h"

#include <gtest/gtest.h>

namespace {

using namespace schedforge::testing;

// Bad input: exit 2, one line on stderr naming the problem, no output folder.
void expect_user_error(const std::string &args, const std::string &expected_fragment, const fs::path &out) {
    const Result r = run(gp(args));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(expected_fragment), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << "output written despite the error";
}

// A bad config file: its text, and the fragment the one-line message must contain.
struct BadConfig {
    const char *name, *yaml, *message;
};
const BadConfig kBadConfigs[] = {
    {"UnknownKey", "version: 1\ninput:\n  colour: 3\n", "unknown key 'input.colour'"},
    {"EmptyRange", "stages: {min: 9, max: 3}\n", "'stages' is empty"},
    {"NegativeRange", "input:\n  channels: {min: -1, max: 2}\n", "'input.channels.min' is -1"},
    {"UnknownTypeName", "dnn:\n  types: {bfloat16: 1}\n", "unknown type name 'dnn.types.bfloat16'"},
    {"MalformedYaml", "stages: [1, 2\n", "malformed YAML at line"},
};

class GeneratePipelinesBadConfig : public ::testing::TestWithParam<BadConfig> {};

TEST_P(GeneratePipelinesBadConfig, ExitsTwoWithOneLineAndWritesNothing) {
    const BadConfig &bad = GetParam();
    const fs::path cfgdir = scratch(std::string("cfg_") + bad.name), out = scratch(std::string("out_") + bad.name);
    const std::string cfg = write_config(cfgdir, bad.yaml);
    expect_user_error("--config " + cfg + " --out " + out.string(), bad.message, out);
    fs::remove_all(cfgdir);
}

INSTANTIATE_TEST_SUITE_P(Configs, GeneratePipelinesBadConfig, ::testing::ValuesIn(kBadConfigs),
                         [](const ::testing::TestParamInfo<BadConfig> &info) { return info.param.name; });

TEST(GeneratePipelinesErrors, UnreadableConfig) {
    const fs::path out = scratch("err_out6");
    expect_user_error("--config /nonexistent.yaml --out " + out.string(), "/nonexistent.yaml: cannot read config file",
                      out);
}

TEST(GeneratePipelinesErrors, BadFlags) {
    const fs::path out = scratch("err_out7");
    expect_user_error("--count 0 --out " + out.string(), "--count", out);
    expect_user_error("--count -3 --out " + out.string(), "--count", out);
    expect_user_error("--seed 1", "--out is required", out);
}

TEST(GeneratePipelinesErrors, UnwritableOutput) {
    const Result r = run(gp("--count 1 --out /proc/schedforge_cannot_write"));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("cannot create output folder"), std::string::npos) << r.err;
}

TEST(RandomPipelineGenerator, BadConfigExitsTwo) {
    const fs::path dir = scratch("gengen_bad");
    fs::create_directories(dir);
    const fs::path cfgdir = scratch("gengen_bad_cfg");
    const std::string cfg = write_config(cfgdir, "stages: {min: 1, max: 2, typo: 3}\n");
    const Result r = run(generator(dir, "seed=1 config=" + cfg));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("unknown key 'stages.typo'"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "random_pipeline.a"));
    fs::remove_all(dir);
    fs::remove_all(cfgdir);
}

TEST(CompareSchedulersErrors, UnknownSchedulerOrBaseline) {
    const fs::path out = scratch("cmp_err");
    for (const auto &[args, message] : std::vector<std::pair<std::string, std::string>>{
             {"--schedulers root,Adams2020", "unknown scheduler 'Adams2020'"},
             {"--schedulers root --baseline Li2018", "--baseline 'Li2018' is not one of --schedulers"},
             {"--target not-a-target", "--target 'not-a-target' is not a Halide target"},
             {"--apps blur9x9", "unknown app 'blur9x9'"},
             {"--pipelines 0", "nothing to compare"},
             {"--pipelines -1", "--pipelines"},
             {"--rounds 0", "--rounds"}}) {
        const Result r = run(compare_schedulers(args + " --out " + out.string()));
        EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
        EXPECT_EQ(count_lines(r.err), 1) << r.err;
        EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(out));
    }
}

TEST(AppGeneratorErrors, UnknownAppExitsTwoNamingTheApps) {
    const fs::path dir = scratch("app_gen_bad");
    fs::create_directories(dir);
    const Result r = run(app_generator(dir, "app=no_such_app"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("unknown app 'no_such_app'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("harris"), std::string::npos) << r.err;
    EXPECT_TRUE(fs::is_empty(dir));
    fs::remove_all(dir);
}

TEST(FeaturizeReportErrors, BadExplain) {
    for (const char *bad : {"3", "a:1", "1:"}) {
        expect_user_error(run(std::string(FEATURIZE_REPORT) + " --explain " + bad),
                          "--explain: expected PIPELINE:NEST (two numbers)");
    }
}

} // namespace
