// Timed code allocates from glibc's heap even where the program links jemalloc
// (runner/system_allocator.h): the runner's JIT malloc takes its memory from glibc's arena, aligned
// as Halide's runtime aligns; and in a program built with jemalloc, plain malloc is jemalloc's.
#include "runner/system_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <malloc.h>

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
