#include "sampler/calibrate.h"

#include "common/errors.h"
#include "common/stopwatch.h"
#include "sampler/cost_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <new>
#include <sys/mman.h>
#include <vector>

namespace schedforge::sampler {

namespace sf = schedforge::featurize;
namespace tr = schedforge::trainer;

namespace {

constexpr int kTerms = sf::kNumCostTerms;
constexpr double kNanoseconds = 1e-9; // coefficients are nanoseconds per unit

// Operations per point of each stage of `p` (featurize/cost_terms.h's ops_per_point): one per pipeline.
std::vector<double> stage_ops(const tr::TrainingPipeline &p) {
    std::vector<double> ops;
    for (int st = 0; st < p.input.num_stages; st++) {
        const float *pf = &p.input.pipeline_features[size_t(st) * tr::kPipelineFeatures];
        ops.push_back(sf::ops_per_point<double>([&](int i) { return double(pf[i]); }));
    }
    return ops;
}

// F_s: the factors of every stage of schedule `s`, summed (stages without features are absent).
Coefficients factors_of_stage(const tr::TrainingPipeline &p, size_t s, int st, const std::vector<double> &ops) {
    const float *row = &p.schedule_features[s][size_t(st) * tr::kScheduleFeatures];
    if (std::all_of(row, row + tr::kScheduleFeatures, [](float v) { return v == 0; })) return Coefficients{};
    const sf::CostTermInputs<double> x = sf::cost_term_inputs<double>(
        [&](int i) { return double(row[i]); }, double(p.input.is_output[size_t(st)]), double(p.input.num_cores));
    return manual_cost_factors(x, ops[size_t(st)]);
}

Coefficients schedule_factors(const tr::TrainingPipeline &p, size_t s, const std::vector<double> &ops) {
    Coefficients total{};
    for (int st = 0; st < p.input.num_stages; st++) {
        const Coefficients f = factors_of_stage(p, s, st, ops);
        for (int i = 0; i < kTerms; i++) total[size_t(i)] += f[size_t(i)];
    }
    return total;
}

double dot(const Coefficients &c, const Coefficients &f) {
    double v = 0;
    for (int i = 0; i < kTerms; i++) v += c[size_t(i)] * f[size_t(i)];
    return v;
}

// One schedule of the fit: its factors (scaled to coefficients relative to the start), its
// runtime in nanoseconds, its pipeline and that pipeline's weight.
struct Row {
    Coefficients a;
    double fixed = 0; // the cost of the terms held fixed, in nanoseconds
    double runtime = 0, weight = 0;
    size_t pipeline = 0;
};

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// Refines `u` (coefficients relative to the start) for ranking: Adam on log u of the mean, over
// pipelines, of a logistic loss on every pair of schedules whose runtimes differ by more than 5%
// (weighted by how much they differ, up to e), plus the squared log error that keeps the scale,
// plus a ridge on log u. Least squares fits the runtimes' magnitudes; this fits their order
// within a pipeline, which is what the search uses.
void refine_for_ranking(const std::vector<Row> &rows, const Coefficients &scale, const CalibrationOptions &options,
                        Coefficients &u) {
    struct Pair {
        size_t slower, faster;
        double weight;
    };
    std::vector<Pair> pairs;
    size_t pipelines = 0;
    std::vector<double> pair_count; // per pipeline, to weigh pipelines equally
    for (size_t i = 0; i < rows.size(); i++) {
        pipelines = std::max(pipelines, rows[i].pipeline + 1);
        for (size_t j = 0; j < rows.size(); j++) {
            if (rows[j].pipeline != rows[i].pipeline) continue;
            const double gap = std::log(rows[i].runtime / rows[j].runtime);
            if (gap > std::log(1.05)) pairs.push_back({i, j, std::min(gap, 1.0)});
        }
    }
    pair_count.assign(pipelines, 0);
    for (const Pair &p : pairs) pair_count[rows[p.slower].pipeline] += 1;

    constexpr double kTemperature = 0.2, kLearningRate = 0.02, kBeta1 = 0.9, kBeta2 = 0.999;
    const double scale_weight = 0.1, ridge = options.ridge;
    std::array<double, kTerms> theta{}, m{}, v{};
    for (int i = 0; i < kTerms; i++) theta[size_t(i)] = std::log(std::max(u[size_t(i)], 1e-3));
    std::vector<double> predicted(rows.size()), grad_log_p(rows.size());
    for (int step = 1; step <= options.ranking_steps; step++) {
        Coefficients e;
        for (int i = 0; i < kTerms; i++) e[size_t(i)] = scale[size_t(i)] > 0 ? std::exp(theta[size_t(i)]) : 0;
        for (size_t k = 0; k < rows.size(); k++) {
            predicted[k] = std::max(rows[k].fixed + dot(e, rows[k].a), 1e-30);
            // d/dlog P of the scale term: mean over the pipeline's schedules
            grad_log_p[k] = scale_weight * 2 * std::log(predicted[k] / rows[k].runtime) * rows[k].weight;
        }
        for (const Pair &p : pairs) {
            const double d = std::log(predicted[p.slower] / predicted[p.faster]) / kTemperature;
            const double g = -sigmoid(-d) / kTemperature * p.weight / pair_count[rows[p.slower].pipeline];
            grad_log_p[p.slower] += g;
            grad_log_p[p.faster] -= g;
        }
        for (int i = 0; i < kTerms; i++) {
            if (scale[size_t(i)] == 0) continue;
            double g = 2 * ridge * theta[size_t(i)];
            for (size_t k = 0; k < rows.size(); k++)
                g += grad_log_p[k] * rows[k].a[size_t(i)] * e[size_t(i)] / predicted[k];
            m[size_t(i)] = kBeta1 * m[size_t(i)] + (1 - kBeta1) * g;
            v[size_t(i)] = kBeta2 * v[size_t(i)] + (1 - kBeta2) * g * g;
            const double mh = m[size_t(i)] / (1 - std::pow(kBeta1, step));
            const double vh = v[size_t(i)] / (1 - std::pow(kBeta2, step));
            theta[size_t(i)] -= kLearningRate * mh / (std::sqrt(vh) + 1e-12);
        }
    }
    for (int i = 0; i < kTerms; i++) u[size_t(i)] = scale[size_t(i)] > 0 ? std::exp(theta[size_t(i)]) : 0;
}

// `c` with the held coefficients (those of `held` that are not negative) put in.
Coefficients with_held(Coefficients c, const Coefficients &held) {
    for (int i = 0; i < kTerms; i++) {
        if (held[size_t(i)] >= 0) c[size_t(i)] = held[size_t(i)];
    }
    return c;
}

} // namespace

double measure_page_fault_cost() {
    // A pipeline's live set: four intermediates of 16 MiB, mapped fresh, written and returned per
    // run, as glibc does with what it maps or trims and grows again (heap_bytes_refaulted); against
    // the same writes to memory kept between runs. Mapped directly: the programs' malloc is
    // jemalloc, which keeps freed pages for reuse, so that a probe through it timed fewer faults
    // (0.29-0.48 ns a byte across runs on the Emerald Rapids kind, against 0.48 for fresh pages).
    constexpr size_t kBuffers = 4, kBytes = size_t(16) << 20, kRuns = 5;
    auto write = [&](char *p) {
        for (size_t i = 0; i < kBytes; i += 64) p[i] = char(i);
    };
    double fresh = 1e30, reused = 1e30;
    for (size_t run = 0; run < kRuns; run++) {
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<char *> live;
        for (size_t b = 0; b < kBuffers; b++) {
            void *p = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) throw std::bad_alloc();
            live.push_back(static_cast<char *>(p));
            write(live.back());
        }
        for (char *p : live) munmap(p, kBytes);
        fresh = std::min(fresh, seconds_since(t0));
    }
    std::vector<std::vector<char>> kept(kBuffers, std::vector<char>(kBytes));
    for (size_t run = 0; run < kRuns; run++) {
        const auto t0 = std::chrono::steady_clock::now();
        for (std::vector<char> &k : kept) write(k.data());
        reused = std::min(reused, seconds_since(t0));
    }
    volatile char sink = kept[0][64];
    (void)sink;
    return std::max(0.0, fresh - reused) / double(kBuffers * kBytes) / kNanoseconds;
}

