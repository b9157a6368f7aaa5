// The codegen guard (featurize/codegen_guard.h) on the schedule of a random pipeline that
// segfaulted in a dataset run (train-3001, pipeline seed 760328982247304095, sample 7), reduced:
// `third` reads every third column of a transposed Func stored per column tile, under an unrolled
// row loop, so the addresses of some strided loads fold to constants; Halide 14 declared the dense
// loads behind them aligned to 64 bytes, and on AVX-512 one of them was not.
#include "featurize/codegen_guard.h"
#include "runner/host_target.h"

#include <gtest/gtest.h>

namespace schedforge::featurize {
namespace {

using namespace Halide::Internal;

// Counts the loads that Halide 14 mishandles: a strided vector at a constant index whose alignment
// is recorded as exact. Added after the guard, it sees the loads the guard leaves (no later
// lowering pass computes alignments again).
class CountExactStridedLoads : public IRMutator {
    using IRMutator::visit;
    Halide::Expr visit(const Load *op) override {
        const Ramp *ramp = op->index.as<Ramp>();
        if (ramp && ramp->base.as<IntImm>() && !is_const_one(ramp->stride) && op->alignment.modulus == 0) count++;
        return IRMutator::visit(op);
    }

public:
    int count = 0;
};

struct ThirdColumns {
    Halide::Var x{"x"}, y{"y"};
    Halide::Func source{"source"}, transposed{"transposed"}, third{"third"};
    Halide::Pipeline pipeline;
    static constexpr int kWidth = 70, kHeight = 243;

    ThirdColumns() {
        source(x, y) = Halide::cast<uint32_t>(x + 1000 * y);
        transposed(x, y) = source(y, x);
        third(x, y) = transposed(3 * x, 2 * y);
        Halide::Var xo("xo"), xi("xi"), xv("xv"), yo("yo"), yi("yi"), yii("yii"), tile("tile");
        third.split(x, xo, xi, kWidth, Halide::TailStrategy::ShiftInwards)
            .split(xi, xi, xv, 16, Halide::TailStrategy::ShiftInwards)
            .split(y, yo, yi, 128, Halide::TailStrategy::ShiftInwards)
            .split(yi, yi, yii, 4, Halide::TailStrategy::ShiftInwards)
            .reorder({xv, xi, yii, xo, yi, yo})
            .vectorize(xv)
            .unroll(yii)
            .parallel(yo);
        Halide::Var tx("tx"), txv("txv");
        transposed.split(x, tx, txv, 16, Halide::TailStrategy::ShiftInwards).vectorize(txv).compute_at(third, xo);
        source.compute_root();
        pipeline = Halide::Pipeline(third);
    }

    // Compiles (the counter runs last), and returns how many mishandled loads reach codegen.
    int exact_strided_loads() {
        auto *counter = new CountExactStridedLoads; // the pipeline owns it
        pipeline.add_custom_lowering_pass(counter);
        pipeline.compile_to_module({}, "third_columns", runner::jit_target());
        return counter->count;
    }
};

TEST(CodegenGuard, ForgetsTheAlignmentOfConstantStridedLoads) {
    ThirdColumns unguarded;
    EXPECT_GT(unguarded.exact_strided_loads(), 0) << "the schedule no longer makes the loads Halide 14 mishandles";
    ThirdColumns guarded;
    guard_codegen(guarded.pipeline);
    guard_codegen(guarded.pipeline); // idempotent
    EXPECT_EQ(guarded.pipeline.custom_lowering_passes().size(), 1u);
    EXPECT_EQ(guarded.exact_strided_loads(), 0);
}

TEST(CodegenGuard, TheGuardedScheduleRunsAndIsRight) {
    // Without the guard this faults on AVX-512 hosts (an aligned load at an address 4 mod 64);
    // elsewhere it checks only that the guarded code computes the right values.
    ThirdColumns guarded;
    guard_codegen(guarded.pipeline);
    const Halide::Buffer<uint32_t> out =
        guarded.pipeline.realize({ThirdColumns::kWidth, ThirdColumns::kHeight}, runner::jit_target());
    int wrong = 0;
    out.for_each_element([&](int x, int y) { wrong += out(x, y) != uint32_t(2 * y + 1000 * 3 * x); });
    EXPECT_EQ(wrong, 0);
}

} // namespace
} // namespace schedforge::featurize
