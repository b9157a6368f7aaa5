// Timing rounds in processes of their own.
//
// A schedule's time can depend on the process that runs it, not only on the machine's moment.
// On the 2-core Zen 5 VM of corpora/README.md, one held-out schedule ran at 0.59 ms in 10 of 14
// processes and at 5.2 ms in the other 4, steady within each. The cause, found later: in such a
// process the calling thread and the Halide pool's worker raced for their first glibc arena, and
// where both took the main one, their tasks' buffers together passed the trim threshold and were
// faulted in again at every run. Each process now claims the main arena for its calling thread
// first (claim_main_arena in system_allocator.h), as a user's program has it. Rounds taken in
// one process are still one draw of whatever else settles early in a process; timing each round
// in a child forked from the compiled worker (which has run no Halide code, so it has no thread
// pool that a fork would lose) makes each round a draw of its own, and the label, the median of
// the rounds' minima, the time of the usual process.
#pragma once

#include <Halide.h>

#include <functional>
#include <memory>
#include <string>

namespace schedforge::runner {

// How a function run in a child process ended.
struct ChildOutcome {
    bool returned = false; // fn returned: `bytes` holds its result
    std::string bytes;
    int signal = 0;    // the signal that ended the child, 0 if none
    int exit_code = 0; // its exit status when it exited without returning a result
};

// Runs `fn` in a child forked from this process and returns what it returned. The child dies
// with its parent (a killed worker leaves no round behind), and leaves with _exit, so that
// none of the parent's handlers or destructors run in it. `fn` must not throw: it encodes its
// failures in its bytes. Throws std::runtime_error if the child cannot be started.
ChildOutcome run_in_child(const std::function<std::string()> &fn);

// A buffer of b's type and shape (mins, extents and strides) whose memory this process shares
// with the children it forks afterwards, so that what a child's run writes there is seen here.
// `*mapping` owns the memory (unmapped when the last copy goes): keep it while the buffer is used.
Halide::Buffer<> shared_buffer_like(const Halide::Buffer<> &b, std::shared_ptr<void> *mapping);

} // namespace schedforge::runner
