// The stage profile: Halide's profiler reports summed over runs, and a split that follows where
// the work is (a producer evaluating sin per point against a consumer adding three loads), and
// parallel loops run on the profiling thread alone (the profiler's attribution is exact only there),
// and runs allocate from glibc's heap, as the runner's timed runs do.
#include "runner/stage_profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <malloc.h>

#include <mutex>
#include <set>
#include <thread>

namespace schedforge::runner {
namespace {

std::mutex seen_mutex;
std::set<std::thread::id> threads_seen;

extern "C" int record_thread(int x) {
    std::lock_guard<std::mutex> lock(seen_mutex);
    threads_seen.insert(std::this_thread::get_id());
    return x;
}

TEST(StageProfile, ReportsAreSummedPerFuncWithoutTheRuntimesOwnEntries) {
    const std::string two_reports = "out\n"
                                    " total time: 2.000000 ms  samples: 2  runs: 1  time/run: 2.000000 ms\n"
                                    " average threads used: 1.500000\n"
                                    " heap allocations: 4  peak heap usage: 64 bytes\n"
                                    "  halide_malloc:         0.010ms   (0%)    threads: 0.000 \n"
                                    "  out:                   1.500ms   (75%)   threads: 2.000 \n"
                                    "  f$3:                   0.500ms   (25%)   threads: 1.000  peak: 64  num: 4\n"
                                    "out\n"
                                    " total time: 1.000000 ms  samples: 1  runs: 1  time/run: 1.000000 ms\n"
                                    "  out:                   1.000ms   (100%)  threads: 2.000 \n"
                                    "  f$3:                   0.000ms   (0%)    threads: 0.000 \n";
    StageProfile p;
    EXPECT_EQ(add_profiler_reports(two_reports, p), 2);
    ASSERT_EQ(p.sampled.size(), 2u) << "halide_malloc is the runtime's, not a Func";
    EXPECT_DOUBLE_EQ(p.sampled.at("out"), 2.5e-3);
    EXPECT_DOUBLE_EQ(p.sampled.at("f$3"), 0.5e-3);
    EXPECT_DOUBLE_EQ(p.sampled_total(), 3e-3);
}

TEST(StageProfile, TheExpensiveProducerTakesMostOfTheTime) {
    Halide::Func producer("producer"), consumer("consumer");
    Halide::Var x("x"), y("y");
    producer(x, y) = Halide::sin(Halide::cast<float>(x + y)) * Halide::cos(Halide::cast<float>(x - y));
    consumer(x, y) = producer(x, y) + producer(x + 1, y) + producer(x, y + 1);
    producer.compute_at(consumer, y).vectorize(x, 8);
    consumer.vectorize(x, 8);
    const StageProfile p = profile_stages(Halide::Pipeline(consumer), Halide::Buffer<float>(512, 256),
                                          Halide::get_jit_target_from_environment(), 0.5);
    EXPECT_GE(p.runs, 3);
    EXPECT_GT(p.seconds_per_run, 0);
    EXPECT_GT(p.unprofiled_seconds_per_run, 0) << "the same runs are timed without the profiler";
    ASSERT_GT(p.sampled_total(), 0) << "half a second of runs gets samples";
    ASSERT_TRUE(p.sampled.count("producer")) << "Funcs are reported by name";
    EXPECT_GT(p.sampled.at("producer") / p.sampled_total(), 0.6);
}

TEST(StageProfile, ParallelLoopsRunOnTheProfilingThread) {
    Halide::Func f("f");
    Halide::Var x("x"), y("y");
    f(x, y) = Halide::Internal::Call::make(Halide::Int(32), "record_thread", {x + y}, Halide::Internal::Call::Extern);
    f.parallel(y);
    Halide::Pipeline pipeline(f);
    pipeline.set_jit_externs({{"record_thread", Halide::JITExtern(record_thread)}});
    threads_seen.clear();
    const StageProfile p =
        profile_stages(pipeline, Halide::Buffer<int>(16, 256), Halide::get_jit_target_from_environment(), 0.1);
    EXPECT_GE(p.runs, 3);
    EXPECT_EQ(threads_seen, std::set<std::thread::id>{std::this_thread::get_id()})
        << "256 parallel tasks a run, all on the thread that profiles";
}

size_t glibc_in_use_max = 0;
extern "C" int record_glibc_in_use(int x) {
    glibc_in_use_max = std::max(glibc_in_use_max, size_t(mallinfo2().uordblks));
    return x;
}

// An intermediate of 32 KiB (over Halide's stack allocations, under glibc's mmap threshold) is
// counted in glibc's arena while its consumer runs: under the programs' jemalloc the profile
// would time pages another allocator hands out.
TEST(StageProfile, RunsAllocateFromGlibcsHeap) {
    Halide::Func g("g"), f("f");
    Halide::Var x("x");
    g(x) = x * 2;
    f(x) = Halide::Internal::Call::make(Halide::Int(32), "record_glibc_in_use", {g(x)}, Halide::Internal::Call::Extern);
    g.compute_root();
    Halide::Pipeline pipeline(f);
    pipeline.set_jit_externs({{"record_glibc_in_use", Halide::JITExtern(record_glibc_in_use)}});
    constexpr int kPoints = 8192;
    const size_t before = mallinfo2().uordblks;
    glibc_in_use_max = 0;
    profile_stages(pipeline, Halide::Buffer<int>(kPoints), Halide::get_jit_target_from_environment(), 0.05);
    EXPECT_GE(glibc_in_use_max, before + kPoints * sizeof(int)) << "g was not allocated from glibc's arena";
}

} // namespace
} // namespace schedforge::runner
