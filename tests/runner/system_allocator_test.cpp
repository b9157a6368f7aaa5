// Timed code allocates from glibc's heap even where the program links jemalloc
// (runner/system_allocator.h): the runner's JIT malloc takes its memory from glibc's arena, aligned
// as Halide's runtime aligns; and in a program built with jemalloc, plain malloc is jemalloc's.
#include "runner/round_process.h"
#include "runner/system_allocator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <string>
#include <thread>
#include <unistd.h>

namespace schedforge::runner {
namespace {

// Bytes glibc's arena has handed out (below its mmap threshold; jemalloc leaves it alone).
size_t glibc_bytes_in_use() { return mallinfo2().uordblks; }

TEST(SystemAllocator, AllocatesAlignedFromGlibcsHeap) {
    constexpr size_t kBytes = 20000; // below glibc's mmap threshold: counted in its arena
    const size_t before = glibc_bytes_in_use();
    void *p = system_malloc(kBytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kSystemAllocatorAlignment, 0u);
    std::memset(p, 0xab, kBytes + 8); // usable, with the slack Halide may read past the end
    EXPECT_GE(glibc_bytes_in_use(), before + kBytes);
    system_free(p);
    EXPECT_LT(glibc_bytes_in_use(), before + kBytes);
    system_free(nullptr); // like free(nullptr)
}

TEST(SystemAllocator, NoMemoryIsANullPointer) { EXPECT_EQ(system_malloc(SIZE_MAX - 4096), nullptr); }

// Whether a block lies in glibc's main arena, which grows the program break (the other arenas
// are mappings of their own, far above it).
bool in_main_arena(const void *p) {
    const char *brk = static_cast<const char *>(sbrk(0)), *q = static_cast<const char *>(p);
    return q < brk && brk - q < (std::ptrdiff_t(1) << 32);
}

// A timing round's process: forked from a thread that never called glibc's malloc, it claims the
// main arena, then it and a second thread (the pool's worker) take their first blocks at once.
// In every process each thread's block must come from an arena of its own, the caller's from the
// main one: without the claim, about half such processes put both in the main arena.
TEST(SystemAllocator, AClaimOfTheMainArenaLeavesTheWorkerAnArenaOfItsOwn) {
    constexpr int kProcesses = 24;
    std::string arenas;
    std::thread forker([&]() {
        for (int i = 0; i < kProcesses; i++) {
            const ChildOutcome c = run_in_child([]() {
                claim_main_arena();
                std::atomic<int> ready{0};
                auto meet = [&]() { // both threads allocate at once
                    ready++;
                    while (ready < 2) {
                    }
                };
                void *theirs = nullptr;
                std::thread worker([&]() {
                    meet();
                    theirs = system_malloc(100000); // below the mmap threshold: from an arena
                });
                meet();
                void *mine = system_malloc(100000);
                worker.join();
                std::string where = {in_main_arena(mine) ? 'M' : 'o', in_main_arena(theirs) ? 'M' : 'o'};
                system_free(mine);
                system_free(theirs);
                return where + " ";
            });
            arenas += c.returned ? c.bytes : std::string("failed ");
        }
    });
    forker.join();
    std::string expected;
    for (int i = 0; i < kProcesses; i++) expected += "Mo ";
    EXPECT_EQ(arenas, expected) << "caller / worker arena per process (M: main, o: another)";
}

#ifdef SCHEDFORGE_FAST_MALLOC
TEST(SystemAllocator, ThePrograms_MallocIsNotGlibcs) {
    const size_t before = glibc_bytes_in_use();
    void *volatile p = std::malloc(20000);
    ASSERT_NE(p, nullptr);
    EXPECT_LT(glibc_bytes_in_use(), before + 20000) << "jemalloc is linked but malloc is glibc's";
    std::free(p);
}
#endif

} // namespace
} // namespace schedforge::runner
