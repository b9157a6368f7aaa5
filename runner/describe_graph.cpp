#include "runner/describe_graph.h"

#include <tbb/flow_graph.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <sys/eventfd.h>
#include <unistd.h>

namespace schedforge::runner {

struct DescribeGraph::Graph {
    Graph(int concurrency, std::function<void(size_t)> body)
        // TBB's default pool has one thread fewer than the cores, and none is the caller's (it
        // runs the event loop): allow one more thread than the searches need.
        : parallelism(tbb::global_control::max_allowed_parallelism, size_t(concurrency) + 1), arena(concurrency, 0) {
        arena.execute([&] {
            graph = std::make_unique<tbb::flow::graph>();
            node = std::make_unique<tbb::flow::function_node<size_t>>(*graph, size_t(concurrency), std::move(body));
        });
    }
    tbb::global_control parallelism;
    tbb::task_arena arena;
    std::unique_ptr<tbb::flow::graph> graph;
    std::unique_ptr<tbb::flow::function_node<size_t>> node;
    std::atomic<bool> cancelled{false};
};

DescribeGraph::DescribeGraph(const std::vector<BenchmarkJob> &jobs, int concurrency)
    : jobs_(jobs), described_(jobs.size()) {
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) throw std::runtime_error("eventfd failed");
    graph_ = std::make_unique<Graph>(std::max(1, concurrency), [this](size_t job) {
        Described d;
        if (!graph_->cancelled) {
            common::PauseGate::Inside inside(gate_);
            const auto start = std::chrono::steady_clock::now();
            try {
                d.spec = jobs_[job].describe();
            } catch (...) {
                d.failure = worker::failure_of(std::current_exception(), /*compiled=*/false);
            }
            d.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() -
                        inside.waited_seconds();
        } else {
            d.failure = worker::JobFailure{JobStatus::Cancelled, "not started: stopped"};
        }
        {
            std::lock_guard lock(mutex_);
            described_[job] = std::move(d);
            finished_++;
        }
        const uint64_t one = 1;
        [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
    });
}

DescribeGraph::~DescribeGraph() {
    graph_->cancelled = true;
    resume(); // searches waiting at a pause point finish
    graph_->arena.execute([&] { graph_->graph->wait_for_all(); });
    graph_.reset();
    ::close(wake_fd_);
}

void DescribeGraph::submit(size_t job) {
    {
        std::lock_guard lock(mutex_);
        submitted_++;
    }
    graph_->arena.execute([&] { graph_->node->try_put(job); });
}

int DescribeGraph::in_flight() const {
    std::lock_guard lock(mutex_);
    return submitted_ - finished_;
}

bool DescribeGraph::done(size_t job) const {
    std::lock_guard lock(mutex_);
    return described_[job].has_value();
}

DescribeGraph::Described DescribeGraph::take(size_t job) {
    std::lock_guard lock(mutex_);
    Described d = std::move(*described_[job]);
    described_[job].reset();
    return d;
}

void DescribeGraph::clear_wake() {
    uint64_t count;
    [[maybe_unused]] const ssize_t n = ::read(wake_fd_, &count, sizeof count);
}

void DescribeGraph::pause() {
    if (paused_) return;
    gate_.close();
    paused_ = true;
}

void DescribeGraph::resume() {
    if (!paused_) return;
    gate_.open();
    paused_ = false;
}

} // namespace schedforge::runner
