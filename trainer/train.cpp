#include "trainer/train.h"

#include "common/rng.h"

#include <algorithm>
#include <chrono>
#include <numeric>

namespace schedforge::trainer {

namespace {

StateBatch make_states(const TrainingPipeline &p, const std::vector<size_t> &schedules) {
    StateBatch b;
    b.num_states = int(schedules.size());
    for (size_t i : schedules) {
        b.schedule_features.insert(b.schedule_features.end(), p.schedule_features[i].begin(),
                                   p.schedule_features[i].end());
    }
    return b;
}

std::vector<size_t> all_schedules(const TrainingPipeline &p) {
    std::vector<size_t> v(p.runtimes.size());
    std::iota(v.begin(), v.end(), size_t(0));
    return v;
}

template<typename T>
void shuffle(std::vector<T> &v, common::Rng &rng) {
    for (size_t i = v.size(); i > 1; i--) std::swap(v[i - 1], v[size_t(rng.uniform_int(0, int64_t(i) - 1))]);
}

// Every pipeline's loss weights over all its schedules: fixed for a run, so computed once.
std::vector<std::vector<double>> all_loss_weights(const TrainingData &data, LossKind kind) {
    std::vector<std::vector<double>> weights;
    for (const TrainingPipeline &p : data.pipelines) weights.push_back(loss_weights(p, all_schedules(p), kind));
    return weights;
}

} // namespace

std::vector<double> loss_weights(const TrainingPipeline &pipeline, const std::vector<size_t> &schedules,
                                 LossKind kind) {
    if (kind != LossKind::LogRatio) return std::vector<double>(schedules.size(), 1.0);
    std::vector<double> runtimes, spread;
    for (size_t i : schedules) runtimes.push_back(pipeline.runtimes[i]), spread.push_back(pipeline.timing_spread[i]);
    return log_ratio_weights(runtimes, spread);
}

std::vector<PipelinePredictions> predict_all(const Model &model, const TrainingData &data) {
    std::vector<PipelinePredictions> out;
    for (const TrainingPipeline &p : data.pipelines) {
        PipelinePredictions pp;
        model.predict(p.input, make_states(p, all_schedules(p)), pp.predicted);
        for (double r : p.runtimes) pp.measured.push_back(r * kSecondsToModelUnits);
        out.push_back(std::move(pp));
    }
    return out;
}

TrainResult train(Model &model, const TrainingData &train_data, const TrainingData &validation,
                  const TrainOptions &options) {
    using Clock = std::chrono::steady_clock;
    TrainResult result;
    const bool has_validation = !validation.pipelines.empty();
    double best_loss = 0;
    const std::vector<std::vector<double>> train_weights = all_loss_weights(train_data, options.loss);
    const std::vector<std::vector<double>> validation_weights = all_loss_weights(validation, options.loss);
    auto report_epoch = [&](EpochReport &r) {
        if (has_validation)
            r.validation = compute_metrics(predict_all(model, validation), options.loss, validation_weights);
        const double loss = has_validation ? r.validation.loss : r.train.loss;
        if (result.epochs.empty() || loss < best_loss) {
            best_loss = loss;
            result.best_epoch = r.epoch;
            result.best_weights = model.weights();
        }
        result.epochs.push_back(r);
        if (options.on_epoch) options.on_epoch(r);
    };
    // Epoch 0 predicts every training schedule; after it, the training metrics come from each
    // step's own forward pass (the predictions just before that step's update, which overwrite
    // these), as trainers usually report them: a second forward pass over the training set would
    // cost about a third of the epoch again.
    std::vector<PipelinePredictions> seen = predict_all(model, train_data);
    EpochReport initial;
    initial.train = compute_metrics(seen, options.loss, train_weights);
    report_epoch(initial);
    std::vector<float> predictions;

    // Batches: each pipeline's schedules shuffled and cut into pieces of at most batch_size (no
    // piece of one: a lone schedule has nothing to be compared with).
    common::Rng rng(common::derive_seed(options.seed, 0x747261696eULL)); // "train"
    for (int epoch = 1; epoch <= options.epochs; epoch++) {
        std::vector<std::pair<size_t, std::vector<size_t>>> batches;
        for (size_t pi = 0; pi < train_data.pipelines.size(); pi++) {
            std::vector<size_t> order = all_schedules(train_data.pipelines[pi]);
            shuffle(order, rng);
            const size_t size = size_t(std::max(options.batch_size, 2));
            const size_t pieces = (order.size() + size - 1) / size;
            for (size_t k = 0; k < pieces; k++) {
                // Even pieces: sizes differ by at most one, so none is a single schedule.
                const size_t begin = order.size() * k / pieces, end = order.size() * (k + 1) / pieces;
                batches.emplace_back(pi, std::vector<size_t>(order.begin() + long(begin), order.begin() + long(end)));
            }
        }
        shuffle(batches, rng);
        EpochReport r;
        r.epoch = epoch;
        const auto start = Clock::now();
        for (size_t bi = 0; bi < batches.size(); bi++) {
            const TrainingPipeline &p = train_data.pipelines[batches[bi].first];
            const std::vector<size_t> &schedules = batches[bi].second;
            TrainingBatch batch;
            batch.states = make_states(p, schedules);
            std::vector<double> runtimes;
            for (size_t i : schedules) runtimes.push_back(p.runtimes[i] * kSecondsToModelUnits);
            batch.runtimes.assign(runtimes.begin(), runtimes.end());
            batch.reference = int(fastest(runtimes));
            for (double w : loss_weights(p, schedules, options.loss)) batch.sample_weights.push_back(float(w));
            model.train_step(p.input, batch, options.loss, options.learning_rate, &predictions);
            for (size_t k = 0; k < schedules.size(); k++)
                seen[batches[bi].first].predicted[schedules[k]] = predictions[k];
            r.schedules_trained += schedules.size();
            if (options.on_batch) options.on_batch(bi + 1, batches.size());
        }
        r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        result.train_seconds += r.seconds;
        result.schedules_trained += r.schedules_trained;
        r.train = compute_metrics(seen, options.loss, train_weights);
        report_epoch(r);
    }
    return result;
}

} // namespace schedforge::trainer
