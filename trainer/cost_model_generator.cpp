// The cost model network as two Halide Generators, compiled ahead of time by CMake:
//
//   schedforge_cost_model        inference: a batch of states of one pipeline -> predicted costs
//   schedforge_train_cost_model  one training step: forward, the loss, its gradient with respect
//                                to every weight (Halide's propagate_adjoints), and an Adam update
//
// Both share forward() below; the shape is trainer/network_shape.h and the 31 terms are
// featurize/cost_terms.h, the same template the manual model evaluates in double precision.
#include "Halide.h"
#include "trainer/network_shape.h"

#include <string>
#include <vector>

namespace Halide {
// The operations featurize::cost_terms() needs from its number type, for Exprs (found by
// argument-dependent lookup, hence in Halide's namespace).
inline Expr select_value(const Expr &c, const Expr &t, const Expr &f) { return select(c, t, f); }
inline Expr max_value(const Expr &a, const Expr &b) { return max(a, b); }
inline Expr min_value(const Expr &a, const Expr &b) { return min(a, b); }
inline Expr ceil_value(const Expr &a) { return ceil(a); }
} // namespace Halide

namespace schedforge::trainer {
namespace {

using namespace Halide;

// The weights as Funcs over their natural indices (channel[, feature]).
struct Weights {
    std::vector<Func> tensors; // by Tensor
    const Func &operator[](Tensor t) const { return tensors[size_t(t)]; }
};

struct NetworkInputs {
    Func pipeline_features; // (feature, stage)
    Func schedule_features; // (state, feature, stage); all zero for a stage not scheduled yet
    Func is_output;         // (stage): 1 for the pipeline's outputs
    Expr num_cores, num_stages;
    Expr compute_per_op;   // nonzero: compute terms count operations, as the manual model's do
    Expr correction_bound; // Weights::correction_bound: > 1 bounds the learned multipliers
};

// prediction(n): the cost of state n in model units (ns). Unscheduled stages have all-zero
// features, which make every term zero, so they cost nothing.
Func forward(const NetworkInputs &in, const Weights &w) {
    Var c("c"), f("f"), n("n"), s("s");
    RDom r_pipeline(0, kPipelineFeatures, "r_pipeline"), r_schedule(0, kScheduleFeatures, "r_schedule");
    RDom r_head1(0, kHead1Channels, "r_head1"), r_head2(0, kHead2Channels, "r_head2");
    RDom r_stages(0, in.num_stages, "r_stages");

    // Head 1: algorithm features through positive weights, so that more operations never
    // predict a lower cost (§4.2).
    Func positive_filter("positive_filter");
    positive_filter(c, f) = 1.0f / (1.0f + exp(-w[Tensor::Head1Filter](c, f)));
    Func head1("head1");
    head1(c, s) = w[Tensor::Head1Bias](c);
    head1(c, s) +=
        positive_filter(c, r_pipeline) * in.pipeline_features(r_pipeline, s) * fan_in_scale(kPipelineFeatures);

    // Head 2: schedule features, log-transformed (their range spans many orders of magnitude).
    Func log_features("log_features");
    log_features(n, f, s) = log(1.0f + max(in.schedule_features(n, f, s), 0.0f));
    Func head2_conv("head2_conv");
    head2_conv(n, c, s) = w[Tensor::Head2Bias](c);
    head2_conv(n, c, s) +=
        w[Tensor::Head2Filter](c, r_schedule) * log_features(n, r_schedule, s) * fan_in_scale(kScheduleFeatures);
    Func head2("head2");
    head2(n, c, s) = max(head2_conv(n, c, s), 0.0f);

    // The stacked embedding through the last linear layer; head 1's part is per stage only.
    Func head1_part("head1_part");
    head1_part(c, s) = w[Tensor::Bias1](c);
    head1_part(c, s) += w[Tensor::Filter1](c, r_head1) * head1(r_head1, s) * fan_in_scale(kEmbedding);
    Func conv1("conv1");
    conv1(n, c, s) = head1_part(c, s);
    conv1(n, c, s) += w[Tensor::Filter1](c, kHead1Channels + r_head2) * head2(n, r_head2, s) * fan_in_scale(kEmbedding);
    // The learned multiplier of each term's coefficient: unbounded, or smoothly within the trust
    // region [1/B, B] around the manual model (slope 1 at the manual model's multiplier 1).
    const Expr log_bound = log(max(in.correction_bound, 1.0001f)); // unused when unbounded
    const Expr bounded = exp(log_bound * tanh((conv1(n, c, s) - 1.0f) / log_bound));
    Func coefficient("coefficient");
    coefficient(n, c, s) =
        select(in.correction_bound > 1.0f, bounded, max(conv1(n, c, s), 0.0f)) * exp(w[Tensor::TermLogScale](c));

    // The hand-designed terms, compute and load terms spread over the cores the stage uses.
    const featurize::CostTermInputs<Expr> x = featurize::cost_term_inputs<Expr>(
        [&](int i) { return in.schedule_features(n, i, s); }, in.is_output(s), cast<float>(in.num_cores));
    const std::array<Expr, kTerms> terms = featurize::cost_terms(x);
    const Expr speedup = featurize::parallel_speedup(x);
    const Expr ops = featurize::ops_per_point<Expr>([&](int i) { return in.pipeline_features(i, s); });
    const Expr compute_scale = select(in.compute_per_op != 0, ops, 1.0f);
    Expr cost = 0.0f;
    for (int i = 0; i < kTerms; i++) {
        Expr term = featurize::is_parallel_cost_term(i) ? terms[size_t(i)] / speedup : terms[size_t(i)];
        if (i < featurize::kNumComputeCostTerms) term *= compute_scale;
        cost += coefficient(n, i, s) * term;
    }
    Func stage_cost("stage_cost");
    stage_cost(n, s) = cost;
    Func prediction("prediction");
    prediction(n) = 0.0f;
    prediction(n) += stage_cost(n, r_stages);
    return prediction;
}

// Every Func the outputs need computed at root, each pure loop over the batch (or channels)
// vectorized: the tensors are small, and this keeps the gradient pipeline's scatter-style
// adjoints simple and fast.
void schedule_at_root(const std::vector<Func> &outputs, const Target &target) {
    const int lanes = target.natural_vector_size<float>();
    std::map<std::string, Internal::Function> env;
    for (const Func &out : outputs) {
        for (const auto &kv : Internal::find_transitive_calls(out.function())) env.emplace(kv.first, kv.second);
        env.emplace(out.name(), out.function());
    }
    for (auto &kv : env) {
        Func func(kv.second);
        func.compute_root();
        if (func.dimensions() == 0) continue;
        const std::string inner = func.args()[0].name();
        func.vectorize(func.args()[0], lanes, TailStrategy::GuardWithIf);
        for (int u = 0; u < func.num_update_definitions(); u++) {
            const std::vector<Expr> args = func.update_args(u);
            const Internal::Variable *v = args[0].as<Internal::Variable>();
            if (v && v->name == inner) {
                func.update(u).vectorize(Var(inner), lanes, TailStrategy::GuardWithIf);
            } else {
                func.update(u).unscheduled(); // scatters (gradients of calls at fixed indices)
            }
        }
    }
}

// The inputs both pipelines share. A weight tensor has `state_dims` more dimensions than its own:
// none for inference, one (the Adam state index) for training.
template<typename Derived, int state_dims>
class NetworkGenerator : public Generator<Derived> {
public:
    GeneratorInput<Buffer<float>> pipeline_features{"pipeline_features", 2};
    GeneratorInput<Buffer<float>> schedule_features{"schedule_features", 3};
    GeneratorInput<Buffer<float>> is_output{"is_output", 1};
    GeneratorInput<int> num_cores{"num_cores", 1, 1, 1024};
    GeneratorInput<int> compute_per_op{"compute_per_op", 1, 0, 1};
    GeneratorInput<float> correction_bound{"correction_bound", 0.0f};
    GeneratorInput<Buffer<float>> head1_filter{"head1_filter", 2 + state_dims};
    GeneratorInput<Buffer<float>> head1_bias{"head1_bias", 1 + state_dims};
    GeneratorInput<Buffer<float>> head2_filter{"head2_filter", 2 + state_dims};
    GeneratorInput<Buffer<float>> head2_bias{"head2_bias", 1 + state_dims};
    GeneratorInput<Buffer<float>> filter1{"filter1", 2 + state_dims};
    GeneratorInput<Buffer<float>> bias1{"bias1", 1 + state_dims};
    GeneratorInput<Buffer<float>> term_log_scale{"term_log_scale", 1 + state_dims};

protected:
    NetworkInputs network_inputs() {
        return {pipeline_features, schedule_features, is_output, num_cores, pipeline_features.dim(1).extent(),
                compute_per_op,    correction_bound};
    }
};

class CostModelGenerator : public NetworkGenerator<CostModelGenerator, 0> {
public:
    Output<Buffer<float>> prediction{"prediction", 1};

