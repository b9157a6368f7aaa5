// The `app` Generator under Halide's own tooling: every app builds with GenGen under its manual
// schedule, a plugin can schedule an app instead, and CMake's ahead-of-time build of one app
// runs under RunGen.
#include "apps/app.h"
#include "tests/support/commands.h"

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;
using namespace schedforge::testing;

class AppGenerator : public ::testing::TestWithParam<std::string> {};

TEST_P(AppGenerator, BuildsWithItsManualSchedule) {
    const fs::path dir = scratch("app_gen_" + GetParam());
    fs::create_directories(dir);
    const Result r = run(app_generator(dir, "app=" + GetParam()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir / "app.a"));
    EXPECT_NE(read_file(dir / "app.h").find("int app("), std::string::npos);
    // The manual schedule is in force: every app's schedule has a parallel loop.
    EXPECT_NE(read_file(dir / "app.stmt").find("parallel"), std::string::npos);
    fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Apps, AppGenerator, ::testing::ValuesIn(schedforge::apps::app_names()),
                         [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

TEST(AppGeneratorPlugins, Adams2019SchedulesAnAppInsteadOfItsManualSchedule) {
    const fs::path dir = scratch("app_gen_adams");
    fs::create_directories(dir);
    const Result r =
        run("HL_BEAM_SIZE=1 " + app_generator(dir, "app=unsharp_mask auto_schedule=true", "static_library,h,schedule") +
            " -p " + SCHEDFORGE_PLUGIN_DIR + "/libautoschedule_adams2019.so -s Adams2019");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir / "app.a"));
    // The plugin writes the schedule it chose, naming the app's Funcs.
    EXPECT_NE(read_file(dir / "app.schedule.h").find("Func blur_y"), std::string::npos);
    fs::remove_all(dir);
}

TEST(AppGeneratorRunGen, BenchmarksTheAheadOfTimeBuild) {
    // app_camera_pipe_rungen: camera_pipe compiled by CMake with its manual schedule, with RunGen.
    const Result r = run(std::string(APP_RUNGEN) + " --estimate_all --benchmarks=all --benchmark_min_time=0");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE((r.out + r.err).find("Benchmark for app_camera_pipe"), std::string::npos) << r.out << r.err;
}

} // namespace
