#include "featurize/glibc_heap.h"

#include <algorithm>
#include <map>
#include <vector>

namespace schedforge::featurize {

namespace {

constexpr int64_t kPage = 4096;
constexpr int64_t kMinChunk = 32;                  // MINSIZE
constexpr int64_t kConsolidationBytes = 64 * 1024; // FASTBIN_CONSOLIDATION_THRESHOLD
constexpr int kRunsBeforeSteady = 3;               // the thresholds settle in the first
constexpr int64_t kMaxIterationsSimulated = 8;     // then the last one stands for the rest
constexpr int64_t kTcacheMaxChunk = 1040;          // a thread's cache: chunks of requests up to 1,032 bytes
constexpr size_t kTcacheCount = 7;                 // of each size

int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }
int64_t align_down(int64_t v, int64_t a) { return v / a * a; }

// A thread's arena (the main one for the thread that runs the pipeline), its addresses relative
// to its start: the free top runs from `top` to `end`; below it, chunks in use and free ones
// (`holes`, by address, none adjacent to another or to the top); the pages below `resident` have
// been touched and not returned since. Small chunks freed wait in the thread's cache (tcache) for
// a request of their size, in use as far as the arena knows: one that lies above large free
// chunks keeps them from joining the top (a pin). The main arena grows by the pad beyond what a
// block lacks, another thread's (`padded` false) by what it lacks.
struct Arena {
    int64_t top = 0, end = 0, resident = 0;
    std::map<int64_t, int64_t> holes;               // address -> size
    std::map<int64_t, std::vector<int64_t>> tcache; // size -> addresses, the last freed last
    bool padded = true;
    bool operator==(const Arena &o) const {
        return top == o.top && end == o.end && resident == o.resident && holes == o.holes && tcache == o.tcache;
    }
};

// The process's thresholds, which every arena follows.
struct Thresholds {
    int64_t mmap = kInitialMmapThresholdBytes, trim = kInitialMmapThresholdBytes;
    bool operator==(const Thresholds &o) const { return mmap == o.mmap && trim == o.trim; }
};

// A live block: its chunk's address and size, or a mapping of `size` bytes (address -1).
struct Chunk {
    int64_t address = -1, size = 0;
};

class Simulation {
public:
    Simulation(const std::vector<HeapScope> &scopes, int num_owners, int threads)
        : scopes_(scopes), owners_(size_t(num_owners)), arenas_(size_t(std::max(threads, 1))) {
        for (size_t t = 1; t < arenas_.size(); t++) arenas_[t].padded = false;
    }

    std::vector<double> per_run() {
        std::vector<double> run(owners_, 0.0);
        for (int r = 0; r < kRunsBeforeSteady; r++) iterate(0, run);
        std::fill(run.begin(), run.end(), 0.0);
        iterate(0, run);
        return run;
    }

private:
    // One iteration of scope `s`, its faults added to `faults`.
    void iterate(int s, std::vector<double> &faults) {
        std::map<int, Chunk> live;
        for (const HeapScope::Event &e : scopes_[size_t(s)].events) {
            switch (e.kind) {
            case HeapScope::Event::Allocate: live[e.owner] = allocate(e.owner, e.bytes, faults); break;
            case HeapScope::Event::Free:
                if (auto it = live.find(e.owner); it != live.end()) {
                    release(it->second);
                    live.erase(it);
                }
                break;
            case HeapScope::Event::Repeat:
                if (e.parallel && thread_ == 0 && arenas_.size() > 1) {
                    share_out(e.runs, faults);
                } else {
                    for (const HeapScope::Run &r : e.runs) repeat(r.scope, r.iterations, faults);
                }
                break;
            }
        }
        for (auto it = live.rbegin(); it != live.rend(); ++it) release(it->second); // not freed: at the end
    }

    // A parallel loop's tasks, each thread's share (shares_of_threads) in its own arena.
    void share_out(const std::vector<HeapScope::Run> &runs, std::vector<double> &faults) {
        const std::vector<std::vector<HeapScope::Run>> shares = shares_of_threads(runs, int(arenas_.size()));
        for (size_t t = 0; t < shares.size(); t++) {
            thread_ = t;
            for (const HeapScope::Run &r : shares[t]) repeat(r.scope, r.iterations, faults);
        }
        thread_ = 0;
    }

    // `n` iterations of scope `s` on this thread: simulated until one leaves its arena (and the
    // thresholds) as it found it, which the rest then repeat.
    void repeat(int s, int64_t n, std::vector<double> &faults) {
        std::vector<double> one(owners_);
        for (int64_t done = 1; done <= n; done++) {
            const Arena before = arena();
            const Thresholds thresholds = thresholds_;
            std::fill(one.begin(), one.end(), 0.0);
            iterate(s, one);
            const bool same = arena() == before && thresholds_ == thresholds;
            const double times = same || done == kMaxIterationsSimulated ? double(n - done + 1) : 1.0;
            for (size_t o = 0; o < owners_; o++) faults[o] += one[o] * times;
            if (times > 1) return;
        }
    }

    Arena &arena() { return arenas_[thread_]; }

