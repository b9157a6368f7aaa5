#include "featurize/stage_loads.h"

#include <numeric>

namespace schedforge::featurize {

JacobianEntry jacobian_multiply(const JacobianEntry &a, const JacobianEntry &b) {
    if ((a && a->num == 0) || (b && b->num == 0)) return Rational{0, 1};
    if (!a || !b) return std::nullopt;
    Rational r{a->num * b->num, a->den * b->den};
    const int64_t g = std::gcd(r.num, r.den);
    return Rational{r.num / g, r.den / g};
}
JacobianEntry jacobian_add(const JacobianEntry &a, const JacobianEntry &b) {
    if (!a || !b) return std::nullopt;
    Rational r{a->num * b->den + b->num * a->den, a->den * b->den};
    const int64_t g = std::gcd(r.num, r.den);
    return g == 0 ? Rational{0, 1} : Rational{r.num / g, r.den / g};
}

std::vector<Load> stage_loads(const FunctionDAG &dag, const LoopNest &nest, StageRef s) {
    auto steady = [](const Jacobian &j) {
        Jacobian out;
        out.entries = j.steady();
        return out;
    };
    std::vector<Load> out;
    const Stage &st = dag.nodes[size_t(s.node)].stages[size_t(s.stage)];
    for (const Jacobian &j : st.self_calls) {
        if (!j.repeat) out.push_back({s.node, steady(j)});
    }
    for (int ei : st.incoming_edges) {
        const Edge &e = dag.edges[size_t(ei)];
        for (const Jacobian &j : e.jacobians) {
            if (j.repeat) continue; // loaded once, at its first site
            if (!nest.inlined(e.producer)) {
                out.push_back({e.producer, steady(j)});
                continue;
            }
            const Stage &inner = dag.nodes[size_t(e.producer)].stages[0];
            for (Load l : stage_loads(dag, nest, {e.producer, 0})) {
                Jacobian composed;
                for (const auto &row : l.jacobian.entries) {
                    std::vector<JacobianEntry> out_row(st.loops.size(), Rational{0, 1});
                    for (size_t c = 0; c < st.loops.size(); c++) {
                        for (size_t k = 0; k < row.size(); k++) {
                            const int dim = inner.loops[k].dim;
                            out_row[c] =
                                jacobian_add(out_row[c], jacobian_multiply(row[k], j.steady()[size_t(dim)][c]));
                        }
                    }
                    composed.entries.push_back(std::move(out_row));
                }
                out.push_back({l.producer, std::move(composed)});
            }
        }
    }
    return out;
}

void stage_reads(const FunctionDAG &dag, const LoopNest &nest, StageRef s, const Region &loop_bounds,
                 std::map<int, Region> &out) {
    for (int ei : dag.nodes[size_t(s.node)].stages[size_t(s.stage)].incoming_edges) {
        const Edge &e = dag.edges[size_t(ei)];
        const Region r = e.required(loop_bounds);
        if (nest.inlined(e.producer)) {
            stage_reads(dag, nest, {e.producer, 0}, dag.nodes[size_t(e.producer)].stages[0].loops_over(r), out);
        } else {
            unite(out[e.producer], r);
        }
    }
}

} // namespace schedforge::featurize
