// PipelineFeatures: the name list, and golden per-stage counts on small pipelines (a separable
// blur, a matmul, a conv layer, and one stage per remaining access class), every expected value
// derived by hand from the definition.
//
// Conventions the expectations rely on: loop variables and call indices are int32, which
// counts as uint32; an ImageParam is read through a wrapper Func "<name>_im", so a stage's reads
// of it are Func loads and the wrapper holds the one image load; `x - 1` is a Sub and `x + 1` an
// Add; `f(..) += e` defines f(..) = f(..) + e.
#include "apps/app.h"
#include "featurize/function_dag.h"
#include "featurize/pipeline_features.h"
#include "tests/featurize/fixtures.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace schedforge::featurize {
namespace {

using namespace Halide;
using Features = std::map<std::string, double>;

using testing::base;

// The nonzero features of stage `stage` of the Func named `func`, by name.
Features nonzero(const FunctionDAG &dag, const std::string &func, int stage = 0) {
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        if (base(dag.nodes[n].name) != func) continue;
        const auto values = compute_pipeline_features(dag, int(n), stage).values();
        Features f;
        for (size_t i = 0; i < values.size(); i++) {
            if (values[i] != 0) f[PipelineFeatures::names()[i]] = values[i];
        }
        return f;
    }
    ADD_FAILURE() << "no Func " << func << "\n" << dag.describe();
    return {};
}

// Only the access features of `f`.
Features accesses(const Features &f) {
    Features a;
    for (const auto &[name, value] : f) {
        if (name.rfind("access.", 0) == 0) a[name] = value;
    }
    return a;
}

TEST(PipelineFeatures, NamesAreUniqueStableAndMatchTheValues) {
    EXPECT_EQ(PipelineFeatures::version(), 1);
    // 27 ops x 7 types + 9 access classes x 4 kinds x 7 types.
    EXPECT_EQ(PipelineFeatures::num_features(), 441);
    const std::vector<std::string> &names = PipelineFeatures::names();
    ASSERT_EQ(names.size(), size_t(PipelineFeatures::num_features()));
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
    EXPECT_EQ(names.front(), "op.const.bool");
    EXPECT_EQ(names[188], "op.let.float64");
    EXPECT_EQ(names[189], "access.pointwise.func.bool");
    EXPECT_EQ(names.back(), "access.gather.store.float64");
    // values() is in names() order.
    PipelineFeatures f;
    f.ops(PipelineFeatures::OpType::Add, PipelineFeatures::ScalarType::UInt16) = 5;
    f.accesses(PipelineFeatures::AccessClass::Stencil, PipelineFeatures::AccessKind::LoadImage,
               PipelineFeatures::ScalarType::UInt8) = 3;
    const auto values = f.values();
    for (size_t i = 0; i < values.size(); i++) {
        const double expected = names[i] == "op.add.uint16" ? 5 : names[i] == "access.stencil.image.uint8" ? 3 : 0;
        EXPECT_EQ(values[i], expected) << names[i];
    }
    EXPECT_EQ(f.describe(), "op.add.uint16 5\naccess.stencil.image.uint8 3\n");
}

// A separable 3x3 blur on uint16: in (100x80) -> blur_x -> blur_y (estimated 64x48).
using Blur = testing::BlurPipeline;

TEST(PipelineFeatures, BlurStagesAreThreeTapStencils) {
    Blur b;
    const FunctionDAG dag = FunctionDAG::build(Pipeline(b.by));
    // blur_x: in_im(x - 1, y) + in_im(x, y) + in_im(x + 1, y) = 2 uint16 adds of 3 uint16 Func
    // loads; their indices: 6 variables, x - 1 (a sub and a const), x + 1 (an add and a const);
    // the LHS (x, y): 2 more variables. The three loads have the same Jacobian (identity) and
    // constant parts -1, 0, 1 in x: all three are stencil taps, the centre one included.
    const Features three_taps = {
        {"op.add.uint16", 2},
        {"op.func_call.uint16", 3},
        {"op.variable.uint32", 8},
        {"op.sub.uint32", 1},
        {"op.add.uint32", 1},
        {"op.const.uint32", 2},
        {"access.stencil.func.uint16", 3},
        {"access.pointwise.store.uint16", 1},
    };
    EXPECT_EQ(nonzero(dag, "blur_x"), three_taps);
    // blur_y is the same along y.
    EXPECT_EQ(nonzero(dag, "blur_y"), three_taps);
    // in_im(_0, _1) = in(_0, _1): one pointwise image load, 4 variables (call and LHS).
    EXPECT_EQ(nonzero(dag, "in_im"), (Features{{"op.image_call.uint16", 1},
                                               {"op.variable.uint32", 4},
                                               {"access.pointwise.image.uint16", 1},
                                               {"access.pointwise.store.uint16", 1}}));
}

