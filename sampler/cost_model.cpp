#include "sampler/cost_model.h"

#include "featurize/function_dag.h"
#include "featurize/pipeline_features.h"

#include <algorithm>

namespace schedforge::sampler {

namespace sf = schedforge::featurize;

ManualCostModel::ManualCostModel(const std::array<double, sf::kNumCostTerms> &coefficients)
    : coefficients_(coefficients) {}

void ManualCostModel::set_pipeline(const sf::FunctionDAG &dag, int cores) {
    using Op = sf::PipelineFeatures::OpType;
    cores_ = std::max(cores, 1);
    ops_per_point_.assign(dag.nodes.size(), {});
    is_output_.assign(dag.nodes.size(), false);
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        is_output_[n] = dag.nodes[n].is_output;
        for (size_t s = 0; s < dag.nodes[n].stages.size(); s++) {
            const sf::PipelineFeatures pf = sf::compute_pipeline_features(dag, int(n), int(s));
            double ops = 0; // operations that take an instruction: not constants, names or params
            for (int op = 0; op < sf::PipelineFeatures::kNumOps; op++) {
                if (op == int(Op::Const) || op == int(Op::Variable) || op == int(Op::Param)) continue;
                for (int t = 0; t < sf::PipelineFeatures::kNumTypes; t++) ops += double(pf.op_histogram[op][t]);
            }
            ops_per_point_[n].push_back(std::max(ops, 1.0));
        }
    }
}

double ManualCostModel::stage_cost(const sf::StageFeatures &s, std::array<double, sf::kNumCostTerms> *terms) const {
    if (!s.scheduled) return 0;
    const sf::ScheduleFeatures &f = s.features;
    const std::array<double, sf::kNumCostTerms> t =
        sf::cost_terms(sf::cost_term_inputs(f, is_output_[size_t(s.node)], cores_));
    if (terms) *terms = t;
    const double speedup = std::min(std::max(f.inner_parallelism * f.outer_parallelism, 1.0), double(cores_));
    const double ops = ops_per_point_[size_t(s.node)][size_t(s.stage)];
    double cost = 0;
    for (int i = 0; i < sf::kNumCostTerms; i++) {
        double c = coefficients_[size_t(i)];
        if (i <= 3) c *= ops;      // compute terms: per operation
        if (i <= 14) c /= speedup; // compute and loads: spread over the cores used
        cost += c * t[size_t(i)];
    }
    return cost;
}

void ManualCostModel::evaluate(const std::vector<const std::vector<sf::StageFeatures> *> &batch,
                               std::vector<double> &costs) {
    costs.assign(batch.size(), 0);
    for (size_t i = 0; i < batch.size(); i++) {
        for (const sf::StageFeatures &s : *batch[i]) costs[i] += stage_cost(s);
    }
}

} // namespace schedforge::sampler
