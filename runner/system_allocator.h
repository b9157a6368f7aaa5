// The C library's allocator, for the code the runner times.
//
// The programs link jemalloc (CMakeLists.txt: the search and LLVM's compiles allocate small
// objects by the million and run faster on it), but a runtime label must be what a schedule costs
// in a user's program, whose halide_malloc calls the C library's malloc: glibc's, which hands
// large buffers fresh pages from mmap (page faults and all: heap_realizations prices them). So the
// runner gives every pipeline it times these as its JIT malloc and free: they take memory from
// glibc's own malloc whatever allocator the process links (found in libc.so.6 itself, since some
// allocators replace even __libc_malloc), aligned as Halide's runtime aligns its own allocations.
#pragma once

#include <cstddef>
#include <string>

namespace Halide {
class Pipeline;
}

namespace schedforge::runner {

constexpr size_t kSystemAllocatorAlignment = 128;

// Like halide_malloc: `bytes` aligned to kSystemAllocatorAlignment, readable 8 bytes past either
// end; nullptr when there is no memory (Halide then reports out of memory).
void *system_malloc(size_t bytes);
void system_free(void *p); // p from system_malloc, or nullptr

// Gives the calling thread glibc's main arena, as a program's main thread has it, so that each
// thread Halide's pool starts afterwards takes an arena of its own. Call it while the process has
// no other thread, before any pipeline runs. Without it, in a process forked from one that never
// called glibc's malloc (the runner's workers and timing rounds: the programs allocate with
// jemalloc), the calling thread and the pool's worker race for their first arena and in about
// half of such processes both take the main one, where tasks' buffers freed together pass the
// trim threshold and are faulted in again at every run: one held-out schedule ran 3.5 or 21 ms
// by that draw alone (2 threads, the Zen 5 VM that hands freed pages back).
void claim_main_arena();

// Makes `p`'s JIT runs allocate with system_malloc and system_free: whatever times or profiles a
// schedule's runs (the runner, the stage profile) must see the allocator a user's program has.
void use_system_allocator(Halide::Pipeline &p);

// The file of the library whose malloc this process calls ("libjemalloc.so.2", "libc.so.6"), and
// of the one system_malloc takes memory from: datasets record both (timing_protocol).
std::string process_allocator();
std::string system_allocator();

} // namespace schedforge::runner
