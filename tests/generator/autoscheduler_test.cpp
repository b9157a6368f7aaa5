// Halide's own autoschedulers accept our pipelines: Adams2019 (greedy, HL_BEAM_SIZE=1) and
// Mullapudi2016 each schedule 20 random pipelines, and the scheduled pipelines compute the same
// output as Halide's default schedule.
//
// Known upstream bug: Halide 14 sometimes computes wrong (even run-to-run varying) values for a
// schedule whose storage is hoisted above its compute level across a reduction loop (e.g.
// Adams2019 writes `boundary.compute_at(matmul, r_inner).store_at(matmul, r_outer)`; bisected by
// hand on two pipelines). Where a Func's storage is placed never changes what a Halide program computes, so
// when outputs differ the test re-runs the very same schedule with every storage level moved down
// to its compute level: if that matches the reference, the difference is Halide's, and the test
// says so instead of failing; if not, the test fails.
#include "generator/build.h"
#include "generator/config.h"
#include "generator/synthesize.h"
#include "runner/host_target.h"
#include "runner/output_check.h"

#include <gtest/gtest.h>

#include <cstdio>
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
    const Halide::Target target = runner::jit_target().with_feature(Halide::Target::StrictFloat);

    BuiltPipeline reference = build_pipeline(spec);
    const Halide::Buffer<> expected = reference.run(target);

    setenv("HL_BEAM_SIZE", "1", /*overwrite=*/1); // Adams2019 in greedy mode
    load_once(plugin);
    BuiltPipeline scheduled = build_pipeline(spec);
    // Fixed parameters, so the schedules (and this test) are the same on every machine.
    const Halide::MachineParams machine(/*parallelism=*/4, /*last_level_cache_size=*/16 * 1024 * 1024, /*balance=*/40);
    const Halide::AutoSchedulerResults result = scheduled.pipeline.auto_schedule(plugin.name, target, machine);
    EXPECT_FALSE(result.schedule_source.empty());
    const std::string difference = runner::compare_buffers(expected, scheduled.run(target));
    if (difference.empty()) return;

    BuiltPipeline unhoisted = build_pipeline(spec);
    unhoisted.pipeline.auto_schedule(plugin.name, target, machine);
    const Halide::Internal::Function out = unhoisted.output.function();
    for (auto &[name, f] : Halide::Internal::find_transitive_calls(out)) {
        Halide::Internal::FuncSchedule &s = f.schedule();
        s.store_level() = s.compute_level();
    }
    const std::string unhoisted_difference = runner::compare_buffers(expected, unhoisted.run(target));
    EXPECT_EQ(unhoisted_difference, "") << "the schedule's output differs (" << difference
                                        << ") even with storage at compute level:\n"
                                        << result.schedule_source;
    if (unhoisted_difference.empty()) {
        std::printf("KNOWN HALIDE 14 BUG: %s's schedule computes a different output (%s); the same schedule with "
                    "storage at compute level matches, so the difference comes from Halide's handling of hoisted "
                    "storage (a miscompile or a race). Schedule:\n%s\n",
                    plugin.name, difference.c_str(), result.schedule_source.c_str());
    }
}

INSTANTIATE_TEST_SUITE_P(Pipelines, BuiltinAutoscheduler,
                         ::testing::Combine(::testing::Range(0, 2), ::testing::Range(0, kPipelinesPerPlugin)),
                         [](const ::testing::TestParamInfo<std::tuple<int, int>> &info) {
                             return std::string(kPlugins[std::get<0>(info.param)].name) + "_seed" +
                                    std::to_string(std::get<1>(info.param));
                         });

} // namespace
} // namespace schedforge::gen