TEST(PipelineFeatures, MatmulUpdateBroadcastsBothOperandsAlongTheReduction) {
    ImageParam a(Float(32), 2, "A"), b(Float(32), 2, "B");
    Var x("x"), y("y");
    RDom k(0, 16, "k");
    Func f("f");
    f(x, y) = 0.0f;
    f(x, y) += a(k, y) * b(x, k);
    a.set_estimates({{0, 16}, {0, 32}});
    b.set_estimates({{0, 32}, {0, 16}});
    f.set_estimates({{0, 32}, {0, 32}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(f));
    // f(x, y) = 0.0f: one float const, the LHS's 2 variables, a pointwise store.
    EXPECT_EQ(nonzero(dag, "f", 0),
              (Features{{"op.const.float32", 1}, {"op.variable.uint32", 2}, {"access.pointwise.store.float32", 1}}));
    // f(x, y) = f(x, y) + A_im(k, y) * B_im(x, k) over loops (k, x, y): a float add and mul, the
    // self load f(x, y) (pointwise: it moves as the written point), 2 Func loads, 8 variables
    // (2 per call, 2 in the LHS). A(k, y) does not move along x, B(x, k) not along y: both are
    // broadcasts, and each has a dimension driven by the reduction k alone.
    EXPECT_EQ(nonzero(dag, "f", 1), (Features{{"op.add.float32", 1},
                                              {"op.mul.float32", 1},
                                              {"op.self_call.float32", 1},
                                              {"op.func_call.float32", 2},
                                              {"op.variable.uint32", 8},
                                              {"access.pointwise.self.float32", 1},
                                              {"access.broadcast.func.float32", 2},
                                              {"access.reduce.func.float32", 2},
                                              {"access.pointwise.store.float32", 1}}));
}

TEST(PipelineFeatures, ConvLayerInputWindowIsAStencilOverTheReduction) {
    const testing::ConvLayerPipeline conv;
    const FunctionDAG dag = FunctionDAG::build(Pipeline(conv.relu));
    // conv = bias_im(c): one Func load broadcast along x, y and n; 1 + 4 variables.
    EXPECT_EQ(nonzero(dag, "conv", 0), (Features{{"op.func_call.float32", 1},
                                                 {"op.variable.uint32", 5},
                                                 {"access.broadcast.func.float32", 1},
                                                 {"access.pointwise.store.float32", 1}}));
    // conv += filter_im(c, r.x, r.y, r.z) * input_im(r.z, x + r.x, y + r.y, n): a float add and
    // mul, the pointwise self load, 2 Func loads, 2 int adds, 18 variables (4 self, 4 filter, 6
    // input, 4 LHS). filter: broadcast along x, y, n; r.x, r.y, r.z alone drive 3 of its
    // dimensions (reduce). input: broadcast along c, r.z alone drives its first dimension
    // (reduce), x + r.x and y + r.y slide with the output and the reduction (stencil).
    EXPECT_EQ(nonzero(dag, "conv", 1), (Features{{"op.add.float32", 1},
                                                 {"op.mul.float32", 1},
                                                 {"op.self_call.float32", 1},
                                                 {"op.func_call.float32", 2},
                                                 {"op.add.uint32", 2},
                                                 {"op.variable.uint32", 18},
                                                 {"access.pointwise.self.float32", 1},
                                                 {"access.broadcast.func.float32", 2},
                                                 {"access.reduce.func.float32", 2},
                                                 {"access.stencil.func.float32", 1},
                                                 {"access.pointwise.store.float32", 1}}));
    // relu = max(conv(c, x, y, n), 0.0f): a float max and const, a pointwise Func load, 8 variables.
    EXPECT_EQ(nonzero(dag, "relu"), (Features{{"op.max.float32", 1},
                                              {"op.const.float32", 1},
                                              {"op.func_call.float32", 1},
                                              {"op.variable.uint32", 8},
                                              {"access.pointwise.func.float32", 1},
                                              {"access.pointwise.store.float32", 1}}));
}

TEST(PipelineFeatures, EveryOtherAccessClassOnItsOwnStage) {
    Var x("x"), y("y");
    RDom r(0, 8, "r"), s(1, 7, "s");
    Func g("g"), tr("tr"), mirror("mirror"), skew("skew"), sl("sl"), dn("dn"), up("up"), lerp("lerp"), ga("ga"),
        hist("hist"), scan("scan"), rscan("rscan"), out("out");
    g(x, y) = cast<float>(x + y);
    tr(x, y) = g(y, x);
    mirror(x, y) = g(-x, y);
    skew(x, y) = g(x + y, y);
    sl(x, y) = g(x, 0);
    dn(x, y) = g(2 * x, y);
    up(x, y) = g(x / 2, y);
    lerp(x, y) = (g(x / 2, y) + g((x + 1) / 2, y)) / 2;
    ga(x, y) = g(clamp(cast<int>(g(x, y)), 0, 7), y);
    hist(x) = 0;
    hist(clamp(cast<int>(g(r, 0)), 0, 7)) += 1;
    scan(x) = g(x, 0);
    scan(s) = scan(s - 1) + g(s, 1);
    rscan(x) = g(x, 0);
    rscan(7 - s) = rscan(8 - s) + g(7 - s, 1);
    out(x, y) = tr(x, y) + mirror(x, y) + skew(x, y) + sl(x, y) + dn(x, y) + up(x, y) + lerp(x, y) + ga(x, y) +
                hist(x) + scan(x) + rscan(x);
    out.set_estimates({{0, 8}, {0, 8}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(out));
    const Features float_store = {{"access.pointwise.store.float32", 1}};
    auto with_float_store = [&](Features f) {
        f.insert(float_store.begin(), float_store.end());
        return f;
    };
    // g(y, x): x is followed by g's second dimension, y by its first.
    EXPECT_EQ(accesses(nonzero(dag, "tr")), with_float_store({{"access.transpose.func.float32", 1}}));
    // g(-x, y) runs against x; g(x + y, y) moves along x and y at once.
    EXPECT_EQ(accesses(nonzero(dag, "mirror")), with_float_store({{"access.transpose.func.float32", 1}}));
    EXPECT_EQ(accesses(nonzero(dag, "skew")), with_float_store({{"access.transpose.func.float32", 1}}));
    // g(x, 0): g's second dimension is pinned, and the value is reused along y.
    EXPECT_EQ(accesses(nonzero(dag, "sl")),
              with_float_store({{"access.slice.func.float32", 1}, {"access.broadcast.func.float32", 1}}));
    EXPECT_EQ(accesses(nonzero(dag, "dn")), with_float_store({{"access.downsample.func.float32", 1}}));
    EXPECT_EQ(accesses(nonzero(dag, "up")), with_float_store({{"access.upsample.func.float32", 1}}));
    // Linear upsampling: two taps with the same Jacobian (1/2 along x) at different points.
    EXPECT_EQ(accesses(nonzero(dag, "lerp")),
              with_float_store({{"access.upsample.func.float32", 2}, {"access.stencil.func.float32", 2}}));
    // The inner g(x, y) is pointwise; the outer one's x coordinate is data-dependent.
    EXPECT_EQ(accesses(nonzero(dag, "ga")),
              with_float_store({{"access.pointwise.func.float32", 1}, {"access.gather.func.float32", 1}}));
    // hist(i) = hist(i) + 1 with i = clamp(int(g(r, 0)), 0, 7), a scatter: the store and the self
    // load have a data-dependent coordinate, so r is a reduction loop. i is written twice (LHS
    // and self load), so g(r, 0) is read twice, each driven by r alone and pinned in y.
    EXPECT_EQ(accesses(nonzero(dag, "hist", 1)), (Features{{"access.gather.store.uint32", 1},
                                                           {"access.gather.self.uint32", 1},
                                                           {"access.reduce.func.float32", 2},
                                                           {"access.slice.func.float32", 2}}));
    // scan(s) = scan(s - 1) + g(s, 1): the self load is the written point shifted by -1 (a
    // one-tap stencil); g(s, 1) is pinned in y; the store is driven by the RDom alone.
    const Features scan_update = {
        {"access.stencil.self.float32", 1}, {"access.slice.func.float32", 1}, {"access.reduce.store.float32", 1}};
    EXPECT_EQ(accesses(nonzero(dag, "scan", 1)), scan_update);
    // The same scan run backwards: its loads run backwards with the written point, so nothing is
    // mirrored against it.
    EXPECT_EQ(accesses(nonzero(dag, "rscan", 1)), scan_update);
}

TEST(PipelineFeatures, OpKindsAndTheTypeEachCountsUnder) {
    Param<int> mask("mask");
    mask.set_estimate(3);
    Var x("x");
    Func g("g"), f("f");
    g(x) = cast<float>(x);
    f(x) = select(g(x) > 0.5f, sqrt(g(x)), cast<float>((x & mask) << 1));
    f.set_estimates({{0, 16}});
    const FunctionDAG dag = FunctionDAG::build(Pipeline(f));
    // Halide CSEs a definition's values: f = let t = g(x) in select(t > 0.5f, sqrt_f32(t),
    // float32((x & mask) << 1)). A float let of one Func load, read through 2 float variables;
    // a select with a float result, of a float compare (GT counts as LT, under its operands'
    // type) with the float const 0.5; sqrt is an extern call; & and << are int intrinsics of x,
    // the int param and the shift's const 1; 3 int variables (the call's x, the &'s, the LHS's).
    EXPECT_EQ(nonzero(dag, "f"), (Features{{"op.let.float32", 1},
                                           {"op.func_call.float32", 1},
                                           {"op.variable.float32", 2},
                                           {"op.select.float32", 1},
                                           {"op.lt.float32", 1},
                                           {"op.const.float32", 1},
                                           {"op.extern_call.float32", 1},
                                           {"op.cast.float32", 1},
                                           {"op.bitwise.uint32", 1},
                                           {"op.param.uint32", 1},
                                           {"op.shift.uint32", 1},
                                           {"op.const.uint32", 1},
                                           {"op.variable.uint32", 3},
                                           {"access.pointwise.func.float32", 1},
                                           {"access.pointwise.store.float32", 1}}));
}

// Every access of every stage of every app meets at least one class rule: per kind and type,
// the class counts sum to at least the calls, and the store's to at least the Tuple elements.
class AppPipelineFeatures : public ::testing::TestWithParam<std::string> {};

TEST_P(AppPipelineFeatures, EveryAccessFallsInAClass) {
    using F = PipelineFeatures;
    apps::BuiltApp app = apps::build_app(GetParam(), /*small=*/false);
    const FunctionDAG dag = FunctionDAG::build(app.pipeline);
    const std::pair<F::AccessKind, F::OpType> loads[] = {{F::AccessKind::LoadFunc, F::OpType::FuncCall},
                                                         {F::AccessKind::LoadSelf, F::OpType::SelfCall},
                                                         {F::AccessKind::LoadImage, F::OpType::ImageCall}};
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        for (const Stage &stage : dag.nodes[n].stages) {
            const F f = compute_pipeline_features(dag, int(n), stage.index);
            auto classified = [&](F::AccessKind kind, F::ScalarType t) {
                int64_t sum = 0;
                for (int c = 0; c < F::kNumAccessClasses; c++) sum += f.accesses(F::AccessClass(c), kind, t);
                return sum;
            };
            int64_t stores = 0;
            for (int t = 0; t < F::kNumTypes; t++) {
                for (const auto &[kind, call] : loads) {
                    EXPECT_GE(classified(kind, F::ScalarType(t)), f.ops(call, F::ScalarType(t))) << stage.name << "\n"
                                                                                                 << f.describe();
                }
                stores += classified(F::AccessKind::Store, F::ScalarType(t));
            }
            EXPECT_GE(stores, int64_t(stage.definition.values().size())) << stage.name << "\n" << f.describe();
        }
    }
}

INSTANTIATE_TEST_SUITE_P(PipelineFeatures, AppPipelineFeatures, ::testing::ValuesIn(apps::app_names()),
                         [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

} // namespace
} // namespace schedforge::featurize