    void generate() {
        Weights w;
        for (auto *b : {&head1_filter, &head1_bias, &head2_filter, &head2_bias, &filter1, &bias1, &term_log_scale}) {
            w.tensors.emplace_back(*b);
        }
        prediction = forward(network_inputs(), w);
        schedule_at_root({prediction}, get_target());
    }
};

// Inputs as the inference pipeline's, plus per weight tensor its Adam state: (..., k) with k = 0
// the value, 1 the first moment, 2 the second. Outputs the next state in the same layout.
class TrainCostModelGenerator : public NetworkGenerator<TrainCostModelGenerator, 1> {
public:
    Input<Buffer<float>> true_runtime{"true_runtime", 1};   // (state), model units
    Input<Buffer<float>> sample_weight{"sample_weight", 1}; // (state)
    Input<int> reference{"reference"};                      // the batch's fastest measured state
    Input<int> loss_kind{"loss_kind"};                      // LossKind
    Input<float> learning_rate{"learning_rate"};
    Input<int> timestep{"timestep"}; // Adam's t, from 1

    Output<Buffer<float>> loss{"loss", 0};
    Output<Buffer<float>> prediction{"prediction", 1};
    Output<Buffer<float>> head1_filter_out{"head1_filter_out", 3}, head1_bias_out{"head1_bias_out", 2};
    Output<Buffer<float>> head2_filter_out{"head2_filter_out", 3}, head2_bias_out{"head2_bias_out", 2};
    Output<Buffer<float>> filter1_out{"filter1_out", 3}, bias1_out{"bias1_out", 2};
    Output<Buffer<float>> term_log_scale_out{"term_log_scale_out", 2};

