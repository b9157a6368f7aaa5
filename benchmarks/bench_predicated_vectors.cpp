// bench-predicated-vectors: what a predicated vector step costs against a whole one, in the
// loops where guarded tails put them, on one thread.
//
//   bench-predicated-vectors [--repeats 20]
//
// Halide 14 turns a guarded tail (TailStrategy::GuardWithIf) of a vectorized loop into the
// vector's predicate: masked loads and stores. The schedule features count such a vector as
// vector_width scalar lanes (featurize/schedule_features.cpp). Each case runs one loop over a
// block 3, 3.5 and 4 vectors wide (constant extents, as inside a tile) for 64Ki rows. A whole
// step's cost is the 4-wide run's time over its steps (an upper bound: the row's fixed work is
// in it); a predicated step's is the 3.5-wide run less the 3-wide one, so fixed costs (calls,
// the consumer's work) cancel. (The 4-wide less the 3-wide run is no measure of a whole step:
// 3 and 4 independent vectors can run in the same time, and did.) Kinds of loop:
//   registers: out(x, y) = sum over r of a(x, r) * b(r, y), a 4 x 2-vector block unrolled inside
//              the reduction loop (the accumulators can stay in registers);
//   L1:        the same over a 4 x 32-vector block (the accumulators go through L1);
//   r inner:   the same with the reduction loop inside each vector (one register accumulates);
//   pure:      p(x, y) = a(x, y % 256) * 3 + 1, computed per row of a consumer that reads two
//              of its points.
#include "runner/host_target.h"
#include "tools/cli.h"
#include "tools/table.h"

#include "Halide.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace Halide;
namespace runner = schedforge::runner;

enum class Block { Registers, L1, ReductionInner, Pure };
constexpr int kRows = 256;

struct Case {
    const char *name;
    Block block;
    Type type;
};

// Seconds for kRows * kRows rows of the case's loop over a block `width` points wide (the
// fastest of `repeats` runs), on one thread.
double seconds_per_run(const Case &c, int width, int vector, int repeats, const Target &target) {
    const int k = kRows;
    const int rows = c.block == Block::Pure ? kRows * kRows : kRows; // accumulations: times k
    Buffer<> a(c.type, width + vector, k), b(c.type, k, rows);
    std::memset(a.data(), 0, a.size_in_bytes());
    std::memset(b.data(), 0, b.size_in_bytes());
    ImageParam ia(c.type, 2, "a"), ib(c.type, 2, "b");
    ia.set(a), ib.set(b);
    Var x("x"), y("y"), yo("yo"), yi("yi"), xv("xv");
    Func out("out");
    Buffer<> result;
    if (c.block == Block::Pure) {
        Func p("p");
        p(x, y) = ia(x, y % k) * cast(c.type, 3) + cast(c.type, 1);
        out(y) = p(0, y) + p(width - 1, y);
        p.compute_at(out, y).vectorize(x, vector, TailStrategy::GuardWithIf);
        result = Buffer<>(c.type, rows);
    } else {
        Func prod("prod");
        RDom r(0, k, "r");
        prod(x, y) = cast(c.type, 0);
        prod(x, y) += ia(x, r) * ib(r, y);
        out(x, y) = prod(x, y);
        out.bound(x, 0, width).split(y, yo, yi, c.block == Block::L1 ? 32 : 2);
        out.vectorize(x, vector, TailStrategy::GuardWithIf);
        prod.compute_at(out, yo).vectorize(x, vector, TailStrategy::GuardWithIf);
        Stage u = prod.update();
        u.split(x, x, xv, vector, TailStrategy::GuardWithIf).vectorize(xv);
        if (c.block == Block::ReductionInner) {
            u.reorder(r, xv, x, y);
        } else {
            u.reorder(xv, x, y, r);
            if (c.block == Block::Registers) u.unroll(x).unroll(y);
        }
        result = Buffer<>(c.type, width, rows);
    }
    out.compile_jit(target);
    out.realize(result); // warm
    double best = 1e30;
    for (int i = 0; i < repeats; i++) {
        const auto start = std::chrono::steady_clock::now();
        out.realize(result);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Cost of a predicated vector step against a whole one, per kind of loop.", "bench-predicated-vectors"};
    int repeats = 20;
    app.add_option("--repeats", repeats, "timed runs per pipeline (the fastest counts)")->capture_default_str();
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        if (repeats < 1) throw schedforge::UserError("--repeats must be positive");
        const Target target = runner::host_target();
        const std::vector<Case> cases = {
            {"f32 registers", Block::Registers, Float(32)},    {"f32 L1", Block::L1, Float(32)},
            {"f32 r inner", Block::ReductionInner, Float(32)}, {"f32 pure", Block::Pure, Float(32)},
            {"int32 registers", Block::Registers, Int(32)},    {"int32 L1", Block::L1, Int(32)},
            {"int32 r inner", Block::ReductionInner, Int(32)}, {"int32 pure", Block::Pure, Int(32)},
        };
        std::printf("one thread, target %s; per step: one vector of the block's accumulation (pure: of the stage)\n",
                    target.to_string().c_str());
        schedforge::tools::Table table({"case", "vector", "ns / whole step", "ns / predicated step", "ratio"});
        for (const Case &c : cases) {
            const int vector = target.natural_vector_size(c.type);
            const double three = seconds_per_run(c, 3 * vector, vector, repeats, target);
            const double tail = seconds_per_run(c, 3 * vector + vector / 2, vector, repeats, target);
            const double four = seconds_per_run(c, 4 * vector, vector, repeats, target);
            const double steps = double(kRows) * kRows;
            const double whole = four / (4 * steps), predicated = (tail - three) / steps;
            table.add_row({c.name, std::to_string(vector), schedforge::tools::format_number("%.3f", whole * 1e9),
                           schedforge::tools::format_number("%.3f", predicated * 1e9),
                           schedforge::tools::format_number("%.2f", predicated / whole)});
        }
        table.print(std::cout);
        return 0;
    });
}
