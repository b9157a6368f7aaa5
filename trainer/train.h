// The training loop (train-cost-model's engine): the source paper's §4.2 and §5. Each step is
// one batch of up to batch_size schedules of one pipeline, through the Halide training pipeline
// (forward, backward, Adam). Pipelines and schedules are shuffled per epoch from the seed, so a
// run is reproducible. After every epoch the model predicts every validation schedule and the
// metrics are computed (epoch 0: before any step).
#pragma once

#include "trainer/metrics.h"
#include "trainer/model.h"
#include "trainer/training_data.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace schedforge::trainer {

struct EpochReport {
    int epoch = 0;
    double seconds = 0;           // training steps only (not the evaluation)
    size_t schedules_trained = 0; // states through the training pipeline this epoch
    // train: of the predictions each step made before its update (epoch 0: of the initial
    // weights); validation: of the weights at the end of the epoch.
    Metrics train, validation;
};

struct TrainOptions {
    int epochs = 40;
    float learning_rate = 1e-3f;
    int batch_size = 32;
    LossKind loss = LossKind::Throughput;
    uint64_t seed = 0;
    std::function<void(size_t done, size_t total)> on_batch; // progress within an epoch
    std::function<void(const EpochReport &)> on_epoch;
};

struct TrainResult {
    std::vector<EpochReport> epochs; // epoch 0 first
    int best_epoch = 0;              // lowest validation loss (training loss without validation data)
    Weights best_weights;
    double train_seconds = 0;
    size_t schedules_trained = 0;
};

TrainResult train(Model &model, const TrainingData &train_data, const TrainingData &validation,
                  const TrainOptions &options);

// Every schedule's predicted and measured runtime (both in model units), per pipeline.
std::vector<PipelinePredictions> predict_all(const Model &model, const TrainingData &data);

// The loss weights training uses for each pipeline's schedules (all 1 for the Throughput loss).
std::vector<double> loss_weights(const TrainingPipeline &pipeline, const std::vector<size_t> &schedules, LossKind kind);

} // namespace schedforge::trainer
