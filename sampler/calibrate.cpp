#include "sampler/calibrate.h"

#include "common/errors.h"
#include "sampler/cost_model.h"

#include <algorithm>
#include <cmath>

namespace schedforge::sampler {

namespace sf = schedforge::featurize;
namespace tr = schedforge::trainer;

namespace {

constexpr int kTerms = sf::kNumCostTerms;
constexpr double kNanoseconds = 1e-9; // coefficients are nanoseconds per unit

// F_s: the factors of every stage of schedule `s`, summed (stages without features are absent).
Coefficients schedule_factors(const tr::TrainingPipeline &p, size_t s) {
    Coefficients total{};
    const std::vector<float> &rows = p.schedule_features[s];
    for (int st = 0; st < p.input.num_stages; st++) {
        const float *row = &rows[size_t(st) * tr::kScheduleFeatures];
        if (std::all_of(row, row + tr::kScheduleFeatures, [](float v) { return v == 0; })) continue;
        const float *pf = &p.input.pipeline_features[size_t(st) * tr::kPipelineFeatures];
        const sf::CostTermInputs<double> x = sf::cost_term_inputs<double>(
            [&](int i) { return double(row[i]); }, double(p.input.is_output[size_t(st)]), double(p.input.num_cores));
        const Coefficients f = manual_cost_factors(x, ops_per_point([&](int i) { return double(pf[i]); }));
        for (int i = 0; i < kTerms; i++) total[size_t(i)] += f[size_t(i)];
    }
    return total;
}

double dot(const Coefficients &c, const Coefficients &f) {
    double v = 0;
    for (int i = 0; i < kTerms; i++) v += c[size_t(i)] * f[size_t(i)];
    return v;
}

} // namespace

double manual_prediction(const tr::TrainingPipeline &p, size_t s, const Coefficients &c) {
    return dot(c, schedule_factors(p, s)) * kNanoseconds;
}

tr::Metrics manual_metrics(const tr::TrainingData &data, const Coefficients &c) {
    std::vector<tr::PipelinePredictions> all;
    for (const tr::TrainingPipeline &p : data.pipelines) {
        tr::PipelinePredictions pp;
        for (size_t s = 0; s < p.runtimes.size(); s++) {
            pp.predicted.push_back(std::max(manual_prediction(p, s, c), 1e-15));
            pp.measured.push_back(p.runtimes[s]);
        }
        all.push_back(std::move(pp));
    }
    return tr::compute_metrics(all, tr::LossKind::Throughput);
}

Coefficients calibrate(const tr::TrainingData &data, const Coefficients &start, const CalibrationOptions &options) {
    // One row per schedule: its factors (scaled to coefficients relative to `start`), its runtime
    // in nanoseconds, and its pipeline's weight.
    struct Row {
        Coefficients a;
        double runtime = 0, weight = 0;
    };
    std::vector<Row> rows;
    Coefficients scale{};
    for (int i = 0; i < kTerms; i++) scale[size_t(i)] = start[size_t(i)] > 0 ? start[size_t(i)] : 0;
    for (const tr::TrainingPipeline &p : data.pipelines) {
        for (size_t s = 0; s < p.runtimes.size(); s++) {
            Row r;
            r.a = schedule_factors(p, s);
            for (int i = 0; i < kTerms; i++) r.a[size_t(i)] *= scale[size_t(i)];
            r.runtime = p.runtimes[s] / kNanoseconds;
            r.weight = 1.0 / double(p.runtimes.size());
            if (r.runtime > 0) rows.push_back(r);
        }
    }
    if (rows.empty()) throw UserError("calibrate: the data holds no ok schedule to fit");
    const double lambda = options.ridge * double(data.pipelines.size());

    Coefficients u; // c_i = u_i * start_i; terms that start at zero stay there
    u.fill(1.0);
    std::vector<double> predicted(rows.size());
    for (size_t k = 0; k < rows.size(); k++) predicted[k] = rows[k].runtime; // first round: relative error
    for (int round = 0; round <= options.reweightings; round++) {
        // Normal equations of sum_k w_k ((a_k . u - M_k) / e_k)^2 + lambda |u - 1|^2, where e_k
        // is the error's scale: sqrt(P_k M_k) (M_k alone in the first round).
        double g[kTerms][kTerms] = {}, h[kTerms] = {};
        for (size_t k = 0; k < rows.size(); k++) {
            const Row &r = rows[k];
            const double e = std::sqrt(std::max(predicted[k], 1e-30) * r.runtime);
            const double w = r.weight / (e * e);
            for (int i = 0; i < kTerms; i++) {
                if (r.a[size_t(i)] == 0) continue;
                h[i] += w * r.a[size_t(i)] * r.runtime;
                for (int j = 0; j < kTerms; j++) g[i][j] += w * r.a[size_t(i)] * r.a[size_t(j)];
            }
        }
        for (int i = 0; i < kTerms; i++) g[i][i] += lambda, h[i] += lambda;
        // Projected coordinate descent: the problem is convex, and 27 unknowns converge in a few
        // thousand sweeps.
        for (int sweep = 0; sweep < 20000; sweep++) {
            double moved = 0;
            for (int i = 0; i < kTerms; i++) {
                if (scale[size_t(i)] == 0) continue;
                double gu = 0;
                for (int j = 0; j < kTerms; j++) gu += g[i][j] * u[size_t(j)];
                const double next = std::max(0.0, u[size_t(i)] + (h[i] - gu) / g[i][i]);
                moved = std::max(moved, std::abs(next - u[size_t(i)]) / std::max(1.0, u[size_t(i)]));
                u[size_t(i)] = next;
            }
            if (moved < 1e-10) break;
        }
        for (size_t k = 0; k < rows.size(); k++) predicted[k] = std::max(dot(u, rows[k].a), 1e-30);
    }
    Coefficients c;
    for (int i = 0; i < kTerms; i++) c[size_t(i)] = u[size_t(i)] * scale[size_t(i)];
    return c;
}

} // namespace schedforge::sampler