    void generate() {
        const std::vector<Input<Buffer<float>> *> states = {&head1_filter, &head2_filter, &filter1,       &head1_bias,
                                                            &head2_bias,   &bias1,        &term_log_scale};
        const std::vector<Output<Buffer<float>> *> next = {&head1_filter_out,  &head2_filter_out, &filter1_out,
                                                           &head1_bias_out,    &head2_bias_out,   &bias1_out,
                                                           &term_log_scale_out};
        const std::vector<Tensor> order = {Tensor::Head1Filter, Tensor::Head2Filter, Tensor::Filter1,
                                           Tensor::Head1Bias,   Tensor::Head2Bias,   Tensor::Bias1,
                                           Tensor::TermLogScale};
        Var a("a"), b("b"), k("k");
        Weights w;
        w.tensors.resize(kNumTensors);
        for (size_t i = 0; i < states.size(); i++) {
            Func value(std::string(tensor_shapes()[size_t(order[i])].name) + "_value");
            if (states[i]->dimensions() == 3) {
                value(a, b) = (*states[i])(a, b, 0);
            } else {
                value(a) = (*states[i])(a, 0);
            }
            w.tensors[size_t(order[i])] = value;
        }
        Func predicted = forward(network_inputs(), w);

        Var n("n");
        const Expr p = max(predicted(n), 1e-6f), m = true_runtime(n);
        const Expr p_ref = max(predicted(reference), 1e-6f), m_ref = true_runtime(reference);
        const Expr log_ratio = log(p / m);
        const Expr throughput_error =
            (p_ref / p - m_ref / m) * (p_ref / p - m_ref / m) + kScaleWeight * log_ratio * log_ratio;
        const Expr log_error = abs(log_ratio);
        const Expr batch = true_runtime.dim(0).extent();
        RDom r_pair(0, batch, "r_pair");
        const Expr measured_gap = log(true_runtime(r_pair)) - log(m); // > 0: n is the faster
        const Expr predicted_gap = log(max(predicted(r_pair), 1e-6f)) - log(p);
        const Expr z = -kPairSharpness * predicted_gap * select(measured_gap > 0, 1.0f, measured_gap < 0, -1.0f, 0.0f);
        const Expr softplus = max(z, 0.0f) + log(1.0f + exp(-abs(z)));
        Func pair_error("pair_error");
        pair_error(n) = 0.0f;
        pair_error(n) += min(abs(measured_gap) / kPairSaturation, 1.0f) * softplus;
        const Expr ranking_error = pair_error(n) / cast<float>(batch) + kScaleWeight * log_ratio * log_ratio;
        Func error("error");
        error(n) = sample_weight(n) * select(loss_kind == int(LossKind::Throughput), throughput_error,
                                             loss_kind == int(LossKind::LogRatio), log_error, ranking_error);
        RDom r_batch(0, batch, "r_batch");
        Func total("total");
        total() = 0.0f;
        total() += error(r_batch) / cast<float>(batch);

        const Derivative d = propagate_adjoints(total);
        const Expr t = cast<float>(timestep);
        const Expr step = learning_rate * sqrt(1.0f - pow(kAdamBeta2, t)) / (1.0f - pow(kAdamBeta1, t));
        std::vector<Func> outs = {total, predicted};
        for (size_t i = 0; i < states.size(); i++) {
            const Func grad = d(w.tensors[size_t(order[i])]);
            const bool matrix = states[i]->dimensions() == 3;
            auto in_state = [&](int kk) { return matrix ? (*states[i])(a, b, kk) : (*states[i])(a, kk); };
            const Expr g = matrix ? grad(a, b) : grad(a);
            const Expr m1 = kAdamBeta1 * in_state(1) + (1 - kAdamBeta1) * g;
            const Expr m2 = kAdamBeta2 * in_state(2) + (1 - kAdamBeta2) * g * g;
            const Expr updated = in_state(0) - step * m1 / (sqrt(m2) + kAdamEpsilon);
            Func state(std::string(tensor_shapes()[size_t(order[i])].name) + "_next");
            if (matrix) {
                state(a, b, k) = select(k == 0, updated, k == 1, m1, m2);
            } else {
                state(a, k) = select(k == 0, updated, k == 1, m1, m2);
            }
            *next[i] = state;
            outs.push_back(state);
        }
        loss = total;
        prediction = predicted;
        schedule_at_root(outs, get_target());
    }
};

} // namespace
} // namespace schedforge::trainer

HALIDE_REGISTER_GENERATOR(schedforge::trainer::CostModelGenerator, schedforge_cost_model)
HALIDE_REGISTER_GENERATOR(schedforge::trainer::TrainCostModelGenerator, schedforge_train_cost_model)