double measure_library_call_cost() {
    constexpr int kArguments = 4096, kRepeats = 200;
    std::vector<float> x(kArguments), y(kArguments);
    for (int i = 0; i < kArguments; i++) x[size_t(i)] = float((i + 0.5) * 2 * M_PI / kArguments);
    float (*volatile sin_call)(float) = ::sinf; // a call per argument, as Halide's runtime makes
    double best = 1e30;
    for (int r = 0; r < kRepeats; r++) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kArguments; i++) y[size_t(i)] = sin_call(x[size_t(i)]);
        best = std::min(best, seconds_since(t0));
    }
    volatile float sink = y[1];
    (void)sink;
    return best / kArguments / kNanoseconds;
}

double manual_prediction(const tr::TrainingPipeline &p, size_t s, const Coefficients &c) {
    return dot(c, schedule_factors(p, s, stage_ops(p))) * kNanoseconds;
}

std::vector<Coefficients> stage_factors(const tr::TrainingPipeline &p, size_t s) {
    const std::vector<double> ops = stage_ops(p);
    std::vector<Coefficients> stages;
    for (int st = 0; st < p.input.num_stages; st++) stages.push_back(factors_of_stage(p, s, st, ops));
    return stages;
}

tr::Metrics manual_metrics(const tr::TrainingData &data, const Coefficients &c) {
    std::vector<tr::PipelinePredictions> all;
    for (const tr::TrainingPipeline &p : data.pipelines) {
        tr::PipelinePredictions pp;
        const std::vector<double> ops = stage_ops(p);
        for (size_t s = 0; s < p.runtimes.size(); s++) {
            pp.predicted.push_back(std::max(dot(c, schedule_factors(p, s, ops)) * kNanoseconds, 1e-15));
            pp.measured.push_back(p.runtimes[s]);
        }
        all.push_back(std::move(pp));
    }
    return tr::compute_metrics(all, tr::LossKind::Throughput);
}

