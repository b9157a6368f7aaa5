// How well predicted runtimes match measured ones, over schedules grouped by pipeline. The
// search only compares schedules of one pipeline, so the ranking metrics are within a pipeline;
// R^2 and the relative error are over all schedules (they need the model's absolute scale too).
#pragma once

#include "trainer/network_shape.h"

#include <string>
#include <vector>

namespace schedforge::trainer {

// One pipeline's schedules: predicted and measured runtimes, in the same unit.
struct PipelinePredictions {
    std::vector<double> predicted, measured;
};

struct Metrics {
    double loss = 0;                // mean per-pipeline loss (loss_for_batch over all its schedules)
    double r2_log = 0;              // R^2 of log(predicted) against log(measured)
    double pairwise_accuracy = 0;   // share of schedule pairs (different runtimes) ordered right
    double kendall_tau = 0;         // Kendall's tau-b within a pipeline, mean over pipelines
    double top1_regret = 0;         // measured runtime of the predicted-best / the best, mean over pipelines
    double mean_relative_error = 0; // mean of |predicted - measured| / measured
    size_t pipelines = 0, schedules = 0;
};

// The training loss of one batch, in double precision (the training pipeline computes the same
// in float): the mean over states of weight * error, with the errors of LossKind and the fastest
// measured schedule as the reference.
double loss_for_batch(const std::vector<double> &predicted, const std::vector<double> &measured,
                      const std::vector<double> &weights, LossKind kind);
// The batch's reference: its fastest measured schedule (the first of equals).
size_t fastest(const std::vector<double> &measured);

// Per-sample weights of the LogRatio loss (Steiner et al. §6.2): the criticality best/runtime
// times a confidence that falls as 1/spread once the timings' relative spread exceeds 1%.
std::vector<double> log_ratio_weights(const std::vector<double> &runtimes, const std::vector<double> &spread);

double r2_of_logs(const std::vector<PipelinePredictions> &pipelines);
// Concordant and discordant pairs within each pipeline (pairs tied in measured runtime skipped).
double pairwise_accuracy(const std::vector<PipelinePredictions> &pipelines);
double kendall_tau_b(const std::vector<double> &predicted, const std::vector<double> &measured);
double top1_regret(const PipelinePredictions &p);
double mean_relative_error(const std::vector<PipelinePredictions> &pipelines);

// Metrics as CSV columns: ",PREFIXloss,PREFIXr2_log,..." and the matching ",value,...".
std::string metrics_csv_columns(const std::string &prefix);
std::string metrics_csv_values(const Metrics &m);

// Everything above; `loss` from the per-pipeline weights (empty: 1 each) and kind.
Metrics compute_metrics(const std::vector<PipelinePredictions> &pipelines, LossKind kind,
                        const std::vector<std::vector<double>> &loss_weights = {});

} // namespace schedforge::trainer
