// A model of glibc's malloc (2.36, Debian 12) as a pipeline's buffers use it: which bytes each
// run faults in, once the process has run the pipeline a few times.
//
// Halide allocates a Func's buffer where its storage loop's body first needs it (producers before
// their consumers) and frees it right after its last use there, so a buffer freed early leaves a
// hole below those still in use, which a later one that fits takes (a chain of stages at one site
// ping-pongs between two holes). glibc then decides what page faults follow:
//   - where a block comes from: the smallest free chunk that holds it; else the arena's free top
//     when it holds it; else a fresh mmap when the block is at least the mmap threshold (faulted
//     in at every use); else the arena grows by the block and M_TOP_PAD (kTopPadBytes) beyond it;
//   - the thresholds: the mmap threshold starts at 128 KiB and rises to the size of each larger
//     mapped block freed (up to 32 MiB), the trim threshold to twice that: in a process that runs
//     the pipeline again and again they settle at the largest buffer;
//   - trimming: freeing a block whose chunk (merged with its free neighbours) is 64 KiB or more
//     checks the free top against the trim threshold and, past it, returns all of the top but the
//     pad to the system; the next block that reaches there faults its pages in again (each costs a
//     page zeroed, and where the machine hands freed pages back to its host, far more: calibrate
//     --page-fault-cost measure).
// So whether a site's buffers fault in at every iteration depends on their peak against the
// largest buffer anywhere, on the pad, and on what the sites around them left in the top; the
// simulation follows the arena iteration by iteration until an iteration leaves it as it found
// it (then every further iteration repeats it).
//
// A small block freed waits in the thread's cache (tcache: chunks for requests up to 1,032
// bytes, 7 of a size) for the next request of its size, in use as far as the arena knows: one
// allocated above large blocks keeps them, freed, from joining the top, and so from any trim.
//
// Threads: a parallel loop's iterations are shared out among `threads` threads, the calling one
// first (Halide's pool runs tasks on the thread that launched the loop too): it takes the first
// n / threads of them (rounded down) in the main arena, and each other thread a share of the rest
// in an arena of its own, grown without the pad (a thread arena's heap grows by what the block
// lacks), so a site whose blocks and pad just pass the trim threshold in the main arena may stay
// below it in a thread's (iir_blur's four 15 MiB passes, three tasks on two threads: 7,648
// pages a run refault in the main arena's one task and none in the worker's two). The thresholds
// are the process's, shared. A parallel loop inside a task runs on the task's thread.
//
// Tasks need not be alike: Halide sizes a task's buffers by that task's region (a tile at the
// image's edge, the bounding box of a direct and a transposed read, which grows with the task
// index), and the largest block anywhere sets the thresholds for all. So a loop's iterations
// come as runs of scopes in their order, and a thread's share is cut from that order (a run
// whose scope is a row of several tasks goes to one thread whole, cut at the nearest row).
#pragma once

#include <cstdint>
#include <vector>

namespace schedforge::featurize {

// One iteration of a loop body, as the heap sees it: blocks allocated and freed (at most one live
// block per owner within an iteration), and inner loops run.
struct HeapScope {
    // Consecutive iterations of an inner loop whose bodies are alike: `iterations` of scope
    // `scope` (an index into the scopes), each standing for `tasks` iterations of the loop (more
    // than one where the scope is itself a row of runs: a parallel loop fused from several).
    struct Run {
        int scope = 0;
        int64_t iterations = 0, tasks = 1;
    };
    struct Event {
        enum Kind { Allocate, Free, Repeat } kind;
        int owner = 0;         // Allocate, Free: who the faults are counted for (a Func's node)
        int64_t bytes = 0;     // Allocate: as the program asks for them
        std::vector<Run> runs; // Repeat: an inner loop, its iterations in order
        bool parallel = false; // Repeat: shared out among the threads
    };
    std::vector<Event> events;

    void allocate(int owner, int64_t bytes) { events.push_back({Event::Allocate, owner, bytes, {}, false}); }
    void free(int owner) { events.push_back({Event::Free, owner, 0, {}, false}); }
    void repeat(int scope, int64_t iterations, bool parallel = false) {
        repeat(std::vector<Run>{{scope, iterations, 1}}, parallel);
    }
    // A loop whose iterations differ (a parallel loop's tasks sized by their tiles): runs in order.
    void repeat(std::vector<Run> runs, bool parallel = false) {
        events.push_back({Event::Repeat, 0, 0, std::move(runs), parallel});
    }
};

// glibc's constants (malloc/malloc.c) and what the runner adds to each request
// (runner/system_allocator.h: 128 bytes of alignment and 8 of slack).
inline constexpr int64_t kTopPadBytes = 128 * 1024;
inline constexpr int64_t kInitialMmapThresholdBytes = 128 * 1024;
inline constexpr int64_t kMaxDynamicMmapThresholdBytes = 32 * 1024 * 1024;
inline constexpr int64_t kRequestOverheadBytes = 136;

// A parallel loop's tasks, `runs` in order, shared among `threads` threads: the calling one
// takes the first n / threads, the others the rest in order (the first ones one more); a share
// ends at the row nearest its count, and the last thread takes what is left.
std::vector<std::vector<HeapScope::Run>> shares_of_threads(const std::vector<HeapScope::Run> &runs, int threads);

// The bytes each owner (0 .. num_owners-1) faults in per run once runs repeat (the fourth run of
// scopes[0], which runs once a run and holds the rest), through a fresh process's arenas, its
// parallel loops run by `threads` threads.
std::vector<double> glibc_faults_per_run(const std::vector<HeapScope> &scopes, int num_owners, int threads = 1);

} // namespace schedforge::featurize
