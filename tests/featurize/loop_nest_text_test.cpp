// LoopNests as text (what datasets store): every nest, complete or partial, reads back as the
// same schedule with the same features, and text that does not describe a legal nest of this
// pipeline is refused with a message that says why.
#include "common/errors.h"
#include "featurize/apply.h"
#include "featurize/loop_nest_text.h"
#include "featurize/random_loop_nest.h"
#include "featurize/schedule_features.h"
#include "generator/build.h"
#include "generator/config.h"
#include "generator/synthesize.h"
#include "runner/host_target.h"

#include <gtest/gtest.h>

#include <regex>

namespace schedforge::featurize {
namespace {

struct Built {
    gen::BuiltPipeline built;
    FunctionDAG dag;
    explicit Built(uint64_t seed) : built(gen::build_pipeline(gen::synthesize_pipeline(gen::GeneratorConfig(), seed))) {
        dag = FunctionDAG::build(built.pipeline);
    }
};

void expect_refused(const FunctionDAG &dag, const std::string &text, const std::string &why) {
    try {
        parse_nest_text(dag, text);
        ADD_FAILURE() << "accepted:\n" << text;
    } catch (const UserError &e) {
        EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
}

TEST(LoopNestText, RandomNestsReadBackAsTheSameSchedule) {
    const Halide::Target target = runner::jit_target();
    for (uint64_t seed = 0; seed < 12; seed++) {
        Built p(seed);
        for (uint64_t k = 0; k < 3; k++) {
            const LoopNest nest = random_loop_nest(p.dag, target, seed * 100 + k);
            const std::string text = nest_text(p.dag, nest);
            const LoopNest back = parse_nest_text(p.dag, text);
            EXPECT_EQ(nest_text(p.dag, back), text);
            EXPECT_EQ(schedule_source(p.dag, back), schedule_source(p.dag, nest));
            const auto a = compute_schedule_features(p.dag, nest, target);
            const auto b = compute_schedule_features(p.dag, back, target);
            ASSERT_EQ(a.size(), b.size());
            for (size_t i = 0; i < a.size(); i++) EXPECT_EQ(a[i].features.values(), b[i].features.values());
        }
    }
}

TEST(LoopNestText, PartialAndEmptyNestsReadBack) {
    Built p(3);
    const LoopNest empty(p.dag);
    EXPECT_EQ(nest_text(p.dag, parse_nest_text(p.dag, nest_text(p.dag, empty))), nest_text(p.dag, empty));
    // The output alone at root: its producers unscheduled.
    LoopNest partial = random_loop_nest(p.dag, runner::jit_target(), 7);
    for (size_t n = 0; n < p.dag.nodes.size(); n++) {
        if (!p.dag.nodes[n].is_output) partial.funcs[n] = FuncSchedule{};
    }
    EXPECT_EQ(nest_text(p.dag, parse_nest_text(p.dag, nest_text(p.dag, partial))), nest_text(p.dag, partial));
}

TEST(LoopNestText, TextOfAnotherPipelineOrVersionIsRefused) {
    Built a(3), b(4);
    const std::string text = nest_text(a.dag, random_loop_nest(a.dag, runner::jit_target(), 1));
    expect_refused(b.dag, text, a.dag.nodes.size() == b.dag.nodes.size() ? "is '" : "nodes, the pipeline has");
    expect_refused(a.dag, std::regex_replace(text, std::regex("^schedforge-loop-nest 1"), "schedforge-loop-nest 2"),
                   "version 2, this build reads version 1");
    expect_refused(a.dag, "", "ends early");
    expect_refused(a.dag, text.substr(0, text.size() / 2), "line");
    expect_refused(a.dag, text + "node 99 extra\n", "text after the last node");
}

TEST(LoopNestText, MalformedOrIllegalNestsAreRefused) {
    Built p(3);
    const LoopNest nest = random_loop_nest(p.dag, runner::jit_target(), 2);
    const std::string text = nest_text(p.dag, nest);
    // A tile extent that is not a positive integer.
    const std::string bad_extent =
        std::regex_replace(text, std::regex("tiles [0-9]+"), "tiles 0x", std::regex_constants::format_first_only);
    if (bad_extent != text) expect_refused(p.dag, bad_extent, "bad tile extent");
    // A site at a node that does not exist.
    expect_refused(p.dag,
                   std::regex_replace(text, std::regex("compute root"), "compute at 999.0.0",
                                      std::regex_constants::format_first_only),
                   "bad site");
    // Anything but the canonical spelling: extra tokens, spaces, trailing separators.
    auto first = [&](const std::string &pattern, const std::string &by) {
        return std::regex_replace(text, std::regex(pattern), by, std::regex_constants::format_first_only);
    };
    expect_refused(p.dag, first("stages ([0-9]+)\n", "stages $1 junk\n"), "malformed");
    expect_refused(p.dag, first("node 0 ", "node  0 "), "line 2");
    expect_refused(p.dag, first(" unroll ([01])\n", " unroll $1 \n"), "malformed");
    expect_refused(p.dag, text + "\n", "text after the last node");
    // Sites and stage counts that disagree, which validate() would not look at.
    const size_t last = p.dag.nodes.size() - 1; // an input
    ASSERT_TRUE(p.dag.nodes[last].is_input);
    expect_refused(p.dag,
                   std::regex_replace(text, std::regex("node " + std::to_string(last) + " (\\S+) compute unscheduled"),
                                      "node " + std::to_string(last) + " $1 compute root"),
                   "is scheduled");
    expect_refused(p.dag, first("compute root store root stages [0-9]+", "compute root store root stages 0"),
                   "stage tilings");
    // The output (node 0) computed inside its own loops: well-formed, but not a legal schedule.
    ASSERT_TRUE(p.dag.nodes[0].is_output);
    expect_refused(p.dag,
                   std::regex_replace(text, std::regex("compute root store root"), "compute at 0.0.0 store at 0.0.0",
                                      std::regex_constants::format_first_only),
                   "not legal");
}

TEST(StableName, DropsOnlyHalidesProcessCounters) {
    EXPECT_EQ(stable_name("s1_boundary$10"), "s1_boundary");
    EXPECT_EQ(stable_name("sum$2.update(0)"), "sum.update(0)");
    EXPECT_EQ(stable_name("lambda_3"), "lambda");
    EXPECT_EQ(stable_name("lambda_12$4.update(1)"), "lambda.update(1)");
    // Names a user chose keep their digits.
    EXPECT_EQ(stable_name("x_1"), "x_1");
    EXPECT_EQ(stable_name("blur_2"), "blur_2");
    EXPECT_EQ(stable_name("my_lambda_3"), "my_lambda_3");
    EXPECT_EQ(stable_name("lambda_x"), "lambda_x");
    EXPECT_EQ(stable_name("f$"), "f$");
    EXPECT_EQ(stable_name("_3"), "_3");
}

} // namespace
} // namespace schedforge::featurize