    Chunk allocate(int owner, int64_t bytes, std::vector<double> &faults) {
        Arena &heap = arena();
        const int64_t size = std::max(kMinChunk, align_up(bytes + kRequestOverheadBytes + 8, 16));
        if (auto cached = heap.tcache.find(size); cached != heap.tcache.end()) {
            const Chunk c{cached->second.back(), size};
            cached->second.pop_back();
            if (cached->second.empty()) heap.tcache.erase(cached);
            return c;
        }
        // The smallest hole that holds it (below the resident mark: no faults).
        auto best = heap.holes.end();
        for (auto it = heap.holes.begin(); it != heap.holes.end(); ++it) {
            if (it->second >= size && (best == heap.holes.end() || it->second < best->second)) best = it;
        }
        if (best != heap.holes.end()) {
            const Chunk c{best->first, best->second - size >= kMinChunk ? size : best->second};
            const int64_t rest = best->second - c.size;
            heap.holes.erase(best);
            if (rest > 0) heap.holes[c.address + c.size] = rest;
            return c;
        }
        const int64_t top = heap.end - heap.top;
        if (top < size + kMinChunk) {
            if (size >= thresholds_.mmap) { // mapped afresh: every page faults in
                faults[size_t(owner)] += double(align_up(bytes, kPage));
                return {-1, align_up(size + 8, kPage)};
            }
            heap.end += align_up(size + (heap.padded ? kTopPadBytes : 0) + kMinChunk - top, kPage);
        }
        const Chunk c{heap.top, size};
        heap.top += size;
        const int64_t touched = align_up(heap.top, kPage);
        if (touched > heap.resident) {
            faults[size_t(owner)] += double(touched - heap.resident);
            heap.resident = touched;
        }
        return c;
    }

    void release(const Chunk &c) {
        if (c.address < 0) {
            if (c.size > thresholds_.mmap && c.size <= kMaxDynamicMmapThresholdBytes) {
                thresholds_.mmap = c.size;
                thresholds_.trim = 2 * c.size;
            }
            return;
        }
        Arena &heap = arena();
        if (c.size <= kTcacheMaxChunk) {
            std::vector<int64_t> &cached = heap.tcache[c.size];
            if (cached.size() < kTcacheCount) {
                cached.push_back(c.address);
                return;
            }
        }
        // Merged with the free chunks on either side, and into the top when it borders it.
        int64_t address = c.address, size = c.size;
        if (auto after = heap.holes.find(address + size); after != heap.holes.end()) {
            size += after->second;
            heap.holes.erase(after);
        }
        if (auto before = heap.holes.lower_bound(address); before != heap.holes.begin()) {
            --before;
            if (before->first + before->second == address) {
                address = before->first;
                size += before->second;
                heap.holes.erase(before);
            }
        }
        if (address + size == heap.top) {
            heap.top = address;
            size = heap.end - heap.top;
        } else {
            heap.holes[address] = size;
        }
        const int64_t top = heap.end - heap.top;
        if (size < kConsolidationBytes || top < thresholds_.trim) return;
        const int64_t extra = align_down(top - kMinChunk - 1 - kTopPadBytes, kPage);
        if (extra <= 0) return;
        heap.end -= extra;
        heap.resident = std::min(heap.resident, heap.end);
    }

    const std::vector<HeapScope> &scopes_;
    size_t owners_;
    std::vector<Arena> arenas_; // one a thread, the calling thread's (the main arena) first
    size_t thread_ = 0;         // the thread the simulation is on
    Thresholds thresholds_;
};

} // namespace

std::vector<std::vector<HeapScope::Run>> shares_of_threads(const std::vector<HeapScope::Run> &runs, int threads) {
    int64_t n = 0;
    for (const HeapScope::Run &r : runs) n += r.iterations * r.tasks;
    threads = std::max(threads, 1);
    const int64_t own = n / threads, rest = n - own, others = std::max(threads - 1, 1);
    std::vector<std::vector<HeapScope::Run>> shares(static_cast<size_t>(threads));
    size_t i = 0;      // the run being handed out
    int64_t taken = 0; // of its iterations
    for (int t = 0; t < threads; t++) {
        int64_t share = t == 0 ? own : rest / others + (t <= rest % others ? 1 : 0);
        if (t == threads - 1) share = n; // all that is left
        while (i < runs.size() && share > 0) {
            const HeapScope::Run &r = runs[i];
            const int64_t k = std::min(r.iterations - taken, (2 * share + r.tasks) / (2 * r.tasks)); // nearest row
            if (k == 0) break;
            shares[size_t(t)].push_back({r.scope, k, r.tasks});
            share -= k * r.tasks;
            taken += k;
            if (taken == r.iterations) i++, taken = 0;
        }
    }
    return shares;
}

std::vector<double> glibc_faults_per_run(const std::vector<HeapScope> &scopes, int num_owners, int threads) {
    if (scopes.empty()) return std::vector<double>(size_t(num_owners), 0.0);
    return Simulation(scopes, num_owners, threads).per_run();
}

} // namespace schedforge::featurize
