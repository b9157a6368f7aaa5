// GPU schedules compile to PTX, on any machine (CUDA's code generator needs no device):
//   - every random pipeline of the sweep (SCHEDFORGE_SEED_SWEEP seeds) under the search's GPU
//     schedule, by the rules and by the GPU search, and every fourth under a random nest carried
//     onto the GPU and under a random schedule of the GPU search's space;
//   - every app under the search's GPU schedules, both ways (no app is refused), and the apps
//     with a hand-written GPU schedule under it.
// Running them is tests/gpu/gpu_run_test.cpp's (label gpu).
#include "common/errors.h"
#include "runner/cuda_device.h"
#include "tests/gpu/gpu_cases.h"

#include <gtest/gtest.h>

#include <tuple>

namespace schedforge::testing {
namespace {

class GpuSweep : public ::testing::TestWithParam<SweepCase> {};

TEST_P(GpuSweep, CompilesToPtx) {
    const auto [seed, how] = GetParam();
    const gen::PipelineSpec spec = small_random_pipeline(uint64_t(seed));
    SCOPED_TRACE(spec.to_text());
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    const Halide::Target target = compile_only_cuda_target();
    const std::string source = schedule_for_gpu(built.pipeline, how, uint64_t(seed), target);
    SCOPED_TRACE(source);
    EXPECT_NE(source.find(".gpu_blocks("), std::string::npos); // the output, at least, runs on the GPU
    EXPECT_NO_THROW(built.pipeline.compile_jit(target));
}

// Every seed under the searched schedule (what users get), every fourth under a random nest (a
// compile takes about a second: CI's budget).
INSTANTIATE_TEST_SUITE_P(Searched, GpuSweep, sweep_cases(GpuSchedule::Searched), sweep_case_name);
INSTANTIATE_TEST_SUITE_P(RandomNests, GpuSweep, sweep_cases(GpuSchedule::RandomNest, 4), sweep_case_name);
INSTANTIATE_TEST_SUITE_P(GpuSearched, GpuSweep, sweep_cases(GpuSchedule::GpuSearched), sweep_case_name);
INSTANTIATE_TEST_SUITE_P(GpuRandom, GpuSweep, sweep_cases(GpuSchedule::GpuRandom, 4), sweep_case_name);

class GpuApps : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuApps, SearchedScheduleCompilesToPtx) {
    apps::BuiltApp built = apps::build_app(GetParam(), /*small=*/false); // the search sees the benchmark size
    const Halide::Target target = compile_only_cuda_target();
    const std::string source = schedule_for_gpu(built.pipeline, GpuSchedule::Searched, 0, target);
    EXPECT_NE(source.find(".gpu_blocks("), std::string::npos) << source;
    EXPECT_NO_THROW(built.pipeline.compile_jit(target)) << source;
}

TEST_P(GpuApps, GpuSearchScheduleCompilesToPtx) {
    apps::BuiltApp built = apps::build_app(GetParam(), /*small=*/false);
    const Halide::Target target = compile_only_cuda_target();
    const std::string source = schedule_for_gpu(built.pipeline, GpuSchedule::GpuSearched, 0, target);
    EXPECT_NE(source.find(".gpu_blocks("), std::string::npos) << source;
    EXPECT_NO_THROW(built.pipeline.compile_jit(target)) << source;
}

TEST_P(GpuApps, ManualScheduleCompilesToPtx) {
    apps::BuiltApp built = apps::build_app(GetParam(), /*small=*/true);
    const Halide::Target target = compile_only_cuda_target();
    if (!built.app->has_gpu_schedule()) {
        // Said plainly, not scheduled for the CPU under a GPU target.
        try {
            apps::schedule_manual(built, target);
            ADD_FAILURE() << "a CPU schedule passed for a GPU one";
        } catch (const Halide::CompileError &e) {
            EXPECT_NE(std::string(e.what()).find("has no manual GPU schedule"), std::string::npos) << e.what();
        }
        return;
    }
    apps::schedule_manual(built, target);
    EXPECT_NO_THROW(built.pipeline.compile_jit(target));
}

TEST(GpuApps, SixHaveHandWrittenGpuSchedules) {
    int with = 0;
    for (const auto &app : apps::all_apps()) with += app->has_gpu_schedule();
    EXPECT_GE(with, 6);
}

// A CUDA target without a compute capability takes the device's; without a device it is refused,
// saying why. Targets that name one, and CPU targets, are left alone.
TEST(CudaTarget, CapabilityComesFromTheDeviceOrTheTarget) {
    const Halide::Target named("x86-64-linux-avx2-cuda-cuda_capability_75");
    EXPECT_EQ(runner::with_cuda_capability(named), named);
    const Halide::Target cpu("x86-64-linux-avx2");
    EXPECT_EQ(runner::with_cuda_capability(cpu), cpu);
    const Halide::Target bare("x86-64-linux-avx2-cuda");
    const runner::CudaDevice &device = runner::cuda_device();
    if (device.present) {
        const Halide::Target completed = runner::with_cuda_capability(bare);
        EXPECT_NE(completed, bare);
        EXPECT_TRUE(completed.has_feature(Halide::Target::CUDA));
    } else {
        EXPECT_FALSE(device.absent_reason.empty());
        try {
            runner::with_cuda_capability(bare);
            ADD_FAILURE() << "a CUDA target without a capability passed without a device";
        } catch (const UserError &e) {
            EXPECT_NE(std::string(e.what()).find("names no CUDA compute capability"), std::string::npos) << e.what();
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Apps, GpuApps, ::testing::ValuesIn(apps::app_names()),
                         [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

} // namespace
} // namespace schedforge::testing
