// Small fixed pipelines the featurize tests derive expected values from by hand.
#pragma once

#include <Halide.h>

#include <string>

namespace schedforge::featurize::testing {

// Halide makes Func names unique per process ("blur_x$2"); tests name Funcs by what they wrote.
inline std::string base(const std::string &name) { return name.substr(0, name.find('$')); }

// A separable 3x3 blur: uint16 in (estimated 100x80) -> blur_x -> blur_y (estimated 64x48).
// blur_x(x, y) = in(x - 1, y) + in(x, y) + in(x + 1, y); blur_y sums blur_x over y - 1 .. y + 1.
struct BlurPipeline {
    Halide::ImageParam in{Halide::UInt(16), 2, "in"};
    Halide::Var x{"x"}, y{"y"};
    Halide::Func bx{"blur_x"}, by{"blur_y"};
    BlurPipeline() {
        bx(x, y) = in(x - 1, y) + in(x, y) + in(x + 1, y);
        by(x, y) = bx(x, y - 1) + bx(x, y) + bx(x, y + 1);
        in.set_estimates({{0, 100}, {0, 80}});
        by.set_estimates({{0, 64}, {0, 48}});
    }
};

} // namespace schedforge::featurize::testing
