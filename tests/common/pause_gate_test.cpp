// PauseGate: close() returns only once every thread inside waits at a pause point, no work
// happens while it is closed, and open() lets it go on; threads outside any gate never wait.
#include "common/pause_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace schedforge::common {
namespace {

TEST(PauseGate, ClosedGateHoldsEveryThreadInsideAtItsNextPausePoint) {
    PauseGate gate;
    std::atomic<int64_t> steps{0};
    std::atomic<bool> done{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; t++) {
        threads.emplace_back([&]() {
            PauseGate::Inside inside(gate);
            while (!done) {
                pause_point();
                steps++;
            }
        });
    }
    while (steps < 1000) std::this_thread::yield();
    for (int round = 0; round < 3; round++) {
        gate.close();
        const int64_t held = steps.load();
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        EXPECT_EQ(steps.load(), held) << "no step while the gate is closed";
        gate.open();
        while (steps < held + 1000) std::this_thread::yield();
    }
    done = true;
    for (std::thread &t : threads) t.join();
}

TEST(PauseGate, ThreadsOutsideAGateNeverWait) {
    PauseGate gate;
    gate.close(); // nobody inside: returns at once
    int passed = 0;
    for (int i = 0; i < 1000; i++) pause_point(), passed++;
    EXPECT_EQ(passed, 1000);
    gate.open();
}

TEST(PauseGate, PausedTimeIsCountedPerThread) {
    PauseGate gate;
    std::atomic<bool> entered{false}, release{false};
    double waited = -1;
    std::thread worker([&]() {
        PauseGate::Inside inside(gate);
        entered = true;
        while (!release) pause_point();
        waited = inside.waited_seconds();
    });
    while (!entered) std::this_thread::yield();
    gate.close();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    release = true;
    gate.open();
    worker.join();
    EXPECT_GE(waited, 0.04);
    EXPECT_LT(waited, 5.0);
}

} // namespace
} // namespace schedforge::common
