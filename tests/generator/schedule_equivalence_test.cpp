// Every random pipeline compiles and computes the same output under Halide's default schedule
// (all stages inlined) and under an all-compute_root schedule.
//
// The sweep has SCHEDFORGE_SEED_SWEEP seeds (100 in CI; configure with
// -DSCHEDFORGE_SEED_SWEEP=300, or run `tools/test --full`, for the full sweep). Pipelines
// come from configs/generator/small.yaml, small enough that the default schedule's recomputation
// stays cheap. Both runs use Halide's StrictFloat target feature: without it LLVM may reassociate
// and fuse float operations differently per schedule, and a float that later becomes an integer
// can then differ by one.
#include "generator/build.h"
#include "generator/config.h"
#include "generator/synthesize.h"
#include "runner/host_target.h"
#include "runner/output_check.h"

#include <gtest/gtest.h>

namespace schedforge::gen {
namespace {

class ScheduleEquivalence : public ::testing::TestWithParam<int> {};

TEST_P(ScheduleEquivalence, DefaultAndComputeRootAgree) {
    const GeneratorConfig cfg =
        load_generator_config(std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/generator/small.yaml");
    const PipelineSpec spec = synthesize_pipeline(cfg, uint64_t(GetParam()));
    SCOPED_TRACE(spec.to_text());
    const Halide::Target target = runner::jit_target().with_feature(Halide::Target::StrictFloat);

    BuiltPipeline inlined = build_pipeline(spec);
    const Halide::Buffer<> expected = inlined.run(target);

    BuiltPipeline rooted = build_pipeline(spec);
    rooted.schedule_compute_root();
    const Halide::Buffer<> actual = rooted.run(target);

    EXPECT_EQ(runner::compare_buffers(expected, actual), "");
}

INSTANTIATE_TEST_SUITE_P(Seeds, ScheduleEquivalence, ::testing::Range(0, SCHEDFORGE_SEED_SWEEP));

} // namespace
} // namespace schedforge::gen
