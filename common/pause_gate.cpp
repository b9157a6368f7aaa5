#include "common/pause_gate.h"

#include <chrono>

namespace schedforge::common {

namespace {
thread_local PauseGate *current_gate = nullptr;
thread_local double waited = 0; // seconds, since the thread entered its gate
} // namespace

PauseGate::Inside::Inside(PauseGate &gate) : gate_(gate) {
    std::unique_lock lock(gate.mutex_);
    // Entering counts as reaching a pause point: a closed gate admits no new work.
    gate.changed_.wait(lock, [&] { return !gate.closed_.load(); });
    gate.inside_++;
    current_gate = &gate;
    waited = 0;
}

double PauseGate::Inside::waited_seconds() const { return waited; }

PauseGate::Inside::~Inside() {
    current_gate = nullptr;
    std::lock_guard lock(gate_.mutex_);
    gate_.inside_--;
    gate_.changed_.notify_all();
}

void PauseGate::close() {
    std::unique_lock lock(mutex_);
    closed_ = true;
    changed_.wait(lock, [&] { return waiting_ == inside_; });
}

void PauseGate::open() {
    std::lock_guard lock(mutex_);
    closed_ = false;
    changed_.notify_all();
}

void PauseGate::wait_while_closed() {
    std::unique_lock lock(mutex_);
    if (!closed_) return;
    waiting_++;
    changed_.notify_all();
    const auto start = std::chrono::steady_clock::now();
    changed_.wait(lock, [&] { return !closed_.load(); });
    waited += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    waiting_--;
}

void pause_point() {
    PauseGate *gate = current_gate;
    if (gate && gate->closed_.load(std::memory_order_relaxed)) gate->wait_while_closed();
}

} // namespace schedforge::common
