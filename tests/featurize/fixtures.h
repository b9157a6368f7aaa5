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

// matmul: prod(x, y) = sum_k a(k, y) * b(x, k) over k in [0, 16) (a's width); out(x, y) =
// prod(x, y), estimated 32x32.
struct MatmulPipeline {
    Halide::ImageParam a{Halide::Float(32), 2, "a"}, b{Halide::Float(32), 2, "b"};
    Halide::Var x{"x"}, y{"y"};
    Halide::RDom k{0, a.dim(0).extent(), "k"};
    Halide::Func prod{"prod"}, out{"out"};
    MatmulPipeline() {
        prod(x, y) = 0.0f;
        prod(x, y) += a(k, y) * b(x, k);
        out(x, y) = prod(x, y);
        a.set_estimates({{0, 16}, {0, 32}});
        b.set_estimates({{0, 32}, {0, 16}});
        out.set_estimates({{0, 32}, {0, 32}});
    }
};

// A conv layer: conv(c, x, y, n) = bias(c) + sum over r (3 x 3 x 4) of filter(c, r.x, r.y, r.z) *
// input(r.z, x + r.x, y + r.y, n); relu = max(conv, 0). float; relu estimated 8 x 8 x 8 x 2
// (channels, width, height, batch), input 4 x 10 x 10 x 2.
struct ConvLayerPipeline {
    Halide::ImageParam input{Halide::Float(32), 4, "input"}, filter{Halide::Float(32), 4, "filter"},
        bias{Halide::Float(32), 1, "bias"};
    Halide::Var c{"c"}, x{"x"}, y{"y"}, n{"n"};
    Halide::RDom r{0, 3, 0, 3, 0, 4, "r"};
    Halide::Func conv{"conv"}, relu{"relu"};
    ConvLayerPipeline() {
        conv(c, x, y, n) = bias(c);
        conv(c, x, y, n) += filter(c, r.x, r.y, r.z) * input(r.z, x + r.x, y + r.y, n);
        relu(c, x, y, n) = max(conv(c, x, y, n), 0.0f);
        input.set_estimates({{0, 4}, {0, 10}, {0, 10}, {0, 2}});
        filter.set_estimates({{0, 8}, {0, 3}, {0, 3}, {0, 4}});
        bias.set_estimates({{0, 8}});
        relu.set_estimates({{0, 8}, {0, 8}, {0, 8}, {0, 2}});
    }
};

} // namespace schedforge::featurize::testing
