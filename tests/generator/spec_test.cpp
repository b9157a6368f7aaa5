// PipelineSpec: names round-trip, canonical text is stable, the id is the hash of the text.
#include "generator/spec.h"
#include "generator/synthesize.h"

#include <gtest/gtest.h>

namespace schedforge::gen {
namespace {

TEST(Spec, TypeNamesRoundTrip) {
    for (int i = 0; i < kNumScalarTypes; i++) {
        ScalarType t;
        ASSERT_TRUE(parse_type_name(type_name(ScalarType(i)), &t));
        EXPECT_EQ(t, ScalarType(i));
    }
    ScalarType t;
    EXPECT_FALSE(parse_type_name("float64", &t));
}

TEST(Spec, KindNamesRoundTripAndVocabularyExcludesHelpers) {
    for (int i = 0; i < kNumStageKinds; i++) {
        StageKind k;
        ASSERT_TRUE(parse_kind_name(kind_name(StageKind(i)), &k));
        EXPECT_EQ(k, StageKind(i));
    }
    EXPECT_FALSE(is_vocabulary_kind(StageKind::Input));
    EXPECT_FALSE(is_vocabulary_kind(StageKind::Boundary));
    EXPECT_FALSE(is_vocabulary_kind(StageKind::LutApply));
    EXPECT_TRUE(is_vocabulary_kind(StageKind::Conv));
    EXPECT_EQ(vocabulary_kinds().size(), 17u);
}

TEST(Spec, RatioIsReduced) {
    const Ratio r = Ratio::make(6, 4);
    EXPECT_EQ(r.num, 3);
    EXPECT_EQ(r.den, 2);
    EXPECT_EQ(Ratio::make(1, 2) * Ratio::make(2, 1), Ratio{});
}

TEST(Spec, ExpressionTextIsPrefixForm) {
    std::vector<ExprNode> e = {
        {ExprOp::Load, ScalarType::UInt8, 0, {}},
        {ExprOp::Const, ScalarType::UInt8, 3, {}},
        {ExprOp::Add, ScalarType::UInt8, 0, {0, 1}},
    };
    EXPECT_EQ(expr_to_text(e), "(add:u8 (load:u8 0) (const:u8 3))");
}

TEST(Spec, IdIsHashOfCanonicalText) {
    const PipelineSpec a = synthesize_pipeline(GeneratorConfig(), 11);
    PipelineSpec b = a;
    EXPECT_EQ(a.id(), b.id());
    b.nodes.back().params["changed"] = "1";
    EXPECT_NE(a.id(), b.id());
    EXPECT_EQ(format_id(0x1234), "0000000000001234");
}

TEST(Spec, GoldenPipelineIsPinned) {
    // Pins generator semantics: if this changes, pipelines changed, so bump kGeneratorVersion
    // and update the golden values together.
    const PipelineSpec spec = synthesize_pipeline(GeneratorConfig(), 0);
    EXPECT_EQ(spec.generator_version, 1u);
    EXPECT_EQ(format_id(spec.id()), "fdb05a2f79c89951") << spec.to_text();
}

} // namespace
} // namespace schedforge::gen
