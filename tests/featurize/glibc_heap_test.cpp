// The heap model against glibc itself: each pattern of storage sites runs for real through the
// runner's allocator (glibc's malloc, as timed pipelines use it) in a fresh child process, and the
// pages it faults in during its fourth run must be those the model predicts.
#include "featurize/glibc_heap.h"
#include "runner/system_allocator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace schedforge::featurize {
namespace {

constexpr int64_t KB = 1000, MB = 1000 * 1000;

void run_for_real(const std::vector<HeapScope> &scopes, int s, int threads, bool on_main = true) {
    std::map<int, void *> live;
    for (const HeapScope::Event &e : scopes[size_t(s)].events) {
        switch (e.kind) {
        case HeapScope::Event::Allocate: {
            void *p = runner::system_malloc(size_t(e.bytes));
            if (!p) _exit(3);
            std::memset(p, 1, size_t(e.bytes)); // a buffer's producer writes all of it
            live[e.owner] = p;
            break;
        }
        case HeapScope::Event::Free:
            runner::system_free(live[e.owner]);
            live.erase(e.owner);
            break;
        case HeapScope::Event::Repeat: {
            // A parallel loop as the model shares it out: this thread's share first, then the
            // rest on another thread (two threads at most here).
            const bool shared = e.parallel && on_main && threads > 1;
            const auto shares = shares_of_threads(e.runs, shared ? threads : 1);
            auto run_share = [&](const std::vector<HeapScope::Run> &share, bool main) {
                for (const HeapScope::Run &r : share) {
                    for (int64_t i = 0; i < r.iterations; i++) run_for_real(scopes, r.scope, threads, main);
                }
            };
            run_share(shares[0], on_main);
            if (shared) {
                std::thread worker([&]() { run_share(shares[1], false); });
                worker.join();
            }
            break;
        }
        }
    }
}

long minor_faults() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

// Pages glibc faults in during the fourth run of scopes[0], in a child process (fresh thresholds),
// without transparent huge pages (which would fault 2 MiB at a time).
double measured_pages(const std::vector<HeapScope> &scopes, int threads) {
    int fds[2];
    if (pipe(fds) != 0) return -1;
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
        for (int r = 0; r < 3; r++) run_for_real(scopes, 0, threads);
        const long before = minor_faults();
        run_for_real(scopes, 0, threads);
        const long pages = minor_faults() - before;
        _exit(write(fds[1], &pages, sizeof pages) == sizeof pages ? 0 : 4);
    }
    close(fds[1]);
    long pages = -1;
    if (read(fds[0], &pages, sizeof pages) != sizeof pages) pages = -1;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? double(pages) : -1;
}

double modelled_pages(const std::vector<HeapScope> &scopes, int owners, int threads = 1) {
    double bytes = 0;
    for (double b : glibc_faults_per_run(scopes, owners, threads)) bytes += b;
    return bytes / 4096;
}

// A site holding `blocks` (owners 0, 1, ...; freed in reverse order) that runs `iterations` times a run.
std::vector<HeapScope> one_site(const std::vector<int64_t> &blocks, int64_t iterations) {
    std::vector<HeapScope> scopes(2);
    scopes[0].repeat(1, iterations);
    for (size_t i = 0; i < blocks.size(); i++) scopes[1].allocate(int(i), blocks[i]);
    for (size_t i = blocks.size(); i-- > 0;) scopes[1].free(int(i));
    return scopes;
}

void expect_model_follows_glibc(const std::vector<HeapScope> &scopes, int owners, double expected_pages,
                                int threads = 1) {
    const double model = modelled_pages(scopes, owners, threads), real = measured_pages(scopes, threads);
    ASSERT_GE(real, 0) << "the child process failed";
    // A few pages of the arena's own bookkeeping and of rounding either way.
    const double slack = 8 + 0.03 * expected_pages;
    EXPECT_NEAR(model, expected_pages, slack) << "the model moved from what glibc was measured to do";
    EXPECT_NEAR(real, model, slack + 8) << "glibc faults " << real << " pages a run, the model " << model;
}

// Five 100 KB blocks a site: past the initial trim threshold (128 KiB) at every iteration, which
// returns all but the pad; 16 iterations fault 500 KB less the pad each.
TEST(GlibcHeap, ASiteWhoseBlocksPassTheTrimThresholdFaultsAllButThePadAtEachIteration) {
    const auto scopes = one_site({100 * KB, 100 * KB, 100 * KB, 100 * KB, 100 * KB}, 16);
    expect_model_follows_glibc(scopes, 5, 16 * (500 * KB - 128 * 1024) / 4096.0);
}

