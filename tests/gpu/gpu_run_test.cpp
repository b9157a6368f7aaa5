// GPU schedules run on an NVIDIA GPU and compute what the CPU computes: the sweep's random
// pipelines (searched and random GPU schedules, by the rules and in the GPU search's space) against
// their all-compute_root output on the CPU, and the apps (hand-written GPU schedules and the
// searched ones both ways) against their naive C++ references.
// Every test skips, saying why, where no CUDA device is present (runner/cuda_device.h).
#include "runner/cuda_device.h"
#include "runner/output_check.h"
#include "tests/gpu/gpu_cases.h"

#include <gtest/gtest.h>

#include <tuple>

namespace schedforge::testing {
namespace {

// The device's own target (runnable_here completes its capability); false without a device.
bool device_target(Halide::Target &target) {
    const runner::CudaDevice &d = runner::cuda_device();
    if (!d.present) return false;
    target = runner::runnable_here(runner::jit_target().with_feature(Halide::Target::CUDA));
    return true;
}

#define SKIP_WITHOUT_GPU(target)                                                                                       \
    if (!device_target(target)) GTEST_SKIP() << "no CUDA device: " << runner::cuda_device().absent_reason

// Floats that become integers may move by one: CUDA's float arithmetic is not the CPU's.
constexpr int64_t kIntegerTolerance = 1;

Halide::Buffer<> realize_on(Halide::Pipeline &pipeline, const Halide::Buffer<> &shape, const Halide::Target &target) {
    std::vector<int> extents;
    for (int d = 0; d < shape.dimensions(); d++) extents.push_back(shape.dim(d).extent());
    Halide::Buffer<> out(shape.type(), extents);
    pipeline.realize(out, target);
    EXPECT_EQ(out.copy_to_host(), 0) << "copying the output from the GPU failed";
    return out;
}

class GpuSweepRuns : public ::testing::TestWithParam<SweepCase> {};

TEST_P(GpuSweepRuns, MatchesTheCpu) {
    Halide::Target target;
    SKIP_WITHOUT_GPU(target);
    const auto [seed, how] = GetParam();
    const gen::PipelineSpec spec = small_random_pipeline(uint64_t(seed));
    SCOPED_TRACE(spec.to_text());
    gen::BuiltPipeline reference = gen::build_pipeline(spec);
    reference.schedule_compute_root();
    const Halide::Buffer<> expected = reference.run(runner::jit_target());
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    SCOPED_TRACE(schedule_for_gpu(built.pipeline, how, uint64_t(seed), target));
    const Halide::Buffer<> actual = realize_on(built.pipeline, expected, target);
    EXPECT_EQ(runner::compare_buffers(expected, actual, kIntegerTolerance), "");
}

INSTANTIATE_TEST_SUITE_P(Searched, GpuSweepRuns, sweep_cases(GpuSchedule::Searched), sweep_case_name);
INSTANTIATE_TEST_SUITE_P(RandomNests, GpuSweepRuns, sweep_cases(GpuSchedule::RandomNest), sweep_case_name);
INSTANTIATE_TEST_SUITE_P(GpuSearched, GpuSweepRuns, sweep_cases(GpuSchedule::GpuSearched), sweep_case_name);
INSTANTIATE_TEST_SUITE_P(GpuRandom, GpuSweepRuns, sweep_cases(GpuSchedule::GpuRandom), sweep_case_name);

class GpuAppRuns : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuAppRuns, ManualScheduleMatchesNaiveReference) {
    Halide::Target target;
    SKIP_WITHOUT_GPU(target);
    apps::BuiltApp built = apps::build_app(GetParam(), /*small=*/true);
    if (!built.app->has_gpu_schedule()) GTEST_SKIP() << GetParam() << " has no hand-written GPU schedule";
    apps::schedule_manual(built, target);
    const Halide::Buffer<> actual = realize_on(built.pipeline, built.output_buffer, target);
    EXPECT_EQ(runner::compare_buffers(built.app->reference(built.inputs), actual, kIntegerTolerance), "");
}

void searched_app_matches_naive_reference(const std::string &app, GpuSchedule how) {
    Halide::Target target;
    SKIP_WITHOUT_GPU(target);
    apps::BuiltApp built = apps::build_app(app, /*small=*/true);
    SCOPED_TRACE(schedule_for_gpu(built.pipeline, how, 0, target));
    const Halide::Buffer<> actual = realize_on(built.pipeline, built.output_buffer, target);
    EXPECT_EQ(runner::compare_buffers(built.app->reference(built.inputs), actual, kIntegerTolerance), "");
}

TEST_P(GpuAppRuns, SearchedScheduleMatchesNaiveReference) {
    searched_app_matches_naive_reference(GetParam(), GpuSchedule::Searched);
}

TEST_P(GpuAppRuns, GpuSearchScheduleMatchesNaiveReference) {
    searched_app_matches_naive_reference(GetParam(), GpuSchedule::GpuSearched);
}

INSTANTIATE_TEST_SUITE_P(Apps, GpuAppRuns, ::testing::ValuesIn(apps::app_names()),
                         [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

} // namespace
} // namespace schedforge::testing
