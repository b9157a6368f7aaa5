// The autoschedule CLI as a user runs it: an app scheduled and checked against compute_root, a
// random pipeline with a search config, one benchmarked with the runner, and bad input (exit 2, one line naming the
// problem).
#include "tests/support/commands.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

namespace {

using namespace schedforge::testing;

TEST(Autoschedule, SchedulesAnAppAndChecksItsOutput) {
    const Result r = run(autoschedule("--app blur3x3 --beam 4 --passes 2 --check"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(".compute_root();"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("predicted cost: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("pass 2: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("check: the output matches compute_root's"), std::string::npos) << r.out;
}

TEST(Autoschedule, RandomPipelineWithASearchConfigPrintsFeatures) {
    const fs::path dir = scratch("autoschedule_cfg");
    const std::string cfg = write_config(dir, "version: 1\nsearch:\n  beam_size: 2\n  passes: 1\n");
    const Result r =
        run(autoschedule("--pipeline 4 --config " + kSmallConfig + " --search-config " + cfg + " --features"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("points_computed_total = "), std::string::npos);
    EXPECT_NE(r.out.find("term.vector_compute = "), std::string::npos);
    EXPECT_EQ(r.out.find("pass 2: "), std::string::npos) << "the config asked for one pass";
    fs::remove_all(dir);
}

TEST(Autoschedule, WritesTheLoweredStatementOfTheSchedule) {
    const fs::path dir = scratch("autoschedule_stmt");
    const std::string stmt = (dir / "schedule.stmt").string();
    const Result missing = run(autoschedule("--pipeline 4 --config " + kSmallConfig + " --beam 2 --stmt " + stmt));
    EXPECT_EQ(missing.exit_code, 2) << "no such folder yet";
    EXPECT_NE(missing.err.find("schedule.stmt: cannot write"), std::string::npos) << missing.err;
    fs::create_directories(dir);
    const Result r = run(autoschedule("--pipeline 4 --config " + kSmallConfig + " --beam 2 --stmt " + stmt));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ifstream in(stmt);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("produce "), std::string::npos) << text.substr(0, 500);
    fs::remove_all(dir);
}

TEST(Autoschedule, BenchmarksTheScheduleAgainstComputeRoot) {
    const Result r = run(autoschedule("--pipeline 6 --config " + kSmallConfig + " --beam 2 --passes 1 --benchmark"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("benchmark compute_root: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("benchmark schedforge: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("ms min"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("speedup over compute_root: "), std::string::npos) << r.out;
}

TEST(Autoschedule, SplitsTheRunTimeAmongStages) {
    const Result r = run(autoschedule("--app blur3x3 --beam 2 --passes 1 --stage-times"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const size_t table = r.out.find("stage times on one thread (Halide's profiler: ");
    ASSERT_NE(table, std::string::npos) << r.out;
    for (const char *func : {"blur_x", "blur_y"}) EXPECT_NE(r.out.find(func, table), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("%", table), std::string::npos) << r.out;
}

// Dropout samples of dataset runs that failed before 2026-11-26: two crashed (corpus seed 2002):
// Halide 14 wrote past an allocation under nested guarded splits (featurize/apply.cpp,
// Directive::Rename), and loaded a vector misaligned from rows of 2 to 4 points
// (Node::storage_padding); one did not compile (calibration corpus, seed 2000): a read that the
// simplifier folds away had no edge, so its producer was placed where its reader cannot see it
// (FunctionDAG::build).
struct CorpusSample {
    const char *name, *pipeline, *seed;
};
const CorpusSample kCorpusCrashes[] = {
    {"NestedGuardedSplits", "16439713888959039089", "14461975541969064398"},
    {"NarrowRows", "10274893503965215169", "4905518332051685866"},
    {"ReadFoldedAway", "2333352632158397019", "12969168098632462701"},
};

class AutoscheduleCorpusCrashes : public ::testing::TestWithParam<CorpusSample> {};

TEST_P(AutoscheduleCorpusCrashes, NowRunAndMatchComputeRoot) {
    const Result r = run(autoschedule(std::string("--pipeline ") + GetParam().pipeline + " --config " +
                                      SCHEDFORGE_SOURCE_DIR + "/configs/generator/default.yaml --cores 2 --beam 1 " +
                                      "--passes 1 --dropout 0.5 --seed " + GetParam().seed + " --check"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("check: the output matches compute_root's"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Samples, AutoscheduleCorpusCrashes, ::testing::ValuesIn(kCorpusCrashes),
                         [](const auto &info) { return std::string(info.param.name); });

// Schedules of dataset runs that failed in 2026-11 (corpus train-3001, a bootstrap round), kept as
// LoopNest text so that later changes to the search cannot make these tests pass by no longer
// choosing them: one segfaulted (Halide 14 declared a dense load behind a strided one at a
// constant address aligned when it was not: featurize/codegen_guard.h), one computed nothing (an
// unrolled guarded vector wholly past its guard: LoopNestBounds::unrolls now declines to unroll
// it), one computed other values when vectorized (Halide 14 folded a saturating float-to-uint8
// cast and a uint8-to-int8 wrap into one undefined float-to-int8 cast: generator/build.cpp,
// convert).
struct CorpusNest {
    const char *name, *pipeline, *file;
};
const CorpusNest kCorpusNests[] = {
    {"ConstantStridedLoad", "760328982247304095", "train-3001-760328982247304095-7.nest"},
    {"VectorPastItsGuard", "15626688281249951677", "train-3001-15626688281249951677-13.nest"},
    {"SaturateThenWrapVectorized", "6312397245161005812", "bootstrap-5001-6312397245161005812-0.nest"},
};

class AutoscheduleCorpusNests : public ::testing::TestWithParam<CorpusNest> {};

TEST_P(AutoscheduleCorpusNests, RunAndMatchComputeRoot) {
    const std::string dir = std::string(SCHEDFORGE_SOURCE_DIR) + "/tests/sampler/nests/";
    const Result r =
        run(autoschedule(std::string("--pipeline ") + GetParam().pipeline + " --config " + SCHEDFORGE_SOURCE_DIR +
                         "/configs/generator/default.yaml --nest " + dir + GetParam().file + " --check"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("check: the output matches compute_root's"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Samples, AutoscheduleCorpusNests, ::testing::ValuesIn(kCorpusNests),
                         [](const auto &info) { return std::string(info.param.name); });

struct BadArgs {
    const char *name, *args, *message;
};
const BadArgs kBadArgs[] = {
    {"NegativeBeam", "--app blur3x3 --beam -1", "beam_size must be at least 1"},
    {"UnknownApp", "--app nosuchapp", "unknown app 'nosuchapp'"},
    {"NoPipeline", "--beam 2", "give --app NAME or --pipeline SEED"},
    {"BadDropout", "--app blur3x3 --dropout 0", "dropout"},
};

class AutoscheduleErrors : public ::testing::TestWithParam<BadArgs> {};

TEST_P(AutoscheduleErrors, ExitTwoWithOneLine) {
    const Result r = run(autoschedule(GetParam().args));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Args, AutoscheduleErrors, ::testing::ValuesIn(kBadArgs),
                         [](const auto &info) { return std::string(info.param.name); });

} // namespace
