// FunctionDAG on small pipelines whose regions and Jacobians are easy to derive by hand, on
// every app of the suite, and on bad input (missing estimates).
#include "apps/app.h"
#include "featurize/function_dag.h"
#include "tests/featurize/fixtures.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace schedforge::featurize {
namespace {

using namespace Halide;

using testing::base;

const Node &node(const FunctionDAG &dag, const std::string &name) {
    for (const Node &n : dag.nodes) {
        if (base(n.name) == name) return n;
    }
    ADD_FAILURE() << "no node " << name << "\n" << dag.describe();
    static const Node none;
    return none;
}

// `consumer_stage` is the consumer's base name, with ".update(i)" for an update.
const Edge &edge_between(const FunctionDAG &dag, const std::string &producer, const std::string &consumer_stage) {
    for (const Edge &e : dag.edges) {
        const std::string c = base(dag.nodes[size_t(e.consumer_node)].name);
        const std::string stage =
            e.consumer_stage == 0 ? c : c + ".update(" + std::to_string(e.consumer_stage - 1) + ")";
        if (base(dag.nodes[size_t(e.producer)].name) == producer && stage == consumer_stage) return e;
    }
    ADD_FAILURE() << "no edge " << producer << " -> " << consumer_stage << "\n" << dag.describe();
    static const Edge none;
    return none;
}

std::vector<std::vector<double>> values(const Jacobian &j) {
    std::vector<std::vector<double>> v;
    for (const auto &row : j.entries) {
        v.emplace_back();
        for (const JacobianEntry &e : row) v.back().push_back(e ? e->value() : NAN);
    }
    return v;
}

using Blur = testing::BlurPipeline;

TEST(FunctionDAG, BlurNodesConsumersFirstWithRegionsAtRoot) {
    Blur b;
    const FunctionDAG dag = FunctionDAG::build(Pipeline(b.by));
    // An ImageParam is called through a wrapper Func, "in_im", which Halide inlines by default.
    ASSERT_EQ(dag.nodes.size(), 4u) << dag.describe();
    EXPECT_EQ(base(dag.nodes[0].name), "blur_y");
    EXPECT_TRUE(dag.nodes[0].is_output);
    EXPECT_EQ(base(dag.nodes[1].name), "blur_x");
    EXPECT_EQ(base(dag.nodes[2].name), "in_im");
    EXPECT_EQ(dag.nodes[3].name, "in");
    EXPECT_TRUE(dag.nodes[3].is_input);
    EXPECT_EQ(dag.nodes[3].bytes_per_point(), 2);
    // blur_y's 64x48 needs blur_x one row above and below; blur_x needs in one column either side.
    EXPECT_EQ(dag.nodes[0].region_at_root, (Region{{0, 63}, {0, 47}}));
    EXPECT_EQ(dag.nodes[1].region_at_root, (Region{{0, 63}, {-1, 48}}));
    EXPECT_EQ(dag.nodes[2].region_at_root, (Region{{-1, 64}, {-1, 48}}));
    EXPECT_EQ(dag.nodes[3].region_at_root, (Region{{-1, 64}, {-1, 48}}));
    ASSERT_EQ(dag.nodes[1].stages.size(), 1u);
    EXPECT_EQ(dag.nodes[1].stages[0].loop_bounds_at_root, (Region{{0, 63}, {-1, 48}}));
}

TEST(FunctionDAG, BlurEdgesEvaluateForAnyLoopBounds) {
    Blur b;
    const FunctionDAG dag = FunctionDAG::build(Pipeline(b.by));
    const Edge &e = edge_between(dag, "blur_x", "blur_y");
    EXPECT_EQ(e.calls, 3);
    EXPECT_TRUE(e.region[1].first.is_affine());
    // A 8x4 tile of blur_y at (16, 20) needs rows 19..24 of blur_x.
    EXPECT_EQ(e.required({{16, 23}, {20, 23}}), (Region{{16, 23}, {19, 24}}));
    for (const Jacobian &j : e.jacobians) EXPECT_EQ(values(j), (std::vector<std::vector<double>>{{1, 0}, {0, 1}}));
    const Edge &in = edge_between(dag, "in_im", "blur_x");
    EXPECT_EQ(in.required({{0, 7}, {5, 5}}), (Region{{-1, 8}, {5, 5}}));
}

TEST(FunctionDAG, ReductionLoopsAndTheirJacobians) {
    // matmul: out(x, y) = sum_k a(k, y) * b(x, k), 32x32 by 16.
    const testing::MatmulPipeline m;
    const FunctionDAG dag = FunctionDAG::build(Pipeline(m.out));
    const Node &p = node(dag, "prod");
    ASSERT_EQ(p.stages.size(), 2u);
    const Stage &update = p.stages[1];
    EXPECT_EQ(base(update.name), "prod");
    EXPECT_EQ(update.index, 1);
    // Halide's default update loop order: the reduction innermost, then x, y.
    ASSERT_EQ(update.loops.size(), 3u) << dag.describe();
    EXPECT_TRUE(update.loops[0].is_rvar);
    EXPECT_EQ(update.loops[1].var, "x");
    EXPECT_EQ(update.loop_bounds_at_root, (Region{{0, 15}, {0, 31}, {0, 31}}));
    // a(k, y): k follows the reduction loop, y the y loop.
    const Edge &ea = edge_between(dag, "a_im", "prod.update(0)");
    EXPECT_EQ(values(ea.jacobians[0]), (std::vector<std::vector<double>>{{1, 0, 0}, {0, 0, 1}}));
    EXPECT_EQ(node(dag, "a").region_at_root, (Region{{0, 15}, {0, 31}}));
    // The update reads prod itself (the accumulator), pointwise.
    ASSERT_EQ(update.self_calls.size(), 1u);
    EXPECT_EQ(values(update.self_calls[0]), (std::vector<std::vector<double>>{{0, 1, 0}, {0, 0, 1}}));
}

TEST(FunctionDAG, ResamplingGivesRationalJacobiansAndGathersUnknownOnes) {
    ImageParam in(Float(32), 1, "in");
    ImageParam idx(Int(32), 1, "idx");
    Var x("x");
    Func down("down"), up("up"), lut("lut"), gather("gather"), out("out");
    down(x) = in(2 * x) + in(2 * x + 1);
    up(x) = down(x / 2);
    lut(x) = clamp(idx(x), 0, 9);
    gather(x) = up(lut(x));
    out(x) = gather(x) + up(x);
    in.set_estimates({{0, 64}});
    idx.set_estimates({{0, 32}});
    out.set_estimates({{0, 32}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(out));
    EXPECT_EQ(values(edge_between(dag, "in_im", "down").jacobians[0]), (std::vector<std::vector<double>>{{2}}));
    EXPECT_EQ(values(edge_between(dag, "down", "up").jacobians[0]), (std::vector<std::vector<double>>{{0.5}}));
    const Edge &g = edge_between(dag, "up", "gather");
    EXPECT_FALSE(g.jacobians[0].entries[0][0].has_value());
    // The gather's region comes from lut's value bounds, [0, 9], whatever the loop bounds.
    EXPECT_EQ(g.required({{100, 200}}), (Region{{0, 9}}));
    // up is needed at [0, 31] directly and [0, 9] through the gather.
    EXPECT_EQ(node(dag, "up").region_at_root, (Region{{0, 31}}));
    EXPECT_EQ(node(dag, "down").region_at_root, (Region{{0, 15}}));
}

TEST(FunctionDAG, ClampedAccessesEvaluateExactly) {
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    Func f("f");
    f(x) = BoundaryConditions::repeat_edge(in)(x - 3);
    in.set_estimates({{0, 50}});
    f.set_estimates({{0, 50}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(f));
    // Halide 14's repeat_edge is a Func clamping its argument into a wrapper ("lambda_0") of
    // the input: the clamp is not affine, and its region evaluates exactly.
    const Edge &e = edge_between(dag, "lambda_0", "repeat_edge");
    EXPECT_FALSE(e.region[0].first.is_affine());
    EXPECT_FALSE(e.jacobians[0].entries[0][0].has_value());
    EXPECT_EQ(e.required({{-10, 5}}), (Region{{0, 5}}));
    EXPECT_EQ(e.required({{40, 70}}), (Region{{40, 49}}));
    EXPECT_EQ(node(dag, "in").region_at_root, (Region{{0, 46}}));
    EXPECT_EQ(node(dag, "repeat_edge").region_at_root, (Region{{-3, 46}}));
}

TEST(FunctionDAG, ZeroWeightedFloatTapsStillRead) {
    // The project compiles with StrictFloat, where Halide keeps 0.0f * f(x - 3) (it is NaN when
    // f is) and bounds f over x - 3 too. A plain simplify would drop the term and the region.
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    Func f("f"), g("g");
    f(x) = in(x)*2.0f;
    g(x) = 0.0f * f(x - 3) + f(x + 1);
    in.set_estimates({{-3, 60}});
    g.set_estimates({{0, 50}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(g));
    EXPECT_EQ(edge_between(dag, "f", "g").required({{0, 9}}), (Region{{-3, 10}}));
    EXPECT_EQ(node(dag, "f").region_at_root, (Region{{-3, 50}}));
}

TEST(FunctionDAG, ZeroWeightedIntegerTapsStillRead) {
    // An integer 0 * f(x - 2) folds away under any simplify, yet Halide's bounds inference reads
    // the unsimplified definition and computes f over x - 2 too. A region one column short made an
    // unrolled tile of a stencil's producer look even to the search, and Halide 14 miscompiled it
    // (dataset train-3001, pipeline seed 15626688281249951677).
    ImageParam in(UInt(32), 1, "in");
    Var x("x");
    Func f("f"), g("g");
    const Expr zero = cast<uint32_t>(0), four = cast<uint32_t>(4);
    f(x) = in(x) + 3;
    g(x) = zero * f(x - 2) + four * f(x - 1) + f(x + 2);
    in.set_estimates({{-2, 60}});
    g.set_estimates({{0, 50}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(g));
    EXPECT_EQ(edge_between(dag, "f", "g").required({{0, 9}}), (Region{{-2, 11}}));
    EXPECT_EQ(node(dag, "f").region_at_root, (Region{{-2, 51}}));
}

TEST(FunctionDAG, ReadsTheSimplifierFoldsAwayStillHaveEdges) {
    // A gather over one channel: h reads f at channel clamp(g(x), 0, 0), which simplifies to f's
    // channel 0 with no call to g left. Halide still sees h use g (compute_at legality is checked
    // on the definition), so g needs its edge: without it every site looked legal for g.
    ImageParam in(Float(32), 2, "in");
    Var x("x"), c("c");
    Func f("f"), g("g"), h("h");
    f(x, c) = in(x, c) * 2.0f;
    g(x, c) = cast<uint16_t>(x);
    h(x, c) = f(x, clamp(cast<int>(g(x, c)), 0, 0));
    in.set_estimates({{0, 40}, {0, 1}});
    h.set_estimates({{0, 32}, {0, 1}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(h));
    EXPECT_EQ(edge_between(dag, "g", "h").required({{0, 9}, {0, 0}}), (Region{{0, 9}, {0, 0}}));
    EXPECT_EQ(node(dag, "g").region_at_root, (Region{{0, 31}, {0, 0}}));
}

TEST(FunctionDAG, LetBoundIndicesFollowTheirLoops) {
    // g(x) = let t = 2x + 1 in f(t): the call's argument is the let variable, which moves two
    // steps per step of x. It is not a constant, however it looks in the call.
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    Func f("f"), g("g");
    f(x) = in(x)*2.0f;
    const Expr t = Internal::Variable::make(Int(32), "t");
    g(x) = Internal::Let::make("t", 2 * x + 1, f(t) + f(t + 1));
    in.set_estimates({{0, 100}});
    g.set_estimates({{0, 40}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(g));
    const Edge &e = edge_between(dag, "f", "g");
    ASSERT_EQ(e.calls, 2);
    EXPECT_EQ(values(e.jacobians[0]), (std::vector<std::vector<double>>{{2}}));
    EXPECT_EQ(values(e.jacobians[1]), (std::vector<std::vector<double>>{{2}}));
    EXPECT_EQ(e.required({{0, 9}}), (Region{{1, 20}}));
}

// Halide's common-subexpression elimination loads an identical call once within one expression:
// a definition that names f(x) three times (as harris's response names its box sums) reads f once
// there, and once at x + 1. The values of a Tuple are distinct loads; and each value of a Tuple
// definition is stored, and its common subexpressions found, on its own.
TEST(FunctionDAG, IdenticalCallsInOneExpressionCountOnce) {
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    Func f("f"), g("g"), t("t"), h("h"), u("u");
    f(x) = in(x)*2.0f;
    g(x) = f(x) * f(x) + f(x + 1) - f(x + 0);
    t(x) = {in(x), in(x) + 1.0f};
    h(x) = g(x) + t(x)[0] * t(x)[0] + t(x)[1];
    u(x) = {h(x) * 2.0f, h(x) + 1.0f};
    in.set_estimates({{0, 101}});
    u.set_estimates({{0, 100}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(u));
    const Edge &fg = edge_between(dag, "f", "g");
    EXPECT_EQ(fg.calls, 2);
    ASSERT_EQ(fg.jacobians.size(), 4u); // every site, for the pipeline features
    EXPECT_EQ(std::count_if(fg.jacobians.begin(), fg.jacobians.end(), [](const Jacobian &j) { return j.repeat; }), 2);
    EXPECT_EQ(edge_between(dag, "t", "h").calls, 2);
    EXPECT_EQ(edge_between(dag, "g", "h").calls, 1);
    EXPECT_EQ(edge_between(dag, "h", "u").calls, 2);
}

TEST(FunctionDAG, FloatParamsKeepTheirTypeUnderEstimates) {
    // A float scale in an index: its estimate must stay a float, or the product is ill-typed.
    ImageParam in(Float(32), 1, "in");
    Param<float> scale("scale");
    Var x("x");
    Func g("g");
    g(x) = in(cast<int>(x * scale));
    in.set_estimates({{0, 100}});
    scale.set_estimate(0.5f);
    g.set_estimates({{0, 40}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(g));
    EXPECT_EQ(node(dag, "in").region_at_root, (Region{{0, 19}})) << dag.describe();
    // x * 0.5 through a cast is not an affine integer index: the Jacobian entry is unknown.
    EXPECT_FALSE(edge_between(dag, "in_im", "g").jacobians[0].entries[0][0].has_value());
}

TEST(FunctionDAG, MissingEstimatesAreReported) {
    Blur b;
    Func unestimated("unestimated");
    unestimated(b.x, b.y) = b.by(b.x, b.y);
    EXPECT_THROW(FunctionDAG::build(Pipeline(unestimated)), UnsupportedPipeline);
    ImageParam in(Float(32), 1, "no_estimate");
    Var x("x");
    RDom r(0, in.dim(0).extent());
    Func s("s");
    s(x) = 0.0f;
    s(x) += in(r);
    s.set_estimates({{0, 4}});
    try {
        FunctionDAG::build(Pipeline(s));
        ADD_FAILURE() << "no error";
    } catch (const UnsupportedPipeline &e) {
        EXPECT_NE(std::string(e.what()).find("no_estimate"), std::string::npos) << e.what();
    }
}

class AppDAG : public ::testing::TestWithParam<std::string> {};

TEST_P(AppDAG, EveryFuncAndInputIsANodeWithARegion) {
    apps::BuiltApp app = apps::build_app(GetParam(), /*small=*/false);
    const FunctionDAG dag = FunctionDAG::build(app.pipeline);
    const auto funcs = Internal::find_transitive_calls(app.output.function());
    EXPECT_EQ(dag.nodes.size(), funcs.size() + app.params.size()) << dag.describe();
    for (const Node &n : dag.nodes) {
        ASSERT_EQ(int(n.region_at_root.size()), n.dimensions) << n.name;
        for (const Span &s : n.region_at_root) EXPECT_GT(s.extent(), 0) << n.name;
        for (const Stage &st : n.stages) EXPECT_EQ(st.loop_bounds_at_root.size(), st.loops.size()) << st.name;
    }
    // The output's region is its estimate.
    Region expected;
    for (int e : app.app->output_extents(app.app->inputs(false))) expected.push_back({0, e - 1});
    EXPECT_EQ(dag.nodes[0].region_at_root, expected);
}

INSTANTIATE_TEST_SUITE_P(Apps, AppDAG, ::testing::ValuesIn(apps::app_names()),
                         [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

} // namespace
} // namespace schedforge::featurize