// One 400 KB block: mapped in the first run, which raises the thresholds to 400 KB and 800 KB;
// from then on it lives in the arena and is never returned.
TEST(GlibcHeap, ASingleLargeBlockRaisesTheThresholdsAndStays) {
    expect_model_follows_glibc(one_site({400 * KB}, 16), 1, 0);
}

// Two 200 KB blocks: the thresholds rise to 200 KB and 400 KB, which the two and the pad pass;
// the trim returns whole pages above the pad: 65 a time.
TEST(GlibcHeap, TwoBlocksAndThePadPassTwiceTheLargest) {
    expect_model_follows_glibc(one_site({200 * KB, 200 * KB}, 16), 2, 16 * 65);
}

// 140 + 100 + 100 KB: the trim comes at the second block's free (threshold 2 x 140 KB), so the
// first two stay in the top and only the third block's pages past the pad fault in again.
TEST(GlibcHeap, ATrimHalfwayThroughTheFreesReturnsOnlyWhatLiesAbove) {
    const auto scopes = one_site({140 * KB, 100 * KB, 100 * KB}, 16);
    const double model = modelled_pages(scopes, 3);
    EXPECT_GT(model, 0);
    EXPECT_LT(model, 16 * 100 * KB / 4096.0);
    expect_model_follows_glibc(scopes, 3, model);
}

// Nested sites, as a tiled consumer with a producer per strip of tiles and two per tile: the
// tiles' blocks (2 x 1.5 MB) do not pass twice the largest (the strip's 2 MB) with the pad, so
// they stay between tiles; with the strip's block they do, so everything above the pad faults in
// again at each strip.
TEST(GlibcHeap, NestedSitesTrimWhereTheirSumPassesTwiceTheLargest) {
    std::vector<HeapScope> scopes(3);
    scopes[0].repeat(1, 4);
    scopes[1].allocate(0, 2 * MB);
    scopes[1].repeat(2, 8);
    scopes[1].free(0);
    scopes[2].allocate(1, 1500 * KB);
    scopes[2].allocate(2, 1500 * KB);
    scopes[2].free(2);
    scopes[2].free(1);
    const std::vector<double> faults = glibc_faults_per_run(scopes, 3);
    EXPECT_NEAR(faults[0], 4 * (2 * MB - 128 * 1024), 4 * 8192.0);
    EXPECT_NEAR(faults[1] + faults[2], 4 * 3 * MB, 4 * 8192.0);
    expect_model_follows_glibc(scopes, 3, modelled_pages(scopes, 3));
}

// A small block allocated after large ones and freed first waits in the thread's cache, in use
// as far as the arena knows: the large ones, freed, never join the top, so nothing is trimmed
// (the same five 100 KB blocks fault 1,440 pages a run without it).
TEST(GlibcHeap, ASmallBlockInTheThreadCachePinsTheTop) {
    auto scopes = one_site({100 * KB, 100 * KB, 100 * KB, 100 * KB, 100 * KB}, 16);
    auto &events = scopes[1].events;
    // After the five allocations, before their frees: allocated last, freed first.
    events.insert(events.begin() + 5, {HeapScope::Event::Allocate, 5, 64, {}, false});
    events.insert(events.begin() + 6, {HeapScope::Event::Free, 5, 0, {}, false});
    expect_model_follows_glibc(scopes, 6, 0);
}

// Past 32 MiB the thresholds no longer follow: such a block is mapped afresh at each iteration.
TEST(GlibcHeap, BlocksPastTheDynamicThresholdsLimitAreMappedEachTime) {
    expect_model_follows_glibc(one_site({40 * MB}, 3), 1, 3 * 40 * MB / 4096.0);
}

// A chain a -> b -> c -> d of 1 MB buffers at one site, each freed after its consumer: c takes
// a's hole and d the top b left, so the site peaks at two buffers; at the end of an iteration the
// two and the pad pass twice the largest, and 2 MB less the pad (456 pages) fault in again. A
// stack of the four freed together at the end would fault 4 MB less the pad.
TEST(GlibcHeap, EarlyFreesLeaveHolesThatLaterBuffersTake) {
    std::vector<HeapScope> scopes(2);
    scopes[0].repeat(1, 16);
    scopes[1].allocate(0, 1 * MB);
    scopes[1].allocate(1, 1 * MB);
    scopes[1].free(0);
    scopes[1].allocate(2, 1 * MB);
    scopes[1].free(1);
    scopes[1].allocate(3, 1 * MB);
    scopes[1].free(2);
    scopes[1].free(3);
    expect_model_follows_glibc(scopes, 4, 16 * 456);
    const auto stacked = one_site({1 * MB, 1 * MB, 1 * MB, 1 * MB}, 16);
    expect_model_follows_glibc(stacked, 4, 16 * 944);
}

