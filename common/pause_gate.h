// PauseGate: lets one thread stop the others' work at safe points, and wait until they have.
//
// The benchmark runner searches on threads of the calling process while its workers compile, and
// times schedules with nothing else running (runner/benchmark_runner.h). A search cannot be
// stopped from outside as a worker process can (SIGSTOP), so it stops itself: threads enter the
// gate for their work, the search calls pause_point() between its steps, and close() returns once
// every thread inside waits at one. pause_point() outside any gate costs one thread-local read.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace schedforge::common {

class PauseGate {
public:
    // The calling thread works inside `gate` while this lives (not nested).
    class Inside {
    public:
        explicit Inside(PauseGate &gate);
        ~Inside();
        // Seconds this thread has waited at pause points since it entered.
        double waited_seconds() const;
        Inside(const Inside &) = delete;
        Inside &operator=(const Inside &) = delete;

    private:
        PauseGate &gate_;
    };

    // Blocks until every thread inside waits at a pause point or has left; until open(), those
    // that reach one wait there.
    void close();
    void open();

private:
    friend void pause_point();
    void wait_while_closed();

    std::mutex mutex_;
    std::condition_variable changed_;
    std::atomic<bool> closed_{false};
    int inside_ = 0, waiting_ = 0;
};

// Where the calling thread may wait while its gate is closed (no-op outside one).
void pause_point();

} // namespace schedforge::common
