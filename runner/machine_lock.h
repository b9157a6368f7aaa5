// MachineLock: keeps the processes of one run that share a machine (MPI ranks, or separate
// generate-dataset runs pointed at the same lock file) from timing a schedule while another
// compiles or times, so that their labels stay as clean as one process's (the runner's
// exclusive benchmark, extended across processes).
//
// Two flock(2) files: `PATH.work`, held shared by a process while any of its workers compiles
// and exclusively while one is timed; and `PATH.gate`, which a process that wants to time takes
// exclusively first, and every process passes (shared, released at once) before it starts a
// compile. So a process waiting to time stops new compiles everywhere and waits only for those
// already running: timing is never starved by a stream of compiles. The kernel drops a dead
// process's locks, so a killed rank never blocks the others.
//
// Every call is non-blocking: the runner's event loop retries while its workers run.
#pragma once

#include <string>

namespace schedforge::runner {

class MachineLock {
public:
    enum class Held { Nothing, Compiling, Timing };

    // Opens (creating) PATH.gate and PATH.work; UserError if it cannot.
    explicit MachineLock(const std::string &path);
    ~MachineLock();
    MachineLock(const MachineLock &) = delete;
    MachineLock &operator=(const MachineLock &) = delete;

    // May another compile start now? Passes the gate and holds `work` shared. False while a
    // process waits to time or times (nothing is held then, unless it was before).
    bool try_compile();
    // May a job be timed now? Holds the gate (from the first try, so that no new compile
    // starts anywhere) and then `work` exclusively, once no process compiles or times.
    bool try_time();
    // Drops what is held (nothing compiling, nothing to time).
    void release();
    Held held() const { return held_; }
    // In a forked child: closes its copies of the files (the parent's locks stay).
    void close_inherited() const;

private:
    int gate_ = -1, work_ = -1;
    Held held_ = Held::Nothing;
    bool gate_held_ = false;
};

} // namespace schedforge::runner
