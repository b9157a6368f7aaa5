// The builder (build.cpp) and the reference interpreter (expr_eval.h) give every expression op
// the same meaning: Halide's values of random pointwise stages equal the interpreter's, exactly
// for integer and bool trees, and to a relative 1e-3 for float trees (the interpreter computes
// floats in long double).
#include "generator/build.h"
#include "generator/config.h"
#include "generator/expr_eval.h"
#include "generator/synthesize.h"
#include "runner/host_target.h"

#include <gtest/gtest.h>

#include <cmath>

namespace schedforge::gen {
namespace {

// Element i of a dense buffer, as a number.
long double value_at(const Halide::Buffer<> &b, size_t i) {
    const Halide::Type t = b.type();
    auto get = [&](auto tag) {
        using V = decltype(tag);
        return (long double)static_cast<const V *>(b.data())[i];
    };
    if (t.is_float()) return get(float{});
    if (t.is_bool()) return get(bool{});
    if (t == Halide::UInt(8)) return get(uint8_t{});
    if (t == Halide::UInt(16)) return get(uint16_t{});
    if (t == Halide::UInt(32)) return get(uint32_t{});
    if (t == Halide::Int(8)) return get(int8_t{});
    if (t == Halide::Int(16)) return get(int16_t{});
    return get(int32_t{});
}

// True when the tree computes a float (loads and constants are exact; every float op, and every
// conversion to float, rounds to float32 in Halide but not in the interpreter).
bool computes_float(const std::vector<ExprNode> &expr) {
    for (const ExprNode &e : expr) {
        if (e.type == ScalarType::Float32 && e.op != ExprOp::Load && e.op != ExprOp::Const) return true;
    }
    return false;
}

// Checks every pointwise stage of `spec` whose tree is integer-only or has a float result
// against the interpreter (gtest failures); returns how many it checked.
int check_pointwise_stages(const PipelineSpec &spec) {
    const Halide::Target target = runner::jit_target().with_feature(Halide::Target::StrictFloat);
    int checked = 0;
    for (size_t i = 0; i < spec.nodes.size(); i++) {
        const Node &node = spec.nodes[i];
        if (node.kind != StageKind::Pointwise) continue;
        // A computed float that becomes an integer may round differently by one: compare only
        // integer-only trees exactly, and float results with a tolerance.
        const bool floats = computes_float(node.expr);
        if (floats && node.type != ScalarType::Float32) continue;
        SCOPED_TRACE("node " + std::to_string(i) + ": " + expr_to_text(node.expr));
        BuiltPipeline built = build_pipeline(spec);
        built.schedule_compute_root();
        std::vector<Halide::Func> outputs = {built.funcs[i]};
        // The producers' values at the same points, through identity copies: a producer that
        // is itself an output would need its buffer to cover every other use of it too.
        for (int p : node.producers) {
            Halide::Func copy("copy_of_" + built.funcs[size_t(p)].name());
            copy(built.funcs[size_t(p)].args()) = built.funcs[size_t(p)](built.funcs[size_t(p)].args());
            outputs.push_back(copy);
        }
        std::vector<Halide::Buffer<>> buffers;
        for (const Halide::Func &f : outputs) {
            std::vector<int> sizes(node.extents.begin(), node.extents.end());
            buffers.emplace_back(f.output_types()[0], sizes);
        }
        Halide::Pipeline(outputs).realize(Halide::Realization(buffers), target);
        int mismatches = 0;
        for (size_t e = 0; e < buffers[0].number_of_elements(); e++) { // freshly allocated: dense
            std::vector<long double> slots;
            for (size_t k = 1; k < buffers.size(); k++) slots.push_back(value_at(buffers[k], e));
            const long double want = evaluate_expr(node.expr, slots), got = value_at(buffers[0], e);
            const bool same =
                floats ? std::fabs(double(want - got)) <= 1e-3 * std::max(1.0, std::fabs(double(want))) : want == got;
            if (!same && mismatches++ < 3) {
                std::string in;
                for (long double v : slots) in += std::to_string(double(v)) + " ";
                ADD_FAILURE() << "inputs " << in << "halide " << double(got) << " interpreter " << double(want);
            }
        }
        EXPECT_EQ(mismatches, 0);
        checked++;
    }
    return checked;
}

// The pipeline of `seed` under the default generator config (the datasets' mix).
PipelineSpec default_spec(uint64_t seed) {
    return synthesize_pipeline(
        load_generator_config(std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/generator/default.yaml"), seed);
}

class ExprSemantics : public ::testing::TestWithParam<int> {};

TEST_P(ExprSemantics, HalideMatchesInterpreterOnPointwiseStages) {
    // Small pipelines of pointwise stages only, so every seed has several trees to check.
    GeneratorConfig cfg = load_generator_config(std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/generator/small.yaml");
    for (FlavourMix *mix : {&cfg.imaging, &cfg.dnn}) {
        mix->kind_weights.fill(0);
        mix->kind_weights[int(StageKind::Pointwise)] = 1;
    }
    cfg.max_fan_in = 3;
    const PipelineSpec spec = synthesize_pipeline(cfg, uint64_t(GetParam()));
    const int checked = check_pointwise_stages(spec);
    // The pointwise-only config gives every seed a checkable stage; a seed without one would
    // check nothing, so it fails rather than passing silently.
    EXPECT_GT(checked, 0) << "no pointwise stage here is integer-only or has a float result\n" << spec.to_text();
}

INSTANTIATE_TEST_SUITE_P(Seeds, ExprSemantics, ::testing::Range(0, 40));

// An int32 stage adding two negative constants (-8 + -11 goes through uint32 and wraps there)
// compiled under no schedule: Halide 14's simplifier reported signed integer overflow folding it
// (a dataset lost every sample of this pipeline). The builder folds such constants itself.
TEST(ExprSemantics, WrappingConstantOperandsCompileAndMatchTheInterpreter) {
    const PipelineSpec spec = default_spec(18156234139965656997ULL);
    ASSERT_NE(spec.to_text().find("(add:i32 (const:i32 -8) (const:i32 -11))"), std::string::npos) << spec.to_text();
    EXPECT_GT(check_pointwise_stages(spec), 0);
}

// A LUT int32(uint32(abs(min(i, -2))) + uint32(-12)): once Halide's simplifier knows i >= 0 the
// uint32 sum is a constant above 2^31, and Halide 14 reported casting it to int32 as signed
// overflow, so the pipeline compiled under no schedule (a dataset lost all its samples). The
// builder now reinterprets the bits instead of casting them.
TEST(ExprSemantics, WrappingResultsThatFoldAboveIntMaxCompileAndMatchTheInterpreter) {
    const PipelineSpec spec = default_spec(11420844545618819108ULL);
    const Node &lut = spec.nodes[4];
    ASSERT_EQ(lut.kind, StageKind::Lut) << spec.to_text();
    ASSERT_NE(spec.to_text().find("(const:i32 -12)"), std::string::npos) << spec.to_text();
    BuiltPipeline built = build_pipeline(spec);
    built.schedule_compute_root();
    EXPECT_NO_THROW(built.run(runner::jit_target()));
    const Halide::Buffer<int32_t> table = built.funcs[4].realize({int(lut.extents[0])}, runner::jit_target());
    for (int i = 0; i < table.width(); i++) {
        EXPECT_EQ(table(i), int32_t(evaluate_expr(lut.expr, {static_cast<long double>(i)}))) << "entry " << i;
    }
}

// float32 -> uint8 (saturating) -> int8 (wrapping) -> float32: Halide 14's simplifier folded the
// two integer casts into one float-to-int8 cast, undefined for 128..255, so the values were 127
// in scalar code and 156 where vectorized instead of -100 (a bootstrap round lost 13 of one
// pipeline's 16 samples as wrong output). The builder keeps the casts apart with a reinterpret.
TEST(ExprSemantics, SaturateThenWrapIsNotFoldedIntoAnUndefinedCast) {
    const PipelineSpec spec = default_spec(6312397245161005812ULL);
    ASSERT_NE(spec.to_text().find("(cast:f32 (cast:i8 (cast:u8 (load:f32 0))))"), std::string::npos) << spec.to_text();
    EXPECT_GT(check_pointwise_stages(spec), 0);
}

TEST(ExprEval, IntegerOpsWrapLikeHalide) {
    using T = ScalarType;
    // (x * y) in uint8 wraps; int32 products wrap through uint32; float->int saturates.
    std::vector<ExprNode> mul = {
        {ExprOp::Load, T::UInt8, 0, {}}, {ExprOp::Load, T::UInt8, 1, {}}, {ExprOp::Mul, T::UInt8, 0, {0, 1}}};
    EXPECT_EQ(evaluate_expr(mul, {200, 3}), 88);
    std::vector<ExprNode> mul32 = {
        {ExprOp::Load, T::Int32, 0, {}}, {ExprOp::Load, T::Int32, 1, {}}, {ExprOp::Mul, T::Int32, 0, {0, 1}}};
    EXPECT_EQ(evaluate_expr(mul32, {65536, 65536}), 0);
    EXPECT_EQ(evaluate_expr(mul32, {2147483647, 2}), -2);
    std::vector<ExprNode> sat = {{ExprOp::Load, T::Float32, 0, {}}, {ExprOp::Cast, T::Int8, 0, {0}}};
    EXPECT_EQ(evaluate_expr(sat, {1000.5L}), 127);
    EXPECT_EQ(evaluate_expr(sat, {-3.7L}), -3);
    std::vector<ExprNode> div = {
        {ExprOp::Load, T::Int16, 0, {}}, {ExprOp::Load, T::Int16, 1, {}}, {ExprOp::Div, T::Int16, 4, {0, 1}}};
    EXPECT_EQ(evaluate_expr(div, {-7, 100}), -2); // floor(-7 / clamp(100, 1, 4))
}

TEST(ExprEval, CancellingExpressionIsDetected) {
    using T = ScalarType;
    // (a + 6) - (a + 10) does not depend on a.
    std::vector<ExprNode> e = {{ExprOp::Load, T::Int16, 0, {}},    {ExprOp::Const, T::Int16, 6, {}},
                               {ExprOp::Add, T::Int16, 0, {0, 1}}, {ExprOp::Load, T::Int16, 0, {}},
                               {ExprOp::Const, T::Int16, 10, {}},  {ExprOp::Add, T::Int16, 0, {3, 4}},
                               {ExprOp::Sub, T::Int16, 0, {2, 5}}};
    common::Rng rng(1);
    EXPECT_FALSE(every_slot_matters(e, {T::Int16}, rng));
    e.back().op = ExprOp::Mul;
    EXPECT_TRUE(every_slot_matters(e, {T::Int16}, rng));
}

} // namespace
} // namespace schedforge::gen
