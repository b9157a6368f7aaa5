// Agreement between the symbolic schedule features and what Halide generates (LoweredStats):
// the check that the featurizer models real schedules. Per counting feature it tallies how many
// stages agree within a tolerance, how many agree exactly, and how many agree exactly among
// schedules without loop tails (every split divides its loop), where the model is exact.
#pragma once

#include "featurize/loop_nest.h"
#include "featurize/lowered_stats.h"
#include "featurize/schedule_features.h"

#include <cstdint>
#include <string>
#include <vector>

namespace schedforge::featurize {

struct FeatureAgreement {
    std::string feature;
    int64_t compared = 0, within = 0, exact = 0;
    int64_t compared_without_tails = 0, exact_without_tails = 0;
    double worst_ratio = 1;    // predicted / measured furthest from 1
    std::string worst_example; // where it happened
    double within_fraction() const { return compared ? double(within) / double(compared) : 1; }
};

// One comparison outside the tolerance, for finding out why.
struct Disagreement {
    std::string label, stage, feature;
    double predicted = 0, measured = 0;
    bool tails = false; // the schedule has loop tails
    std::string site;   // where the stage's Func is computed ("root", "at f.update(0) level 1")
};

struct AgreementReport {
    double tolerance = 0.05;
    std::vector<Disagreement> disagreements; // every comparison outside the tolerance
    int64_t schedules = 0, stages = 0;
    int64_t unknown = 0;                    // comparisons skipped: the oracle could not measure them
    std::vector<FeatureAgreement> features; // the counting features, in ScheduleFeatures order

    explicit AgreementReport(double tolerance = 0.05);
    // Compares one applied schedule; `label` names it in worst_example.
    void add(const FunctionDAG &dag, const LoopNest &nest, const std::vector<StageFeatures> &predicted,
             const LoweredStats &measured, const std::string &label);
    const FeatureAgreement &feature(const std::string &name) const;
};

// Whether some split of the schedule leaves a partial tile (a loop tail).
bool has_loop_tails(const FunctionDAG &dag, const LoopNest &nest);

} // namespace schedforge::featurize
