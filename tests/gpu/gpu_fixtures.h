// Small fixed pipelines for the GPU unit tests: a matrix product through an inlined Func, a 3x3
// box blur in two passes, a transposed sum and a histogram, each with the nest the tests start from.
#pragma once

#include "featurize/function_dag.h"
#include "featurize/loop_nest.h"

#include <Halide.h>

#include <string>

namespace schedforge::testing {

namespace sf = schedforge::featurize;

// The node named `name` (its stable name: Halide numbers Funcs of one name per process).
inline int node_named(const sf::FunctionDAG &dag, const std::string &name) {
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        if (sf::stable_name(dag.nodes[i].name) == name) return int(i);
    }
    return -1;
}

// Every non-input Func inlined where `inline_it` says (and input wrappers), the rest at root with
// default tilings.
template<typename Pred>
sf::LoopNest root_nest(const sf::FunctionDAG &dag, Pred inline_it) {
    sf::LoopNest nest(dag);
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        if (dag.nodes[i].is_input) continue;
        const bool inl = inline_it(int(i)) || sf::is_input_wrapper(dag, int(i));
        nest.funcs[i].compute = nest.funcs[i].store = inl ? sf::Site::inlined() : sf::Site::root();
        if (!inl) nest.funcs[i].stages.resize(dag.nodes[i].stages.size());
    }
    return nest;
}

// What every fixture has: its DAG, its nodes by name, and the nest of every Func at root.
struct Fixture {
    sf::FunctionDAG dag;
    int node(const std::string &name) const { return node_named(dag, name); }
    sf::LoopNest cpu_nest() const {
        return root_nest(dag, [](int) { return false; });
    }
};

// out(x, y) = sum_k a(k, y) * b(x, k) over W x H, k in [0, K), through an inlinable pointwise Func.
struct Matmul : Fixture {
    Halide::Var x{"x"}, y{"y"};
    Halide::ImageParam a{Halide::Float(32), 2, "a"}, b{Halide::Float(32), 2, "b"};
    Halide::Func scaled{"scaled"}, prod{"prod"}, out{"out"};

    Matmul(int w, int h, int k) {
        Halide::RDom r(0, k, "r");
        scaled(x, y) = 2.0f * b(x, y);
        prod(x, y) = 0.0f;
        prod(x, y) += a(r, y) * scaled(x, r);
        out(x, y) = prod(x, y);
        a.set_estimates({{0, k}, {0, h}});
        b.set_estimates({{0, w}, {0, k}});
        out.set_estimates({{0, w}, {0, h}});
        dag = sf::FunctionDAG::build(Halide::Pipeline(out));
    }
    // A CPU nest: `scaled` inlined, the rest at root, one level each (hides the fixture's).
    sf::LoopNest cpu_nest() const {
        return root_nest(dag, [&](int n) { return n == node("scaled"); });
    }
};

// by(x, y) = bx(x, y - 1) + bx(x, y) + bx(x, y + 1), bx(x, y) = in(x - 1, y) + in(x, y) + in(x + 1, y),
// over W x H floats.
struct Blur : Fixture {
    Halide::Var x{"x"}, y{"y"};
    Halide::ImageParam in{Halide::Float(32), 2, "in"};
    Halide::Func bx{"bx"}, by{"by"};

    Blur(int w, int h) {
        bx(x, y) = in(x - 1, y) + in(x, y) + in(x + 1, y);
        by(x, y) = bx(x, y - 1) + bx(x, y) + bx(x, y + 1);
        in.set_estimates({{-1, w + 2}, {-1, h + 2}});
        by.set_estimates({{0, w}, {0, h}});
        dag = sf::FunctionDAG::build(Halide::Pipeline(by));
    }
};

// out(x, y) = in(x, y) + in(y, x) over N x N floats: one read along rows, one down columns.
struct Transpose : Fixture {
    Halide::Var x{"x"}, y{"y"};
    Halide::ImageParam in{Halide::Float(32), 2, "in"};
    Halide::Func out{"out"};

    explicit Transpose(int n) {
        out(x, y) = in(x, y) + in(y, x);
        in.set_estimates({{0, n}, {0, n}});
        out.set_estimates({{0, n}, {0, n}});
        dag = sf::FunctionDAG::build(Halide::Pipeline(out));
    }
};

// hist(v) counts the values of a W x H uint8 image (a scatter: no pure loop in its update).
struct Histogram : Fixture {
    Halide::Var x{"x"};
    Halide::ImageParam in{Halide::UInt(8), 2, "in"};
    Halide::Func hist{"hist"};

    Histogram(int w, int h) {
        Halide::RDom r(0, w, 0, h, "r");
        hist(x) = 0;
        hist(Halide::cast<int>(in(r.x, r.y))) += 1;
        in.set_estimates({{0, w}, {0, h}});
        hist.set_estimates({{0, 256}});
        dag = sf::FunctionDAG::build(Halide::Pipeline(hist));
    }
};

} // namespace schedforge::testing
