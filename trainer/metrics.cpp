#include "trainer/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace schedforge::trainer {

size_t fastest(const std::vector<double> &measured) {
    return size_t(std::min_element(measured.begin(), measured.end()) - measured.begin());
}

double loss_for_batch(const std::vector<double> &predicted, const std::vector<double> &measured,
                      const std::vector<double> &weights, LossKind kind) {
    if (predicted.empty()) return 0;
    const size_t ref = fastest(measured);
    const double p_ref = std::max(predicted[ref], 1e-6), m_ref = measured[ref];
    const size_t n = predicted.size();
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        const double p = std::max(predicted[i], 1e-6), m = measured[i];
        const double log_ratio = std::log(p / m);
        double e = std::abs(log_ratio);
        if (kind == LossKind::Throughput) {
            e = (p_ref / p - m_ref / m) * (p_ref / p - m_ref / m) + kScaleWeight * log_ratio * log_ratio;
        } else if (kind == LossKind::Pairwise) {
            double pairs = 0;
            for (size_t j = 0; j < n; j++) {
                const double measured_gap = std::log(measured[j]) - std::log(m);
                const double predicted_gap = std::log(std::max(predicted[j], 1e-6)) - std::log(p);
                const double sign = measured_gap > 0 ? 1 : measured_gap < 0 ? -1 : 0;
                const double z = -kPairSharpness * predicted_gap * sign;
                const double softplus = std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z)));
                pairs += std::min(std::abs(measured_gap) / kPairSaturation, 1.0) * softplus;
            }
            e = pairs / double(n) + kScaleWeight * log_ratio * log_ratio;
        }
        sum += (weights.empty() ? 1.0 : weights[i]) * e;
    }
    return sum / double(predicted.size());
}

std::vector<double> log_ratio_weights(const std::vector<double> &runtimes, const std::vector<double> &spread) {
    const double best = runtimes.empty() ? 0 : *std::min_element(runtimes.begin(), runtimes.end());
    std::vector<double> w(runtimes.size());
    for (size_t i = 0; i < runtimes.size(); i++) {
        const double criticality = best / runtimes[i];
        const double confidence = 0.01 / std::max(spread.empty() ? 0.0 : spread[i], 0.01);
        w[i] = criticality * confidence;
    }
    return w;
}

double r2_of_logs(const std::vector<PipelinePredictions> &pipelines) {
    double mean = 0, n = 0;
    for (const auto &p : pipelines) {
        for (double m : p.measured) mean += std::log(m), n++;
    }
    if (n < 2) return 0;
    mean /= n;
    double residual = 0, total = 0;
    for (const auto &p : pipelines) {
        for (size_t i = 0; i < p.measured.size(); i++) {
            const double y = std::log(p.measured[i]), yhat = std::log(std::max(p.predicted[i], 1e-300));
            residual += (y - yhat) * (y - yhat);
            total += (y - mean) * (y - mean);
        }
    }
    return total > 0 ? 1 - residual / total : 0;
}

double pairwise_accuracy(const std::vector<PipelinePredictions> &pipelines) {
    double right = 0, pairs = 0;
    for (const auto &p : pipelines) {
        for (size_t i = 0; i < p.measured.size(); i++) {
            for (size_t j = i + 1; j < p.measured.size(); j++) {
                if (p.measured[i] == p.measured[j]) continue;
                pairs++;
                if ((p.predicted[i] < p.predicted[j]) == (p.measured[i] < p.measured[j]) &&
                    p.predicted[i] != p.predicted[j])
                    right++;
            }
        }
    }
    return pairs > 0 ? right / pairs : 0;
}

double kendall_tau_b(const std::vector<double> &predicted, const std::vector<double> &measured) {
    double concordant = 0, discordant = 0, tied_predicted = 0, tied_measured = 0, pairs = 0;
    for (size_t i = 0; i < measured.size(); i++) {
        for (size_t j = i + 1; j < measured.size(); j++) {
            pairs++;
            const double a = predicted[i] - predicted[j], b = measured[i] - measured[j];
            if (a == 0) tied_predicted++;
            if (b == 0) tied_measured++;
            if (a * b > 0) concordant++;
            if (a * b < 0) discordant++;
        }
    }
    const double denominator = std::sqrt((pairs - tied_predicted) * (pairs - tied_measured));
    return denominator > 0 ? (concordant - discordant) / denominator : 0;
}

double top1_regret(const PipelinePredictions &p) {
    if (p.measured.empty()) return 1;
    const size_t chosen = size_t(std::min_element(p.predicted.begin(), p.predicted.end()) - p.predicted.begin());
    return p.measured[chosen] / *std::min_element(p.measured.begin(), p.measured.end());
}

double mean_relative_error(const std::vector<PipelinePredictions> &pipelines) {
    double sum = 0, n = 0;
    for (const auto &p : pipelines) {
        for (size_t i = 0; i < p.measured.size(); i++)
            sum += std::abs(p.predicted[i] - p.measured[i]) / p.measured[i], n++;
    }
    return n > 0 ? sum / n : 0;
}

std::string metrics_csv_columns(const std::string &prefix) {
    std::string s;
    for (const char *name :
         {"loss", "r2_log", "pairwise_accuracy", "kendall_tau", "top1_regret", "mean_relative_error"})
        s += "," + prefix + name;
    return s;
}

std::string metrics_csv_values(const Metrics &m) {
    char buf[256];
    std::snprintf(buf, sizeof(buf), ",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g", m.loss, m.r2_log, m.pairwise_accuracy,
                  m.kendall_tau, m.top1_regret, m.mean_relative_error);
    return buf;
}

Metrics compute_metrics(const std::vector<PipelinePredictions> &pipelines, LossKind kind,
                        const std::vector<std::vector<double>> &loss_weights) {
    Metrics m;
    m.pipelines = pipelines.size();
    double tau = 0, regret = 0, loss = 0;
    for (size_t i = 0; i < pipelines.size(); i++) {
        const PipelinePredictions &p = pipelines[i];
        m.schedules += p.measured.size();
        tau += kendall_tau_b(p.predicted, p.measured);
        regret += top1_regret(p);
        loss += loss_for_batch(p.predicted, p.measured, loss_weights.empty() ? std::vector<double>{} : loss_weights[i],
                               kind);
    }
    if (!pipelines.empty()) {
        const double n = double(pipelines.size());
        m.loss = loss / n, m.kendall_tau = tau / n, m.top1_regret = regret / n;
    }
    m.r2_log = r2_of_logs(pipelines);
    m.pairwise_accuracy = pairwise_accuracy(pipelines);
    m.mean_relative_error = mean_relative_error(pipelines);
    return m;
}

} // namespace schedforge::trainer
