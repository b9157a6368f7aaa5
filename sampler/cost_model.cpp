#include "sampler/cost_model.h"

#include "featurize/function_dag.h"
#include "featurize/pipeline_features.h"
#include "trainer/model.h"

#include <algorithm>

namespace schedforge::sampler {

namespace sf = schedforge::featurize;

ManualCostModel::ManualCostModel(const std::array<double, sf::kNumCostTerms> &coefficients)
    : coefficients_(coefficients) {}

std::array<double, sf::kNumCostTerms> manual_cost_factors(const sf::CostTermInputs<double> &x, double ops) {
    std::array<double, sf::kNumCostTerms> f = sf::cost_terms(x);
    const double speedup = sf::parallel_speedup(x);
    for (int i = 0; i < sf::kNumCostTerms; i++) {
        if (i < sf::kNumComputeCostTerms) f[size_t(i)] *= ops;     // compute terms: per operation
        if (sf::is_parallel_cost_term(i)) f[size_t(i)] /= speedup; // compute and loads: spread over the cores used
    }
    return f;
}

void ManualCostModel::set_pipeline(const sf::FunctionDAG &dag, int cores) {
    cores_ = std::max(cores, 1);
    ops_per_point_.assign(dag.nodes.size(), {});
    is_output_.assign(dag.nodes.size(), false);
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        is_output_[n] = dag.nodes[n].is_output;
        for (size_t s = 0; s < dag.nodes[n].stages.size(); s++) {
            const auto values = sf::compute_pipeline_features(dag, int(n), int(s)).values();
            ops_per_point_[n].push_back(sf::ops_per_point<double>([&](int i) { return values[size_t(i)]; }));
        }
    }
}

double ManualCostModel::stage_cost(const sf::StageFeatures &s, std::array<double, sf::kNumCostTerms> *terms) const {
    if (!s.scheduled) return 0;
    if (terms) *terms = sf::cost_terms(sf::cost_term_inputs(s.features, is_output_[size_t(s.node)], cores_));
    double cost = 0;
    for (double c : stage_contributions(s)) cost += c;
    return cost;
}

std::array<double, sf::kNumCostTerms> ManualCostModel::stage_contributions(const sf::StageFeatures &s) const {
    std::array<double, sf::kNumCostTerms> c{};
    if (!s.scheduled) return c;
    const sf::CostTermInputs<double> x = sf::cost_term_inputs(s.features, is_output_[size_t(s.node)], cores_);
    const std::array<double, sf::kNumCostTerms> f =
        manual_cost_factors(x, ops_per_point_[size_t(s.node)][size_t(s.stage)]);
    for (int i = 0; i < sf::kNumCostTerms; i++) c[size_t(i)] = coefficients_[size_t(i)] * f[size_t(i)];
    return c;
}

void ManualCostModel::evaluate(const std::vector<const std::vector<sf::StageFeatures> *> &batch,
                               std::vector<double> &costs) {
    costs.assign(batch.size(), 0);
    for (size_t i = 0; i < batch.size(); i++) {
        for (const sf::StageFeatures &s : *batch[i]) costs[i] += stage_cost(s);
    }
}

LearnedCostModel::LearnedCostModel(const trainer::Weights &weights)
    : model_(std::make_unique<trainer::Model>(weights)), pipeline_(std::make_unique<trainer::PipelineInput>()) {}

LearnedCostModel::~LearnedCostModel() = default;

void LearnedCostModel::set_pipeline(const sf::FunctionDAG &dag, int cores) {
    trainer::PipelineInput &p = *pipeline_;
    p = trainer::PipelineInput();
    p.num_cores = std::max(cores, 1);
    row_.assign(dag.nodes.size(), {});
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        for (const sf::Stage &stage : dag.nodes[n].stages) {
            row_[n].push_back(p.num_stages++);
            const auto values = sf::compute_pipeline_features(dag, int(n), stage.index).values();
            p.pipeline_features.insert(p.pipeline_features.end(), values.begin(), values.end());
            p.is_output.push_back(dag.nodes[n].is_output ? 1.0f : 0.0f);
        }
    }
}

void LearnedCostModel::evaluate(const std::vector<const std::vector<sf::StageFeatures> *> &batch,
                                std::vector<double> &costs) {
    costs.assign(batch.size(), 0);
    if (batch.empty() || pipeline_->num_stages == 0) return;
    trainer::StateBatch states;
    states.num_states = int(batch.size());
    const size_t per_state = size_t(pipeline_->num_stages) * trainer::kScheduleFeatures;
    states.schedule_features.assign(batch.size() * per_state, 0.0f);
    for (size_t i = 0; i < batch.size(); i++) {
        for (const sf::StageFeatures &s : *batch[i]) {
            if (!s.scheduled) continue; // all zeros: costs nothing
            float *row = &states.schedule_features[i * per_state + size_t(row_[size_t(s.node)][size_t(s.stage)]) *
                                                                       trainer::kScheduleFeatures];
            for (int f = 0; f < trainer::kScheduleFeatures; f++) row[f] = float(s.features[f]);
        }
    }
    model_->predict(*pipeline_, states, costs);
}

std::unique_ptr<CostModel> make_cost_model(const std::string &weights,
                                           const std::array<double, sf::kNumCostTerms> &coefficients) {
    if (weights.empty()) return std::make_unique<ManualCostModel>(coefficients);
    return std::make_unique<LearnedCostModel>(trainer::Weights::load(weights));
}

} // namespace schedforge::sampler
