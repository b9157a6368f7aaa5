// synthesize_pipeline: deterministic, well-formed, within the config's bounds, and covering the
// whole vocabulary.
#include "generator/config.h"
#include "generator/synthesize.h"

#include <gtest/gtest.h>

#include <set>

namespace schedforge::gen {
namespace {

TEST(Synthesize, SameSeedSameSpec) {
    const GeneratorConfig cfg;
    for (uint64_t s = 0; s < 50; s++) {
        EXPECT_EQ(synthesize_pipeline(cfg, s).to_text(), synthesize_pipeline(cfg, s).to_text());
    }
}

TEST(Synthesize, TenThousandSeedsGiveTenThousandIds) {
    const GeneratorConfig cfg;
    std::set<uint64_t> ids;
    for (uint64_t s = 0; s < 10000; s++) ids.insert(synthesize_pipeline(cfg, s).id());
    EXPECT_EQ(ids.size(), 10000u);
}

// Structural invariants every spec must hold, whatever the seed.
void check_well_formed(const PipelineSpec &spec, const GeneratorConfig &cfg) {
    ASSERT_GE(spec.output, 0);
    ASSERT_LT(size_t(spec.output), spec.nodes.size());
    const Node &out = spec.nodes[size_t(spec.output)];
    EXPECT_NE(out.kind, StageKind::Input);
    EXPECT_NE(out.type, ScalarType::Bool) << "outputs are numeric";
    EXPECT_TRUE(out.image);
    std::vector<int> consumers(spec.nodes.size(), 0);
    for (size_t i = 0; i < spec.nodes.size(); i++) {
        const Node &n = spec.nodes[i];
        EXPECT_EQ(n.image ? size_t(spec.dims) : n.extents.size(), n.extents.size());
        for (int p : n.producers) {
            ASSERT_LT(size_t(p), i) << "producers come first (topological order)";
            consumers[size_t(p)]++;
        }
        if (n.kind == StageKind::Input) {
            EXPECT_NE(n.type, ScalarType::Bool);
            continue;
        }
        EXPECT_LE(n.elements(), cfg.elements.max) << "node " << i << "\n" << spec.to_text();
        EXPECT_GE(n.elements(), cfg.elements.min) << "node " << i << "\n" << spec.to_text();
        // Combining stages read producers aligned to the same resolution.
        if (n.kind == StageKind::Pointwise || n.kind == StageKind::Gather || n.kind == StageKind::Concat) {
            for (int p : n.producers) {
                EXPECT_EQ(spec.nodes[size_t(p)].res_x, n.res_x) << "node " << i << "\n" << spec.to_text();
                EXPECT_EQ(spec.nodes[size_t(p)].res_y, n.res_y) << "node " << i << "\n" << spec.to_text();
            }
        }
        if (n.kind == StageKind::Pointwise) {
            for (int p : n.producers) EXPECT_EQ(spec.nodes[size_t(p)].extents[2], n.extents[2]) << "channels aligned";
        }
    }
    for (size_t i = 0; i < spec.nodes.size(); i++) {
        if (int(i) != spec.output) {
            EXPECT_GT(consumers[i], 0) << "node " << i << " is dead\n" << spec.to_text();
        }
    }
}

TEST(Synthesize, ThousandSeedsAreWellFormedAndCoverVocabularyAndTypes) {
    const GeneratorConfig cfg;
    std::set<StageKind> kinds;
    std::set<ScalarType> types;
    std::set<int> stage_counts;
    bool saw_dnn = false, saw_imaging = false, saw_fan_in = false, saw_fan_out = false;
    for (uint64_t s = 0; s < 1000; s++) {
        const PipelineSpec spec = synthesize_pipeline(cfg, s);
        check_well_formed(spec, cfg);
        if (HasFailure()) return;
        const int stages = spec.num_stages();
        EXPECT_GE(stages, cfg.stages.min);
        EXPECT_LE(stages, cfg.stages.max);
        stage_counts.insert(stages);
        (spec.dnn ? saw_dnn : saw_imaging) = true;
        EXPECT_EQ(spec.dims, spec.dnn ? 4 : 3);
        std::vector<int> consumers(spec.nodes.size(), 0);
        for (const Node &n : spec.nodes) {
            kinds.insert(n.kind);
            types.insert(n.type);
            int image_producers = 0;
            for (int p : n.producers) {
                consumers[size_t(p)]++;
                image_producers += spec.nodes[size_t(p)].image;
            }
            saw_fan_in |= image_producers >= 2;
        }
        for (int c : consumers) saw_fan_out |= c >= 2;
    }
    for (int k = 0; k < kNumStageKinds; k++) EXPECT_TRUE(kinds.count(StageKind(k))) << kind_name(StageKind(k));
    for (int t = 0; t < kNumScalarTypes; t++) EXPECT_TRUE(types.count(ScalarType(t))) << type_name(ScalarType(t));
    EXPECT_TRUE(saw_dnn && saw_imaging);
    EXPECT_TRUE(saw_fan_in && saw_fan_out) << "pipelines are DAGs, not only chains";
    // Stage counts spread over the configured range rather than piling up at one end.
    EXPECT_GE(stage_counts.size(), size_t(cfg.stages.max - cfg.stages.min));
}

TEST(Synthesize, StageCountsFollowANarrowConfigRange) {
    GeneratorConfig cfg;
    cfg.stages = {20, 24};
    for (uint64_t s = 0; s < 200; s++) {
        const PipelineSpec spec = synthesize_pipeline(cfg, s);
        ASSERT_GE(spec.num_stages(), 20) << spec.to_text();
        ASSERT_LE(spec.num_stages(), 24) << spec.to_text();
    }
}

TEST(Synthesize, ExplicitStageCountIsHonoured) {
    for (uint64_t s = 0; s < 100; s++) EXPECT_EQ(synthesize_pipeline(GeneratorConfig(), s, 16).num_stages(), 16);
}

TEST(Synthesize, WeightsSelectTheVocabulary) {
    GeneratorConfig cfg;
    cfg.dnn_fraction = 0;
    cfg.imaging.kind_weights.fill(0);
    cfg.imaging.kind_weights[int(StageKind::Transpose)] = 1;
    cfg.imaging.type_weights.fill(0);
    cfg.imaging.type_weights[int(ScalarType::Int16)] = 1;
    for (uint64_t s = 0; s < 50; s++) {
        const PipelineSpec spec = synthesize_pipeline(cfg, s);
        for (const Node &n : spec.nodes) {
            // Besides transposes: boundary wrappers, and pointwise merges of several inputs.
            EXPECT_TRUE(n.kind == StageKind::Input || n.kind == StageKind::Boundary || n.kind == StageKind::Transpose ||
                        n.kind == StageKind::Pointwise || n.kind == StageKind::ChannelMix || n.kind == StageKind::Slice)
                << kind_name(n.kind);
            if (n.kind == StageKind::Input && n.image) {
                EXPECT_EQ(n.type, ScalarType::Int16);
            }
        }
    }
}

TEST(Synthesize, DnnPipelinesHaveABatchDimension) {
    GeneratorConfig cfg;
    cfg.dnn_fraction = 1;
    cfg.batch = {3, 3};
    const PipelineSpec spec = synthesize_pipeline(cfg, 5);
    EXPECT_TRUE(spec.dnn);
    for (const Node &n : spec.nodes) {
        if (n.image) {
            ASSERT_EQ(n.extents.size(), 4u);
            EXPECT_EQ(n.extents[3], 3);
        }
    }
}

} // namespace
} // namespace schedforge::gen