// iir_blur's tasks (its four passes down and across one 1536 x 2560 channel, 15 MiB each, each
// freed after its consumer), three tasks in parallel. In the main arena the two passes left at
// the end and the pad pass twice the largest block, so each task's last two fault in again at the
// next (7,648 pages); a thread's arena grows without the pad and stays just below the threshold.
// On one thread all three tasks refault; on two, the one the main thread runs.
TEST(GlibcHeap, AThreadsArenaGrowsWithoutThePadAndMayNeverTrim) {
    const int64_t pass = 1536 * 2560 * 4;
    std::vector<HeapScope> scopes(2);
    scopes[0].repeat(1, 3, true);
    scopes[1].allocate(0, pass);
    scopes[1].allocate(1, pass);
    scopes[1].free(0);
    scopes[1].allocate(2, pass);
    scopes[1].free(1);
    scopes[1].allocate(3, pass);
    scopes[1].free(2);
    scopes[1].free(3);
    expect_model_follows_glibc(scopes, 4, 3 * 7648, 1);
    expect_model_follows_glibc(scopes, 4, 7648, 2);
}

// Five 100 KB blocks a task, 16 tasks on two threads: past the trim threshold in either arena
// (the pad is all a thread's arena keeps too), so every task faults its blocks in again, as on one.
TEST(GlibcHeap, BothThreadsArenasTrimPastTheThreshold) {
    auto scopes = one_site({100 * KB, 100 * KB, 100 * KB, 100 * KB, 100 * KB}, 16);
    scopes[0].events[0].parallel = true;
    const double one_thread = modelled_pages(scopes, 5, 1);
    EXPECT_NEAR(modelled_pages(scopes, 5, 2), one_thread, 0.05 * one_thread);
    expect_model_follows_glibc(scopes, 5, one_thread, 2);
}

// Tasks sized by their place (a transposed read's bounding box grows with the task index): four
// tasks of two blocks on two threads, the last task's second block four times the others. That
// block sets the process's thresholds (mmap 800 KB, trim 1.6 MB), so no task's frees pass them
// and nothing faults in again; at the first task's sizes every task trims all but the pad.
TEST(GlibcHeap, TheLargestTasksBlockSetsTheThresholdsForAll) {
    std::vector<HeapScope> scopes(3);
    for (int s = 1; s <= 2; s++) {
        scopes[size_t(s)].allocate(0, 200 * KB);
        scopes[size_t(s)].allocate(1, s == 1 ? 200 * KB : 800 * KB);
        scopes[size_t(s)].free(1);
        scopes[size_t(s)].free(0);
    }
    std::vector<HeapScope> alike = scopes;
    scopes[0].repeat({{1, 3, 1}, {2, 1, 1}}, true);
    alike[0].repeat(1, 4, true);
    expect_model_follows_glibc(scopes, 2, 0, 2);
    expect_model_follows_glibc(alike, 2, 4 * (400 * KB - 128 * 1024) / 4096.0, 2); // all but the pad, each task
}

// A parallel loop's runs cut among threads in task order; a row of several tasks goes whole to
// the thread whose share it ends nearest.
TEST(GlibcHeap, ThreadsTakeTheirSharesOfTheTasksInOrder) {
    // 2 + 3 rows of 4 + 2 = 16 tasks: the caller's 8 are the two single tasks and two rows.
    const auto shares = shares_of_threads({{1, 2, 1}, {2, 3, 4}, {3, 2, 1}}, 2);
    ASSERT_EQ(shares.size(), 2u);
    ASSERT_EQ(shares[0].size(), 2u);
    EXPECT_EQ(shares[0][0].scope, 1);
    EXPECT_EQ(shares[0][0].iterations, 2);
    EXPECT_EQ(shares[0][1].scope, 2);
    EXPECT_EQ(shares[0][1].iterations, 2);
    ASSERT_EQ(shares[1].size(), 2u);
    EXPECT_EQ(shares[1][0].scope, 2);
    EXPECT_EQ(shares[1][0].iterations, 1);
    EXPECT_EQ(shares[1][1].scope, 3);
    EXPECT_EQ(shares[1][1].iterations, 2);
    // Three threads: 5 for the caller (two tasks and a row, 6, the nearest), then rows and the rest.
    const auto three = shares_of_threads({{1, 2, 1}, {2, 3, 4}, {3, 2, 1}}, 3);
    int64_t tasks = 0;
    for (const auto &share : three) {
        for (const HeapScope::Run &r : share) tasks += r.iterations * r.tasks;
    }
    EXPECT_EQ(tasks, 16);
    EXPECT_EQ(three[0].back().scope, 2);
    EXPECT_EQ(three[0].back().iterations, 1);
}

} // namespace
} // namespace schedforge::featurize
