// The SchedForge autoscheduler plugin, as Halide's tools and users load it:
//   - CMake compiled a random pipeline through the `random_pipeline` Generator with
//     `-p libautoschedule_schedforge.so -s SchedForge`: that library computes the reference output,
//     and the schedule source the plugin wrote compiles and reproduces the same output in JIT;
//   - loaded with Halide::load_plugin, it schedules random pipelines correctly and takes its
//     parameters from machine params and the environment, exactly as the search would;
//   - bad parameters fail with a message naming them, in-process and from the Generator, and the
//     Generator then writes nothing.
#include "featurize/apply.h"
#include "featurize/function_dag.h"
#include "generator/build.h"
#include "generator/config.h"
#include "generator/synthesize.h"
#include "runner/host_target.h"
#include "runner/output_check.h"
#include "sampler/beam_search.h"
#include "sampler/cost_model.h"
#include "sampler/machine_calibration.h"
#include "sampler/search_options.h"
#include "tests/support/commands.h"

#include "random_pipeline_schedforge.h"
#include "random_pipeline_schedforge.schedule.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>

namespace schedforge::sampler {
namespace {

using testing::kSmallConfig;
namespace fs = std::filesystem;

const Halide::Target kTarget = runner::jit_target().with_feature(Halide::Target::StrictFloat);

gen::PipelineSpec small_pipeline(uint64_t seed) {
    return gen::synthesize_pipeline(gen::load_generator_config(kSmallConfig), seed);
}

Halide::Buffer<> compute_root_output(const gen::PipelineSpec &spec) {
    gen::BuiltPipeline reference = gen::build_pipeline(spec);
    reference.schedule_compute_root();
    return reference.run(kTarget);
}

// Sets environment variables for one test and restores what was there.
class ScopedEnvironment {
public:
    ScopedEnvironment(std::map<std::string, std::string> values) {
        for (const auto &[name, value] : values) {
            const char *old = std::getenv(name.c_str());
            saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
            setenv(name.c_str(), value.c_str(), 1);
        }
    }
    ~ScopedEnvironment() {
        for (const auto &[name, old] : saved_)
            old ? (void)setenv(name.c_str(), old->c_str(), 1) : (void)unsetenv(name.c_str());
    }

private:
    std::map<std::string, std::optional<std::string>> saved_;
};

void load_schedforge_plugin() {
    static const bool loaded = (Halide::load_plugin(SCHEDFORGE_PLUGIN), true);
    (void)loaded;
}

const Halide::MachineParams kMachine(/*parallelism=*/4, /*last_level_cache_size=*/16 << 20, /*balance=*/40);

// ---- the library CMake built with the plugin ----

TEST(PluginBuiltLibrary, ComputesTheReferenceOutput) {
    const gen::PipelineSpec spec = small_pipeline(SCHEDFORGE_PLUGIN_TEST_SEED);
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    std::vector<int> extents = built.output_extents();
    Halide::Buffer<> output(gen::halide_type(spec.nodes[size_t(spec.output)].type), extents);
    std::vector<void *> args;
    for (Halide::Buffer<> &in : built.inputs) args.push_back(in.raw_buffer());
    args.push_back(output.raw_buffer());
    ASSERT_EQ(random_pipeline_schedforge_argv(args.data()), 0);
    output.copy_to_host();
    EXPECT_EQ(runner::compare_buffers(compute_root_output(spec), output), "");
}

TEST(PluginBuiltLibrary, ScheduleSourceReproducesTheSchedule) {
    // The .schedule.h the plugin wrote, compiled into this test, schedules a JIT build of the
    // same pipeline (its Funcs come in the same order as the Generator's).
    const gen::PipelineSpec spec = small_pipeline(SCHEDFORGE_PLUGIN_TEST_SEED);
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    apply_schedule_random_pipeline_schedforge(built.pipeline, kTarget);
    EXPECT_EQ(runner::compare_buffers(compute_root_output(spec), built.run(kTarget)), "");
}

// ---- loaded into this process ----

class PluginInProcess : public ::testing::TestWithParam<int> {};

TEST_P(PluginInProcess, SchedulesRandomPipelinesCorrectly) {
    const gen::PipelineSpec spec = small_pipeline(uint64_t(GetParam()));
    SCOPED_TRACE(spec.to_text());
    ScopedEnvironment env({{"SCHEDFORGE_BEAM_SIZE", "4"}, {"SCHEDFORGE_PASSES", "2"}});
    load_schedforge_plugin();
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    const Halide::AutoSchedulerResults r = built.pipeline.auto_schedule("SchedForge", kTarget, kMachine);
    EXPECT_EQ(r.scheduler_name, "SchedForge");
    EXPECT_EQ(r.machine_params_string, kMachine.to_string());
    EXPECT_NE(r.schedule_source.find("pipeline.get_func("), std::string::npos) << r.schedule_source;
    EXPECT_EQ(runner::compare_buffers(compute_root_output(spec), built.run(kTarget)), "") << r.schedule_source;
}

INSTANTIATE_TEST_SUITE_P(Seeds, PluginInProcess, ::testing::Range(100, 106));

TEST(PluginParameters, EnvironmentAndMachineParamsSteerTheSearch) {
    // The plugin's schedule is the one the search gives for the same options.
    const gen::PipelineSpec spec = small_pipeline(11);
    ScopedEnvironment env({{"SCHEDFORGE_BEAM_SIZE", "3"},
                           {"SCHEDFORGE_PASSES", "2"},
                           {"SCHEDFORGE_DROPOUT", "0.6"},
                           {"SCHEDFORGE_SEED", "9"},
                           {"SCHEDFORGE_THREADS", "1"}});
    // Over this machine's default: its kind's calibration where one is committed.
    SearchOptions o = default_search_options(common::host_kind());
    o.beam_size = 3;
    o.passes = 2;
    o.dropout = 0.6;
    o.seed = 9;
    o.threads = 1;
    o.cores = kMachine.parallelism;
    // Both on the same Funcs (a second build would get other Func names); the search leaves them unscheduled.
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    const featurize::FunctionDAG dag = featurize::FunctionDAG::build(built.pipeline);
    ManualCostModel model(o.coefficients);
    const std::string expected = featurize::schedule_source(dag, beam_search(dag, kTarget, model, o).nest);
    load_schedforge_plugin();
    EXPECT_EQ(built.pipeline.auto_schedule("SchedForge", kTarget, kMachine).schedule_source, expected);
}

TEST(PluginParameters, ConfigFileUnderEnvironmentVariables) {
    const fs::path dir = testing::scratch("plugin_config");
    const std::string path =
        testing::write_config(dir, "version: 1\nsearch:\n  beam_size: 5\n  passes: 3\npruning:\n  max_recompute: 4\n");
    ScopedEnvironment env({{"SCHEDFORGE_SEARCH_CONFIG", path}, {"SCHEDFORGE_PASSES", "2"}});
    const SearchOptions o = search_options_from_environment();
    EXPECT_EQ(o.beam_size, 5);
    EXPECT_EQ(o.passes, 2); // the variable wins over the file
    EXPECT_EQ(o.pruning.max_recompute, 4);
    fs::remove_all(dir);
}

// ---- bad parameters ----

struct BadParameter {
    const char *name;
    std::map<std::string, std::string> env;
    const char *config; // written to a file and named by SCHEDFORGE_SEARCH_CONFIG when set
    std::vector<std::string> message;
};

const BadParameter kBadParameters[] = {
    {"NegativeBeam",
     {{"SCHEDFORGE_BEAM_SIZE", "-1"}},
     nullptr,
     {"SCHEDFORGE_BEAM_SIZE", "beam_size must be at least 1"}},
    {"NotANumber", {{"SCHEDFORGE_PASSES", "many"}}, nullptr, {"SCHEDFORGE_PASSES", "must be an integer"}},
    {"DropoutOutOfRange", {{"SCHEDFORGE_DROPOUT", "1.5"}}, nullptr, {"SCHEDFORGE_DROPOUT", "dropout"}},
    {"MisspeltVariable", {{"SCHEDFORGE_BEAMSIZE", "8"}}, nullptr, {"unknown environment variable SCHEDFORGE_BEAMSIZE"}},
    {"MissingConfig",
     {{"SCHEDFORGE_SEARCH_CONFIG", "/nonexistent/search.yaml"}},
     nullptr,
     {"/nonexistent/search.yaml"}},
    {"UnknownConfigKey", {}, "version: 1\nsearch:\n  beam: 8\n", {"search.beam"}},
};

void PrintTo(const BadParameter &bad, std::ostream *os) { *os << bad.name; }

class PluginBadParameters : public ::testing::TestWithParam<BadParameter> {};

TEST_P(PluginBadParameters, FailWithAMessageNamingThem) {
    const BadParameter &bad = GetParam();
    const fs::path dir = testing::scratch(std::string("plugin_bad_") + bad.name);
    std::map<std::string, std::string> env = bad.env;
    if (bad.config) env["SCHEDFORGE_SEARCH_CONFIG"] = testing::write_config(dir, bad.config);
    auto expect_message = [&](const std::string &text) {
        for (const std::string &m : bad.message) EXPECT_NE(text.find(m), std::string::npos) << text;
    };
    {
        ScopedEnvironment scoped(env);
        load_schedforge_plugin();
        gen::BuiltPipeline built = gen::build_pipeline(small_pipeline(3));
        try {
            built.pipeline.auto_schedule("SchedForge", kTarget, kMachine);
            ADD_FAILURE() << "the plugin accepted bad parameters";
        } catch (const Halide::CompileError &e) {
            expect_message(e.what());
        }
    }
    // The Generator reports it and writes nothing.
    std::string prefix;
    for (const auto &[name, value] : env) prefix += name + "='" + value + "' ";
    const fs::path out = dir / "out";
    fs::create_directories(out);
    const testing::Result r = testing::run(prefix + testing::generator(out, "seed=3 config=" + kSmallConfig) + " -p " +
                                           SCHEDFORGE_PLUGIN + " -s SchedForge auto_schedule=true");
    EXPECT_NE(r.exit_code, 0);
    expect_message(r.err);
    EXPECT_TRUE(fs::is_empty(out));
    fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Cases, PluginBadParameters, ::testing::ValuesIn(kBadParameters),
                         [](const ::testing::TestParamInfo<BadParameter> &info) { return info.param.name; });

// A CUDA target gets a GPU schedule (sampler/gpu_schedule.h) that compiles to PTX; running it
// needs a GPU (tests/gpu/gpu_run_test.cpp).
TEST(PluginGpu, SchedulesForACudaTarget) {
    load_schedforge_plugin();
    gen::BuiltPipeline built = gen::build_pipeline(small_pipeline(3));
    const Halide::Target cuda =
        kTarget.with_feature(Halide::Target::CUDA).with_feature(Halide::Target::CUDACapability80);
    const Halide::AutoSchedulerResults results = built.pipeline.auto_schedule("SchedForge", cuda, kMachine);
    EXPECT_NE(results.schedule_source.find(".gpu_blocks("), std::string::npos) << results.schedule_source;
    EXPECT_NE(results.schedule_source.find(".gpu_threads("), std::string::npos) << results.schedule_source;
    EXPECT_NO_THROW(built.pipeline.compile_jit(cuda));
}

// The GPU search through the plugin's config variable: a GPU schedule that compiles to PTX.
TEST(PluginGpu, SchedulesWithTheGpuSearchFromItsConfig) {
    load_schedforge_plugin();
    ScopedEnvironment env(
        {{"SCHEDFORGE_SEARCH_CONFIG", std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/search/gpu-search.yaml"},
         {"SCHEDFORGE_BEAM_SIZE", "4"}});
    gen::BuiltPipeline built = gen::build_pipeline(small_pipeline(3));
    const Halide::Target cuda =
        kTarget.with_feature(Halide::Target::CUDA).with_feature(Halide::Target::CUDACapability80);
    const Halide::AutoSchedulerResults results = built.pipeline.auto_schedule("SchedForge", cuda, kMachine);
    EXPECT_NE(results.schedule_source.find(".gpu_blocks("), std::string::npos) << results.schedule_source;
    EXPECT_NO_THROW(built.pipeline.compile_jit(cuda));
}

TEST(PluginErrors, PipelineWithoutEstimates) {
    load_schedforge_plugin();
    Halide::Var x("x");
    Halide::Func f("f");
    f(x) = x * 2;
    Halide::Pipeline p(f);
    try {
        p.auto_schedule("SchedForge", kTarget, kMachine);
        ADD_FAILURE() << "scheduled a pipeline without estimates";
    } catch (const Halide::CompileError &e) {
        EXPECT_NE(std::string(e.what()).find("SchedForge"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("estimate"), std::string::npos) << e.what();
    }
}

} // namespace
} // namespace schedforge::sampler
