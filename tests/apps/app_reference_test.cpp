// Every app computes what its naive C++ reference computes, on small inputs, under its manual
// schedule and under Halide's default schedule (all-compute_root where inlining everything is
// impractical). Float outputs within a relative 1e-4 (the
// schedules reorder nothing, but fast-math may fuse multiply-adds).
#include "apps/app.h"
#include "runner/host_target.h"
#include "runner/output_check.h"

#include <gtest/gtest.h>

#include <set>

namespace schedforge::apps {
namespace {

class AppReference : public ::testing::TestWithParam<std::string> {};

TEST_P(AppReference, ManualScheduleMatchesNaiveReference) {
    BuiltApp built = build_app(GetParam(), /*small=*/true);
    const Halide::Target target = runner::jit_target();
    built.app->schedule_manual(target);
    built.pipeline.realize(built.output_buffer, target);
    EXPECT_EQ(runner::compare_buffers(built.app->reference(built.inputs), built.output_buffer), "");
}

TEST_P(AppReference, DefaultScheduleMatchesNaiveReference) {
    BuiltApp built = build_app(GetParam(), /*small=*/true);
    if (!built.app->default_schedule_is_practical()) {
        // Inlining everything is impractical here: check the all-compute_root schedule instead.
        schedule_compute_root(built);
    }
    built.pipeline.realize(built.output_buffer, runner::jit_target());
    EXPECT_EQ(runner::compare_buffers(built.app->reference(built.inputs), built.output_buffer), "");
}

TEST(Apps, NamesAreUniqueAndFindable) {
    const std::vector<std::string> names = app_names();
    EXPECT_EQ(names.size(), std::set<std::string>(names.begin(), names.end()).size());
    for (const std::string &n : names) EXPECT_NE(make_app(n), nullptr) << n;
    EXPECT_EQ(make_app("no_such_app"), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Apps, AppReference, ::testing::ValuesIn(app_names()),
                         [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

} // namespace
} // namespace schedforge::apps
