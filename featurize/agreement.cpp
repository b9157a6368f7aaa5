#include "featurize/agreement.h"

#include <cmath>
#include <optional>
#include <stdexcept>

namespace schedforge::featurize {

namespace {

// The features the oracle measures, and where it measures them.
using FuncStat = LoweredFuncStats;
using StageStat = LoweredStageStats;
struct Compared {
    const char *name;
    double ScheduleFeatures::*predicted;
    bool per_func; // measured per Func (compared on stage 0) rather than per stage
    double (*measured)(const FuncStat &, const StageStat &);
};
const Compared kCompared[] = {
    {"num_realizations", &ScheduleFeatures::num_realizations, true,
     [](const FuncStat &f, const StageStat &) { return double(f.num_realizations); }},
    {"heap_realizations", &ScheduleFeatures::heap_realizations, true,
     [](const FuncStat &f, const StageStat &) { return double(f.heap_realizations); }},
    {"num_productions", &ScheduleFeatures::num_productions, true,
     [](const FuncStat &f, const StageStat &) { return double(f.num_productions); }},
    {"points_computed_total", &ScheduleFeatures::points_computed_total, false,
     [](const FuncStat &, const StageStat &s) { return double(s.points_computed_total); }},
    {"inner_parallelism", &ScheduleFeatures::inner_parallelism, false,
     [](const FuncStat &, const StageStat &s) { return double(s.inner_parallelism); }},
    {"outer_parallelism", &ScheduleFeatures::outer_parallelism, true,
     [](const FuncStat &f, const StageStat &) { return double(f.outer_parallelism); }},
    {"num_vectors", &ScheduleFeatures::num_vectors, false,
     [](const FuncStat &, const StageStat &s) { return double(s.num_vectors); }},
    {"num_scalars", &ScheduleFeatures::num_scalars, false,
     [](const FuncStat &, const StageStat &s) { return double(s.num_scalars); }},
    {"vector_size", &ScheduleFeatures::vector_size, false,
     [](const FuncStat &, const StageStat &s) { return double(s.vector_size); }},
    {"bytes_at_realization", &ScheduleFeatures::bytes_at_realization, true,
     [](const FuncStat &f, const StageStat &) { return double(f.bytes_at_realization); }},
};

// The oracle's value of a feature, or nothing where it could not measure it (a stage that
// stores nothing has no vector width).
std::optional<double> measured_value(const Compared &c, const FuncStat &f, const StageStat &s) {
    if (c.per_func ? !f.known(c.name) : !s.known(c.name)) return std::nullopt;
    if (c.predicted == &ScheduleFeatures::vector_size && s.vector_size == 0) return std::nullopt;
    return c.measured(f, s);
}

} // namespace

AgreementReport::AgreementReport(double tol) : tolerance(tol) {
    for (const Compared &c : kCompared) {
        FeatureAgreement a;
        a.feature = c.name;
        features.push_back(a);
    }
}

const FeatureAgreement &AgreementReport::feature(const std::string &name) const {
    for (const FeatureAgreement &f : features) {
        if (f.feature == name) return f;
    }
    throw std::out_of_range("no compared feature " + name);
}

bool has_loop_tails(const FunctionDAG &dag, const LoopNest &nest) {
    LoopNestBounds b(dag, nest);
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        if (dag.nodes[i].is_input || !nest.scheduled(int(i)) || nest.inlined(int(i))) continue;
        for (size_t s = 0; s < dag.nodes[i].stages.size(); s++) {
            const StageTiling &t = nest.funcs[i].stages[s];
            const Region &bounds = b.production_bounds({int(i), int(s)});
            for (size_t l = 0; l < bounds.size(); l++) {
                int64_t outer = bounds[l].extent();
                for (const auto &tile : t.tiles) {
                    const int64_t inner = std::min(outer, tile[l]);
                    if (outer % inner) return true;
                    outer = inner;
                }
                if (int(l) == t.vector_loop && outer % t.vector_width) return true;
            }
        }
    }
    return false;
}

void AgreementReport::add(const FunctionDAG &dag, const LoopNest &nest, const std::vector<StageFeatures> &predicted,
                          const LoweredStats &measured, const std::string &label) {
    schedules++;
    const bool tails = has_loop_tails(dag, nest);
    for (const StageFeatures &sf : predicted) {
        if (!sf.scheduled || nest.inlined(sf.node)) continue;
        stages++;
        const Node &n = dag.nodes[size_t(sf.node)];
        const LoweredFuncStats &f = measured.func(n.name);
        const LoweredStageStats &s = measured.stage(n.name, sf.stage);
        for (size_t i = 0; i < features.size(); i++) {
            if (kCompared[i].per_func && sf.stage != 0) continue;
            const std::optional<double> m = measured_value(kCompared[i], f, s);
            if (!m) {
                unknown++;
                continue;
            }
            const double p = sf.features.*kCompared[i].predicted;
            FeatureAgreement &a = features[i];
            a.compared++;
            const double ratio = *m == 0 ? (p == 0 ? 1 : INFINITY) : p / *m;
            if (std::abs(ratio - 1) <= tolerance) {
                a.within++;
            } else {
                disagreements.push_back({label, n.stages[size_t(sf.stage)].name, a.feature, p, *m, tails,
                                         site_text(dag, nest.compute_site({sf.node, 0}))});
            }
            if (p == *m) a.exact++;
            if (!tails) {
                a.compared_without_tails++;
                a.exact_without_tails += p == *m ? 1 : 0;
            }
            if (std::abs(std::log(ratio)) > std::abs(std::log(a.worst_ratio))) {
                a.worst_ratio = ratio;
                a.worst_example = label + " " + dag.nodes[size_t(sf.node)].stages[size_t(sf.stage)].name +
                                  ": predicted " + std::to_string(p) + ", measured " + std::to_string(*m);
            }
        }
    }
}

} // namespace schedforge::featurize
