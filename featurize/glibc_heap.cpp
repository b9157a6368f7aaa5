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

// The main arena, its addresses relative to its start: the free top runs from `top` to `end`;
// below it, chunks in use and free ones (`holes`, by address, none adjacent to another or to the
// top); the pages below `resident` have been touched and not returned since. Small chunks freed
// wait in the thread's cache (tcache) for a request of their size, in use as far as the arena
// knows: one that lies above large free chunks keeps them from joining the top (a pin).
struct Arena {
    int64_t top = 0, end = 0, resident = 0;
    std::map<int64_t, int64_t> holes;               // address -> size
    std::map<int64_t, std::vector<int64_t>> tcache; // size -> addresses, the last freed last
    int64_t mmap_threshold = kInitialMmapThresholdBytes, trim_threshold = kInitialMmapThresholdBytes;
    bool operator==(const Arena &o) const {
        return top == o.top && end == o.end && resident == o.resident && holes == o.holes && tcache == o.tcache &&
               mmap_threshold == o.mmap_threshold && trim_threshold == o.trim_threshold;
    }
};

// A live block: its chunk's address and size, or a mapping of `size` bytes (address -1).
struct Chunk {
    int64_t address = -1, size = 0;
};

class Simulation {
public:
    Simulation(const std::vector<HeapScope> &scopes, int num_owners) : scopes_(scopes), owners_(size_t(num_owners)) {}

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
            case HeapScope::Event::Repeat: repeat(e.scope, e.iterations, faults); break;
            }
        }
        for (auto it = live.rbegin(); it != live.rend(); ++it) release(it->second); // not freed: at the end
    }

    // `n` iterations of scope `s`: simulated until one leaves the arena as it found it, which the
    // rest then repeat.
    void repeat(int s, int64_t n, std::vector<double> &faults) {
        std::vector<double> one(owners_);
        for (int64_t done = 1; done <= n; done++) {
            const Arena before = arena_;
            std::fill(one.begin(), one.end(), 0.0);
            iterate(s, one);
            const double times = arena_ == before || done == kMaxIterationsSimulated ? double(n - done + 1) : 1.0;
            for (size_t o = 0; o < owners_; o++) faults[o] += one[o] * times;
            if (times > 1) return;
        }
    }

    Chunk allocate(int owner, int64_t bytes, std::vector<double> &faults) {
        const int64_t size = std::max(kMinChunk, align_up(bytes + kRequestOverheadBytes + 8, 16));
        if (auto cached = arena_.tcache.find(size); cached != arena_.tcache.end()) {
            const Chunk c{cached->second.back(), size};
            cached->second.pop_back();
            if (cached->second.empty()) arena_.tcache.erase(cached);
            return c;
        }
        // The smallest hole that holds it (below the resident mark: no faults).
        auto best = arena_.holes.end();
        for (auto it = arena_.holes.begin(); it != arena_.holes.end(); ++it) {
            if (it->second >= size && (best == arena_.holes.end() || it->second < best->second)) best = it;
        }
        if (best != arena_.holes.end()) {
            const Chunk c{best->first, best->second - size >= kMinChunk ? size : best->second};
            const int64_t rest = best->second - c.size;
            arena_.holes.erase(best);
            if (rest > 0) arena_.holes[c.address + c.size] = rest;
            return c;
        }
        const int64_t top = arena_.end - arena_.top;
        if (top < size + kMinChunk) {
            if (size >= arena_.mmap_threshold) { // mapped afresh: every page faults in
                faults[size_t(owner)] += double(align_up(bytes, kPage));
                return {-1, align_up(size + 8, kPage)};
            }
            arena_.end += align_up(size + kTopPadBytes + kMinChunk - top, kPage);
        }
        const Chunk c{arena_.top, size};
        arena_.top += size;
        const int64_t touched = align_up(arena_.top, kPage);
        if (touched > arena_.resident) {
            faults[size_t(owner)] += double(touched - arena_.resident);
            arena_.resident = touched;
        }
        return c;
    }

    void release(const Chunk &c) {
        if (c.address < 0) {
            if (c.size > arena_.mmap_threshold && c.size <= kMaxDynamicMmapThresholdBytes) {
                arena_.mmap_threshold = c.size;
                arena_.trim_threshold = 2 * c.size;
            }
            return;
        }
        if (c.size <= kTcacheMaxChunk) {
            std::vector<int64_t> &cached = arena_.tcache[c.size];
            if (cached.size() < kTcacheCount) {
                cached.push_back(c.address);
                return;
            }
        }
        // Merged with the free chunks on either side, and into the top when it borders it.
        int64_t address = c.address, size = c.size;
        if (auto after = arena_.holes.find(address + size); after != arena_.holes.end()) {
            size += after->second;
            arena_.holes.erase(after);
        }
        if (auto before = arena_.holes.lower_bound(address); before != arena_.holes.begin()) {
            --before;
            if (before->first + before->second == address) {
                address = before->first;
                size += before->second;
                arena_.holes.erase(before);
            }
        }
        if (address + size == arena_.top) {
            arena_.top = address;
            size = arena_.end - arena_.top;
        } else {
            arena_.holes[address] = size;
        }
        const int64_t top = arena_.end - arena_.top;
        if (size < kConsolidationBytes || top < arena_.trim_threshold) return;
        const int64_t extra = align_down(top - kMinChunk - 1 - kTopPadBytes, kPage);
        if (extra <= 0) return;
        arena_.end -= extra;
        arena_.resident = std::min(arena_.resident, arena_.end);
    }

    const std::vector<HeapScope> &scopes_;
    size_t owners_;
    Arena arena_;
};

} // namespace

std::vector<double> glibc_faults_per_run(const std::vector<HeapScope> &scopes, int num_owners) {
    if (scopes.empty()) return std::vector<double>(size_t(num_owners), 0.0);
    return Simulation(scopes, num_owners).per_run();
}

} // namespace schedforge::featurize
