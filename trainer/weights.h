// The cost model's weights and their file format (version 3).
//
// Version 1 files lack the last tensor, term_log_scale (network_shape.h); they load with it zero.
// Files trained on earlier schedule features (version 1: 39 features and 27 terms, before
// bytes_read_past_cache; version 2: 40 and 28, before bytes_read_from_memory; version 3: 41 and
// 29, before library_calls and accumulator_bytes_spilled) load widened to
// this network with the new features and terms unused: the same predictions.
// Versions 1 and 2 were trained with compute terms per point; they load with compute_per_op
// false, which is the network they were trained as. Version 3 records it in the header
// (`compute_terms = per_op` or `per_point`). Version 4 adds `correction_bound` (below); earlier
// files load unbounded (0), the network they were trained as.
//
// A weights file is binary, little-endian:
//   "SFWEIGHT"                      8-byte magic
//   uint32 format version           4
//   string header                   "key = value" lines (below)
//   uint64 tensor count, then per tensor: string name, uint64 rank, uint64 dims[rank] (innermost
//                                   first), float32 values
//   uint64 checksum                 FNV-1a 64 of every byte before it
// where a string is a uint64 byte count and its bytes. Header keys: `network` (the architecture's
// signature: a file for another shape is refused), `pipeline_features` and `schedule_features`
// ("VERSION x COUNT": the features the weights were trained on must be the ones this build
// computes), `producer`, `commit`, `created`, and `origin` (how the weights came to be: the seed
// of a random initialization, or the training command and its datasets).
//
// Loading checks all of it and refuses a bad file with a UserError naming the file and the
// problem; saving writes FILE.partial and renames it, so a failed save leaves no half file.
#pragma once

#include "trainer/network_shape.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace schedforge::trainer {

inline constexpr int kWeightsFormatVersion = 4;

// Weights::correction_bound's valid values: 0 (unbounded) or above 1.
inline bool valid_correction_bound(double bound) { return bound == 0 || bound > 1; }

// The command-line check of --correction-bound (train-cost-model, bootstrap): a UserError for a
// bound without a manual model to bound corrections to, or an invalid one.
void check_correction_bound_option(double bound, bool from_coefficients);

// "schedforge-cost-model head1=8 head2=24 terms=28 pipeline=441 schedule=40" (this build's network
// by default)
std::string network_signature(int terms = kTerms, int schedule_features = kScheduleFeatures);

struct Weights {
    std::array<std::vector<float>, kNumTensors> tensors; // tensor_shapes()[i].size() values each
    std::string origin;                                  // recorded in the file's header
    // Whether the compute terms (featurize/cost_terms.h, kNumComputeCostTerms) are multiplied by
    // the stage's operations per point, as the manual model's are.
    bool compute_per_op = true;
    // A trust region around the manual model: when B > 1, each learned coefficient multiplier
    // (the last layer's output, 1 for the manual model) passes through
    // exp(ln B · tanh((m - 1) / ln B)), which is m near 1 and stays within [1/B, B], so a search
    // guided by the model cannot exploit corrections far from the training data. 0: unbounded
    // (max(m, 0)), as models trained from random weights need.
    double correction_bound = 0;
    // Filled in by load(); save() writes the current build's.
    std::string producer, commit, created;

    std::vector<float> &operator[](Tensor t) { return tensors[size_t(t)]; }
    const std::vector<float> &operator[](Tensor t) const { return tensors[size_t(t)]; }

    // Uniform in [-0.5, 0.5] from `seed` (the source paper's §5 starting point), the same on
    // every machine (SplitMix64 draws, no std:: distributions).
    // term_log_scale is zero (every coefficient at the scale of the last layer).
    static Weights random(uint64_t seed);
    // The manual model with `coefficients` (nanoseconds per unit of each cost term), as this
    // network: the last layer's weights zero and its biases one, term_log_scale the
    // coefficients' logarithms (a zero coefficient becomes kMinCoefficient). The heads start as
    // random(seed)'s. Training from here learns corrections to the manual model.
    static Weights from_coefficients(const std::array<double, kTerms> &coefficients, uint64_t seed,
                                     const std::string &origin, double correction_bound = 0);
    static constexpr double kMinCoefficient = 1e-9;
    static Weights load(const std::string &path);
    void save(const std::string &path) const;
    // The file's bytes (what save() writes).
    std::string serialize() const;
    static Weights deserialize(const std::string &bytes, const std::string &path_for_messages);
};

} // namespace schedforge::trainer
