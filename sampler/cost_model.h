// Cost models behind one batched interface: the search hands a batch of states (their per-stage
// schedule features) and gets one predicted cost per state. Only the order of costs matters to
// the search; the manual model's unit is roughly nanoseconds.
//
// ManualCostModel is the paper's Appendix B with hand-set coefficients (no network): the terms
// come from featurize/cost_terms.h, which the learned model (trainer/, later) shares. Where the
// network would predict per-stage coefficients from the features, the manual model derives them
// by hand: compute coefficients scale with the stage's arithmetic per point (its pipeline
// features), and compute and load coefficients shrink with the parallelism the stage runs at
// (up to the core count), since the terms themselves count total work.
#pragma once

#include "featurize/cost_terms.h"
#include "featurize/schedule_features.h"

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace Halide {
struct Target;
}

namespace schedforge::featurize {
class FunctionDAG;
}

namespace schedforge::trainer {
class Model;
struct PipelineInput;
struct Weights;
} // namespace schedforge::trainer

namespace schedforge::sampler {

class CostModel {
public:
    virtual ~CostModel() = default;
    // Called once per pipeline, before any evaluate().
    virtual void set_pipeline(const featurize::FunctionDAG &dag, int cores) = 0;
    // costs[i] = the predicted cost of the state whose stage features are *batch[i]
    // (unscheduled stages cost nothing). Must be safe to call from one thread at a time.
    virtual void evaluate(const std::vector<const std::vector<featurize::StageFeatures> *> &batch,
                          std::vector<double> &costs) = 0;
};

// The factors that multiply each coefficient in a stage's manual cost, cost = sum_i c_i * f_i:
// the Appendix B terms, compute terms (0-3) per operation, compute and load terms divided by the
// stage's parallel speedup. Linear in the coefficients, so `calibrate` fits them to these.
std::array<double, featurize::kNumCostTerms> manual_cost_factors(const featurize::CostTermInputs<double> &x,
                                                                 double ops_per_point);

class ManualCostModel : public CostModel {
public:
    explicit ManualCostModel(const std::array<double, featurize::kNumCostTerms> &coefficients);
    void set_pipeline(const featurize::FunctionDAG &dag, int cores) override;
    void evaluate(const std::vector<const std::vector<featurize::StageFeatures> *> &batch,
                  std::vector<double> &costs) override;
    // One stage's cost and its terms (for reports).
    double stage_cost(const featurize::StageFeatures &s,
                      std::array<double, featurize::kNumCostTerms> *terms = nullptr) const;
    // What each term adds to the stage's cost (coefficient x factor; they sum to stage_cost).
    std::array<double, featurize::kNumCostTerms> stage_contributions(const featurize::StageFeatures &s) const;

private:
    std::array<double, featurize::kNumCostTerms> coefficients_;
    int cores_ = 1;
    std::vector<std::vector<double>> ops_per_point_; // [node][stage], arithmetic from the pipeline features
    std::vector<bool> is_output_;                    // [node]
};

// The learned model (trainer/): the network compiled by Halide, with weights from a file. Stage
// features go in the FunctionDAG's order (node by node, stage by stage), as in the datasets it
// was trained on.
class LearnedCostModel : public CostModel {
public:
    explicit LearnedCostModel(const trainer::Weights &weights);
    ~LearnedCostModel() override;
    void set_pipeline(const featurize::FunctionDAG &dag, int cores) override;
    void evaluate(const std::vector<const std::vector<featurize::StageFeatures> *> &batch,
                  std::vector<double> &costs) override;

private:
    std::unique_ptr<trainer::Model> model_;
    std::unique_ptr<trainer::PipelineInput> pipeline_;
    std::vector<std::vector<int>> row_; // [node][stage] -> feature row
};

// The cost model the options ask for: learned when options.weights names a file (UserError if it
// cannot be used), else the manual model.
std::unique_ptr<CostModel> make_cost_model(const std::string &weights,
                                           const std::array<double, featurize::kNumCostTerms> &coefficients);

} // namespace schedforge::sampler