Coefficients calibrate(const tr::TrainingData &data, const Coefficients &start, const CalibrationOptions &options) {
    // One row per schedule: its factors (scaled to coefficients relative to `start`), its runtime
    // in nanoseconds, and its pipeline's weight.
    std::vector<Row> rows;
    Coefficients fixed; // < 0: fitted
    fixed.fill(-1);
    fixed[size_t(featurize::kPageFaultTerm)] = options.page_fault_cost;
    fixed[size_t(featurize::kLibraryCallTerm)] = options.library_call_cost;
    if (!options.fit) return with_held(start, fixed);
    Coefficients scale{};
    for (int i = 0; i < kTerms; i++) {
        scale[size_t(i)] = start[size_t(i)] > 0 && fixed[size_t(i)] < 0 ? start[size_t(i)] : 0;
    }
    for (size_t pi = 0; pi < data.pipelines.size(); pi++) {
        const tr::TrainingPipeline &p = data.pipelines[pi];
        const std::vector<double> ops = stage_ops(p);
        for (size_t s = 0; s < p.runtimes.size(); s++) {
            Row r;
            r.pipeline = pi;
            r.a = schedule_factors(p, s, ops);
            for (int i = 0; i < kTerms; i++) {
                if (fixed[size_t(i)] >= 0) r.fixed += r.a[size_t(i)] * fixed[size_t(i)];
            }
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
                h[i] += w * r.a[size_t(i)] * (r.runtime - r.fixed);
                for (int j = 0; j < kTerms; j++) g[i][j] += w * r.a[size_t(i)] * r.a[size_t(j)];
            }
        }
        for (int i = 0; i < kTerms; i++) g[i][i] += lambda, h[i] += lambda;
        // Projected coordinate descent: the problem is convex, and 31 unknowns converge in a few
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
        for (size_t k = 0; k < rows.size(); k++) predicted[k] = std::max(rows[k].fixed + dot(u, rows[k].a), 1e-30);
    }
    if (options.ranking_steps > 0) refine_for_ranking(rows, scale, options, u);
    Coefficients c;
    for (int i = 0; i < kTerms; i++) c[size_t(i)] = u[size_t(i)] * scale[size_t(i)];
    return with_held(c, fixed);
}

} // namespace schedforge::sampler
