// Model: the cost model network with its weights, run through the ahead-of-time compiled Halide
// pipelines (trainer/cost_model_generator.cpp): predict() for the search, train_step() (forward,
// backward, Adam) for the trainer. No Halide.h here: only Halide's runtime buffers.
#pragma once

#include "trainer/network_shape.h"
#include "trainer/weights.h"

#include <array>
#include <memory>
#include <vector>

namespace schedforge::trainer {

// What the network knows of one pipeline, the same for all its schedules.
struct PipelineInput {
    int num_stages = 0;
    std::vector<float> pipeline_features; // [stage][kPipelineFeatures]
    std::vector<float> is_output;         // [stage]: 1 for the pipeline's outputs' stages
    int num_cores = 1;                    // cores the schedules run on
};

// A batch of schedules (states) of one pipeline.
struct StateBatch {
    int num_states = 0;
    std::vector<float> schedule_features; // [state][stage][kScheduleFeatures]; zeros: not scheduled
};

// One training batch: states with their measured runtimes.
struct TrainingBatch {
    StateBatch states;
    std::vector<float> runtimes;       // [state], model units (ns)
    std::vector<float> sample_weights; // [state]: 1 for the throughput loss
    int reference = 0;                 // the batch's fastest measured schedule
};

class Model {
public:
    explicit Model(const Weights &weights); // Adam's moments start at zero
    ~Model();
    Model(const Model &) = delete;
    Model &operator=(const Model &) = delete;

    // Predicted costs (model units) of every state in `batch`.
    void predict(const PipelineInput &pipeline, const StateBatch &batch, std::vector<double> &costs) const;

    // One Adam step on one batch; returns the batch's loss (before the step) and its predictions.
    float train_step(const PipelineInput &pipeline, const TrainingBatch &batch, LossKind loss, float learning_rate,
                     std::vector<float> *predictions = nullptr);

    // The current weights (origin and provenance as given to the constructor).
    Weights weights() const;
    int timestep() const { return timestep_; }
    // Adam's first and second moments of a tensor (for tests).
    std::vector<float> moment(Tensor t, int which) const;

    struct Buffers;

private:
    std::unique_ptr<Buffers> buffers_;
    Weights meta_;
    int timestep_ = 0;
};

} // namespace schedforge::trainer
