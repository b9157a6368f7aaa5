// Test support for the trainer: the cost model network's forward pass in double precision, written
// with plain loops (independently of the Halide generators), and synthetic pipelines and states.
#pragma once

#include "common/rng.h"
#include "featurize/cost_terms.h"
#include "trainer/metrics.h"
#include "trainer/model.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace schedforge::trainer::testing {

inline double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// Weights in double precision, so that finite differences can perturb them finely.
using WeightsD = std::array<std::vector<double>, kNumTensors>;

inline WeightsD to_double(const Weights &w) {
    WeightsD d;
    for (int t = 0; t < kNumTensors; t++) d[size_t(t)].assign(w.tensors[size_t(t)].begin(), w.tensors[size_t(t)].end());
    return d;
}

// The learned multiplier of a term's coefficient (Weights::correction_bound).
inline double reference_multiplier(double m, double correction_bound) {
    if (!(correction_bound > 1)) return std::max(m, 0.0);
    const double log_bound = std::log(correction_bound);
    return std::exp(log_bound * std::tanh((m - 1) / log_bound));
}

// Cost of every state, in model units; compute terms per operation (Weights::compute_per_op).
inline std::vector<double> reference_forward(const WeightsD &w, const PipelineInput &p, const StateBatch &b,
                                             double correction_bound = 0) {
    const int S = p.num_stages, F = kScheduleFeatures;
    auto W = [&](Tensor t, int i) { return w[size_t(t)][size_t(i)]; };
    std::vector<double> costs(size_t(b.num_states), 0.0);
    for (int s = 0; s < S; s++) {
        // Operations per point: the op histogram (op-major, type-minor) without Const, Variable, Param.
        using Op = featurize::PipelineFeatures::OpType;
        constexpr int kTypes = featurize::PipelineFeatures::kNumTypes;
        double ops = 0;
        for (int i = 0; i < featurize::PipelineFeatures::kNumOps * kTypes; i++) {
            const int op = i / kTypes;
            if (op != int(Op::Const) && op != int(Op::Variable) && op != int(Op::Param))
                ops += p.pipeline_features[size_t(s) * kPipelineFeatures + size_t(i)];
        }
        ops = std::max(ops, 1.0);
        double head1[kHead1Channels];
        for (int c = 0; c < kHead1Channels; c++) {
            head1[c] = W(Tensor::Head1Bias, c);
            for (int f = 0; f < kPipelineFeatures; f++) {
                head1[c] += sigmoid(W(Tensor::Head1Filter, c + kHead1Channels * f)) *
                            p.pipeline_features[size_t(s) * kPipelineFeatures + size_t(f)] /
                            std::sqrt(double(kPipelineFeatures));
            }
        }
        for (int n = 0; n < b.num_states; n++) {
            const float *x = &b.schedule_features[(size_t(n) * S + size_t(s)) * F];
            double head2[kHead2Channels];
            for (int c = 0; c < kHead2Channels; c++) {
                double v = W(Tensor::Head2Bias, c);
                for (int f = 0; f < F; f++)
                    v += W(Tensor::Head2Filter, c + kHead2Channels * f) * std::log1p(std::max(double(x[f]), 0.0)) /
                         std::sqrt(double(F));
                head2[c] = std::max(v, 0.0);
            }
            const auto in = featurize::cost_term_inputs<double>([&](int i) { return double(x[i]); },
                                                                double(p.is_output[size_t(s)]), double(p.num_cores));
            const auto terms = featurize::cost_terms(in);
            const double speedup = featurize::parallel_speedup(in);
            for (int o = 0; o < kTerms; o++) {
                double v = W(Tensor::Bias1, o);
                double sum = 0;
                for (int c = 0; c < kHead1Channels; c++) sum += W(Tensor::Filter1, o + kTerms * c) * head1[c];
                for (int c = 0; c < kHead2Channels; c++)
                    sum += W(Tensor::Filter1, o + kTerms * (kHead1Channels + c)) * head2[c];
                v += sum / std::sqrt(double(kEmbedding));
                double term = featurize::is_parallel_cost_term(o) ? terms[size_t(o)] / speedup : terms[size_t(o)];
                if (o < featurize::kNumComputeCostTerms) term *= ops;
                costs[size_t(n)] +=
                    reference_multiplier(v, correction_bound) * std::exp(W(Tensor::TermLogScale, o)) * term;
            }
        }
    }
    return costs;
}

