// bench-math-calls: what one call of each float math function costs in a vectorized Halide stage,
// as a ratio against sin in the same process: the source of featurize's library_call_cost table.
//
//   bench-math-calls [--width 16] [--repeats 30]
//
// Each function is applied to every point of a 256 x 128 float buffer (128 KiB in, 128 KiB out:
// cached) by a stage vectorized across x, on one thread; the time per point less a plain copy's
// is the function's cost. Halide 14 computes some functions with vector code of its own (exp,
// log, pow, erf, sqrt) and leaves the others to the C math library, one call per lane: the
// ratios show the two kinds apart. So do integer divisions: by a constant, a multiply and shifts;
// by a value known only at run time, one lane at a time (x86 has no vector integer division), and
// 64-bit lanes by a constant too, but for powers of two (no 64-bit vector multiply-high).
// The table lists which kind featurize counts each as.
#include "common/stopwatch.h"
#include "featurize/function_dag.h"
#include "runner/host_target.h"
#include "tools/cli.h"
#include "tools/table.h"

#include "Halide.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace {

using namespace Halide;
namespace runner = schedforge::runner;

struct Case {
    const char *name;
    Expr value;
    bool lane_division = false; // counted as kRuntimeDivisionCost, not by name
};

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Cost of one math call per point in a vectorized stage, against sin's.", "bench-math-calls"};
    int width = 16, repeats = 30;
    app.add_option("--width", width, "vector width of the stage")->capture_default_str();
    app.add_option("--repeats", repeats, "timed batches of 10 runs (the fastest counts)")->capture_default_str();
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        if (width < 1 || repeats < 1) throw schedforge::UserError("--width and --repeats must be positive");
        const int w = 256, h = 128;
        Buffer<float> in(w, h);
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) in(x, y) = 0.0017f * float((x * 7 + y * 13) % 1000) + 0.05f; // (0.05, 1.75)
        }
        const Target target = runner::host_target();
        Var x("x"), y("y");
        // Seconds per point of a stage computing `e` at every point.
        auto time_per_point = [&](const Expr &e) {
            Func f("f");
            f(x, y) = e;
            f.vectorize(x, width);
            f.compile_jit(target);
            Buffer<float> out(w, h);
            f.realize(out);
            double best = 1e30;
            for (int r = 0; r < repeats; r++) {
                const auto start = std::chrono::steady_clock::now();
                for (int k = 0; k < 10; k++) f.realize(out);
                best = std::min(best, schedforge::seconds_since(start) / 10);
            }
            return best / double(w * h);
        };
        const Expr v = in(x, y), unit = clamp(v, 0.05f, 0.95f);
        Param<int> divisor("divisor", 37); // known only at run time, as a buffer's extent is
        const Expr i = cast<int>(v * 1000.0f) + x;
        const std::vector<Case> cases = {
            {"add", v + 1.0f},
            {"floor", floor(v * 3.0f)},
            {"sqrt", sqrt(v)},
            {"exp", exp(v)},
            {"log", log(v)},
            {"erf", erf(v)},
            {"pow", pow(v, 1.3f)},
            {"sin", sin(v)},
            {"cos", cos(v)},
            {"tan", tan(v)},
            {"asin", asin(unit)},
            {"acos", acos(unit)},
            {"atan", atan(v)},
            {"atan2", atan2(v, v + 1)},
            {"sinh", sinh(v)},
            {"cosh", cosh(v)},
            {"tanh", tanh(v)},
            {"asinh", asinh(v)},
            {"acosh", acosh(v + 1.0f)},
            {"atanh", atanh(unit)},
            {"int / 37", cast<float>(i / 37)},
            {"int % 37", cast<float>(i % 37)},
            {"int / param", cast<float>(i / divisor), true},
            {"int % param", cast<float>(i % divisor), true},
            {"int16 / param", cast<float>(cast<int16_t>(i) / cast<int16_t>(divisor)), true},
            {"uint8 / param", cast<float>(cast<uint8_t>(i) / cast<uint8_t>(divisor)), true},
            {"int64 / 3", cast<float>(cast<int64_t>(i) / 3), true},
            {"int64 % 3", cast<float>(cast<int64_t>(i) % 3), true},
            {"uint64 / 3", cast<float>(cast<uint64_t>(i) / 3), true},
            {"int64 / 4", cast<float>(cast<int64_t>(i) / 4)},
            {"int64 / param", cast<float>(cast<int64_t>(i) / cast<int64_t>(divisor)), true}};
        const double copy = time_per_point(v), sin_cost = time_per_point(sin(v)) - copy;
        std::printf("a copy: %.3f ns per point; sin: %.3f ns more (vector width %d, target %s)\n", copy * 1e9,
                    sin_cost * 1e9, width, target.to_string().c_str());
        schedforge::tools::Table table({"function", "ns/point", "over copy", "/ sin", "featurize counts"});
        for (const Case &c : cases) {
            const double t = time_per_point(c.value);
            const double counted = c.lane_division
                                       ? schedforge::featurize::kRuntimeDivisionCost
                                       : schedforge::featurize::library_call_cost(std::string(c.name) + "_f32");
            table.add_row({c.name, schedforge::tools::format_number("%.3f", t * 1e9),
                           schedforge::tools::format_number("%.3f", (t - copy) * 1e9),
                           schedforge::tools::format_number("%.2f", (t - copy) / sin_cost),
                           counted > 0 ? schedforge::tools::format_number("%.1f library calls", counted)
                                       : std::string("vector code")});
        }
        table.print(std::cout);
        return 0;
    });
}
