// The cost model network's shape (source paper §4.2, Fig. 4), shared by the Halide generators
// that define it, the weights file, and the C++ code that feeds it. No Halide here.
//
//   pipeline features [441] --(sigmoid-positive weights)--> head 1 embedding [8]
//   log(1 + schedule features) [43] --> linear --> ReLU --> head 2 embedding [24]
//   stacked [32] --> linear --> ReLU --> x exp(term_log_scale) --> coefficients [31] of the
//                                                                   hand-designed cost terms
//   stage cost = sum_i coefficient_i * term_i (featurize/cost_terms.h; the compute terms times
//                the stage's operations per point, as in the manual model); state cost = sum over stages
//
// term_log_scale [31] gives each coefficient its own scale, trained like every other weight. A
// random start sets it to zero (scale 1); a start from the manual model's coefficients sets it to
// their logarithms with the last layer giving exactly 1, so that training starts from the manual
// model and learns a correction per stage, and Adam's steps change each coefficient by a
// similar fraction although the coefficients span eight orders of magnitude.
//
// Buffers are laid out innermost first, as Halide indexes them: a head's filter is (channel,
// feature), schedule features are (state, feature, stage) so that a batch vectorizes over states.
#pragma once

#include "featurize/cost_terms.h"
#include "featurize/pipeline_features.h"
#include "featurize/schedule_features.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace schedforge::trainer {

inline constexpr int kPipelineFeatures = featurize::PipelineFeatures::kNumFeatures;
inline constexpr int kScheduleFeatures = featurize::kNumScheduleFeatures;
inline constexpr int kHead1Channels = 8;
inline constexpr int kHead2Channels = 24;
inline constexpr int kEmbedding = kHead1Channels + kHead2Channels;
inline constexpr int kTerms = featurize::kNumCostTerms;

// The weight tensors, in file and argument order.
enum class Tensor : int { Head1Filter, Head1Bias, Head2Filter, Head2Bias, Filter1, Bias1, TermLogScale, Count };
inline constexpr int kNumTensors = int(Tensor::Count);

struct TensorShape {
    const char *name;
    int rank;
    std::array<int, 2> dims; // innermost first; unused dims are 1
    int64_t size() const { return int64_t(dims[0]) * dims[1]; }
};

inline const std::array<TensorShape, kNumTensors> &tensor_shapes() {
    static const std::array<TensorShape, kNumTensors> shapes = {{
        {"head1_filter", 2, {kHead1Channels, kPipelineFeatures}},
        {"head1_bias", 1, {kHead1Channels, 1}},
        {"head2_filter", 2, {kHead2Channels, kScheduleFeatures}},
        {"head2_bias", 1, {kHead2Channels, 1}},
        {"filter1", 2, {kTerms, kEmbedding}},
        {"bias1", 1, {kTerms, 1}},
        {"term_log_scale", 1, {kTerms, 1}},
    }};
    return shapes;
}

// Every weighted sum is scaled by 1/sqrt(its fan-in), so that with weights uniform in [-0.5, 0.5]
// (the paper's initialization) activations start near one whatever the layer's width, instead of
// tens: large starting activations leave many ReLUs dead and training stalls.
inline float fan_in_scale(int fan_in) { return 1.0f / std::sqrt(float(fan_in)); }

// Adam's constants (Kingma and Ba 2015, the paper's "standard hyper-parameters").
inline constexpr float kAdamBeta1 = 0.9f, kAdamBeta2 = 0.999f, kAdamEpsilon = 1e-8f;

// Predictions are in nanoseconds: the terms count operations, bytes and lines, so coefficients
// in ns per unit start near 1 and train in a comfortable range.
inline constexpr double kSecondsToModelUnits = 1e9;

// Loss kinds the training pipeline computes (its `loss_kind` input).
enum class LossKind : int {
    // The paper's §4.2: L2 on throughput relative to the batch's fastest schedule (predicted
    // throughput relative to the prediction for that schedule, so the error does not vanish when
    // every prediction is off by the same factor), plus kScaleWeight x log(predicted/measured)^2,
    // which pins the absolute scale without outweighing the ranking.
    Throughput = 0,
    LogRatio = 1, // |log(predicted / measured)| x per-sample weights (Steiner et al. §6.2)
    // The ranking itself, which is what the search uses: for every pair of the batch, a logistic
    // loss on the predicted log-ratio having the measured one's sign (RankNet's), weighted by how
    // far apart the measured runtimes are, saturating at 2x: pairs closer than the timing noise
    // (repeat runs order pairs under 1.2x apart alike only 75-82% of the time) count little. Plus
    // kScaleWeight x log(predicted/measured)^2 for the absolute scale, as in Throughput.
    Pairwise = 2,
};
// The loss a command line names: "throughput", "log" or "pairwise"; nullopt for anything else.
inline std::optional<LossKind> loss_kind_named(const std::string &name) {
    if (name == "throughput") return LossKind::Throughput;
    if (name == "log") return LossKind::LogRatio;
    if (name == "pairwise") return LossKind::Pairwise;
    return std::nullopt;
}
inline constexpr const char *kLossNamesHelp =
    "throughput (the paper's), log (|log(P/M)|, weighted) or pairwise (the ranking of each pair, weighted by "
    "how far apart)";

inline constexpr float kScaleWeight = 0.05f;
inline constexpr float kPairSharpness = 10.0f;        // logistic slope per unit of log-ratio
inline constexpr float kPairSaturation = 0.69314718f; // log(2): pairs this far apart weigh 1

} // namespace schedforge::trainer