inline double reference_loss(const WeightsD &w, const PipelineInput &p, const TrainingBatch &b, LossKind kind,
                             double correction_bound = 0) {
    const std::vector<double> predicted = reference_forward(w, p, b.states, correction_bound);
    return loss_for_batch(predicted, std::vector<double>(b.runtimes.begin(), b.runtimes.end()),
                          std::vector<double>(b.sample_weights.begin(), b.sample_weights.end()), kind);
}

inline double log_uniform(common::Rng &rng, double lo, double hi) {
    return std::exp(std::log(lo) + rng.uniform01() * (std::log(hi) - std::log(lo)));
}

// A pipeline of `stages` stages with small operation counts; stage 0 is the output.
inline PipelineInput synthetic_pipeline(common::Rng &rng, int stages, int cores = 8) {
    PipelineInput p;
    p.num_stages = stages;
    p.num_cores = cores;
    p.pipeline_features.assign(size_t(stages) * kPipelineFeatures, 0.0f);
    for (float &v : p.pipeline_features) {
        if (rng.chance(0.05)) v = float(rng.uniform_int(1, 4));
    }
    p.is_output.assign(size_t(stages), 0.0f);
    p.is_output[0] = 1;
    return p;
}

// One state's features for a stage: plausible magnitudes, consistent enough for the terms.
inline void synthetic_stage(common::Rng &rng, float *x) {
    using I = featurize::ScheduleFeatureIndex;
    for (int f = 0; f < kScheduleFeatures; f++) {
        if (f != I::heap_bytes_refaulted && f != I::tlb_pages_rewalked)
            x[f] = float(log_uniform(rng, 1, 1e4)); // set below
    }
    x[I::vector_size] = rng.chance(0.5) ? 8 : 1;
    x[I::inner_parallelism] = float(rng.uniform_int(1, 32));
    x[I::outer_parallelism] = float(rng.uniform_int(1, 4));
    x[I::inlined_calls] = rng.chance(0.2) ? float(log_uniform(rng, 1, 1e4)) : 0;
    // A Func's realizations all come from the heap or none do (the featurizer's rule).
    x[I::heap_realizations] = rng.chance(0.3) ? x[I::num_realizations] : 0;
    // Faulted in again once more in some heap Funcs: set from the values drawn, so that the draws
    // stay those made before the feature existed.
    x[I::heap_bytes_refaulted] = x[I::heap_realizations] > 5e3f ? x[I::bytes_at_realization] : 0;
    // Pages walked again in some stages whose reads pass the cache: the same way.
    x[I::tlb_pages_rewalked] = x[I::bytes_read_past_cache] > 5e3f ? x[I::bytes_read_past_cache] / 4096 : 0;
}

inline StateBatch synthetic_states(common::Rng &rng, int states, int stages, bool with_unscheduled = true) {
    StateBatch b;
    b.num_states = states;
    b.schedule_features.assign(size_t(states) * stages * kScheduleFeatures, 0.0f);
    for (int n = 0; n < states; n++) {
        for (int s = 0; s < stages; s++) {
            // The last stage of every other state is left unscheduled (all zeros), as in the search.
            if (with_unscheduled && s == stages - 1 && n % 2) continue;
            synthetic_stage(rng, &b.schedule_features[(size_t(n) * stages + s) * kScheduleFeatures]);
        }
    }
    return b;
}

// Weights files edited behind the format's back (tests of refusals): the format's checksum,
// written out from its spec, independently of trainer/weights.cpp.
inline uint64_t fnv1a(const std::string &s) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (char c : s) h = (h ^ uint8_t(c)) * 0x100000001b3ULL;
    return h;
}

// The file with `from` replaced by `to` in its header, checksum recomputed as the format says.
inline std::string edited_weights(const std::string &bytes, const std::string &from, const std::string &to) {
    std::string body = bytes.substr(0, bytes.size() - 8);
    const size_t at = body.find(from);
    if (at == std::string::npos) throw std::invalid_argument("edited_weights: '" + from + "' not in the file");
    const size_t length_at = 12; // magic (8) + version (4), then the header's uint64 length
    uint64_t length = 0;
    std::memcpy(&length, body.data() + length_at, 8);
    length += to.size() - from.size();
    std::memcpy(&body[length_at], &length, 8);
    body.replace(at, from.size(), to);
    const uint64_t sum = fnv1a(body);
    return body + std::string(reinterpret_cast<const char *>(&sum), 8);
}

} // namespace schedforge::trainer::testing
