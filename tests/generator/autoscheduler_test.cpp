// Halide's own autoschedulers accept our pipelines: Adams2019 (greedy, HL_BEAM_SIZE=1) and
// Mullapudi2016 each schedule 20 random pipelines, and the scheduled pipelines compute the same
// output as Halide's default schedule.
#include "generator/build.h"
#include "generator/config.h"
#include "generator/synthesize.h"
#include "tests/generator/compare.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

namespace schedforge::gen {
namespace {

struct Plugin {
    const char *name;    // the autoscheduler's registered name
    const char *library; // file in Halide's plugin folder
};
const Plugin kPlugins[] = {{"Adams2019", "libautoschedule_adams2019.so"},
                           {"Mullapudi2016", "libautoschedule_mullapudi2016.so"}};
constexpr int kPipelinesPerPlugin = 20;

void load_once(const Plugin &plugin) {
    static std::set<std::string> loaded;
    if (loaded.insert(plugin.library).second)
        Halide::load_plugin(std::string(SCHEDFORGE_PLUGIN_DIR) + "/" + plugin.library);
}

class BuiltinAutoscheduler : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(BuiltinAutoscheduler, SchedulesAndMatchesDefaultSchedule) {
    const Plugin &plugin = kPlugins[std::get<0>(GetParam())];
    const uint64_t seed = uint64_t(std::get<1>(GetParam()));
    const GeneratorConfig cfg =
        load_generator_config(std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/generator/small.yaml");
    const PipelineSpec spec = synthesize_pipeline(cfg, seed);
    SCOPED_TRACE(spec.to_text());
    const Halide::Target target = Halide::get_jit_target_from_environment().with_feature(Halide::Target::StrictFloat);

    BuiltPipeline reference = build_pipeline(spec);
    const Halide::Buffer<> expected = reference.run(target);

    setenv("HL_BEAM_SIZE", "1", /*overwrite=*/1); // Adams2019 in greedy mode
    load_once(plugin);
    BuiltPipeline scheduled = build_pipeline(spec);
    // Fixed parameters, so the schedules (and this test) are the same on every machine.
    const Halide::MachineParams machine(/*parallelism=*/4, /*last_level_cache_size=*/16 * 1024 * 1024, /*balance=*/40);
    const Halide::AutoSchedulerResults result = scheduled.pipeline.auto_schedule(plugin.name, target, machine);
    EXPECT_FALSE(result.schedule_source.empty());
    const Halide::Buffer<> actual = scheduled.run(target);
    EXPECT_EQ(testing::compare_buffers(expected, actual), "");
}

INSTANTIATE_TEST_SUITE_P(Pipelines, BuiltinAutoscheduler,
                         ::testing::Combine(::testing::Range(0, 2), ::testing::Range(0, kPipelinesPerPlugin)),
                         [](const ::testing::TestParamInfo<std::tuple<int, int>> &info) {
                             return std::string(kPlugins[std::get<0>(info.param)].name) + "_seed" +
                                    std::to_string(std::get<1>(info.param));
                         });

} // namespace
} // namespace schedforge::gen
