// Rng: the only source of randomness of the generator, the search (dropout) and the trainer.
//
// std::mt19937 is portable but the std:: distributions are not (their algorithms are
// implementation-defined), so a pipeline drawn with them could differ between standard
// libraries. Rng is SplitMix64 with our own integer/real/weighted draws, so (seed, config)
// names the same pipeline everywhere. derive() forks independent streams by hashing, so
// that per-input data and per-stage choices do not depend on the order things are drawn in.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace schedforge::common {

// A strong 64-bit mixer (the SplitMix64 finalizer); also used to combine seeds.
inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// Seed for an independent sub-stream `stream` of `seed`.
inline uint64_t derive_seed(uint64_t seed, uint64_t stream) {
    return mix64(seed ^ mix64(stream + 0x9e3779b97f4a7c15ULL));
}

class Rng {
public:
    explicit Rng(uint64_t seed) : state_(mix64(seed)) {}

    uint64_t next_u64() {
        state_ += 0x9e3779b97f4a7c15ULL;
        return mix64(state_);
    }

    // Uniform integer in [lo, hi], both inclusive. Uses rejection so it is exactly uniform.
    int64_t uniform_int(int64_t lo, int64_t hi) {
        assert(lo <= hi && "uniform_int: empty range");
        const uint64_t span = uint64_t(hi) - uint64_t(lo) + 1;
        if (span == 0) return int64_t(next_u64()); // the whole 64-bit range
        const uint64_t limit = UINT64_MAX - UINT64_MAX % span;
        uint64_t r;
        do {
            r = next_u64();
        } while (r >= limit);
        return lo + int64_t(r % span);
    }

    // Uniform double in [0, 1) with 53 random bits.
    double uniform01() { return double(next_u64() >> 11) * 0x1.0p-53; }

    bool chance(double p) { return uniform01() < p; }

    // Index drawn with probability proportional to weights[i]. Needs a positive total.
    size_t weighted_index(const std::vector<double> &weights) {
        double total = 0;
        for (double w : weights) total += w;
        assert(total > 0 && "weighted_index: no positive weight");
        double r = uniform01() * total;
        for (size_t i = 0; i < weights.size(); i++) {
            if (r < weights[i]) return i;
            r -= weights[i];
        }
        // Rounding can leave r just above the last bucket: take the last positive weight.
        for (size_t i = weights.size(); i-- > 0;) {
            if (weights[i] > 0) return i;
        }
        return 0;
    }

    template<typename T>
    const T &pick(const std::vector<T> &items) {
        assert(!items.empty() && "pick: empty list");
        return items[size_t(uniform_int(0, int64_t(items.size()) - 1))];
    }

private:
    uint64_t state_;
};

// FNV-1a over bytes: a stable 64-bit hash of text (pipeline ids are the hash of the spec).
inline uint64_t fnv1a64(const char *data, size_t size) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < size; i++) {
        h ^= uint8_t(data[i]);
        h *= 0x100000001b3ULL;
    }
    return h;
}

} // namespace schedforge::common
