// iir_blur: a first-order recursive (IIR) blur of an RGB float image, down then up each column
// and then along each row: y[i] = (1 - a) * x[i] + a * y[i - 1], with a = 0.5.
#include "apps/suite.h"

#include <algorithm>

namespace schedforge::apps {

namespace {

using namespace Halide;

constexpr float kAlpha = 0.5f;

class IirBlur : public App {
public:
    std::string name() const override { return "iir_blur"; }
    std::vector<InputShape> inputs(bool small) const override {
        return {{"input", Float(32), small ? std::vector<int>{41, 37, 3} : std::vector<int>{1536, 2560, 3}}};
    }
    Type output_type() const override { return Float(32); }
    std::vector<int> output_extents(const std::vector<InputShape> &in) const override { return in[0].extents; }
    // Inlined, each recursive pass is recomputed inside its consumer's innermost loop: minutes.
    bool default_schedule_is_practical() const override { return false; }

    Func define(const std::vector<ImageParam> &in) override {
        const ImageParam &input = in[0];
        const Expr w = input.dim(0).extent(), h = input.dim(1).extent();
        // Columns: causal pass down, anti-causal pass up.
        ry_ = RDom(1, h - 1, "ry");
        const RDom &ry = ry_;
        down_(x_, y_, c_) = input(x_, y_, c_);
        down_(x_, ry, c_) = (1 - kAlpha) * input(x_, ry, c_) + kAlpha * down_(x_, ry - 1, c_);
        up_(x_, y_, c_) = down_(x_, y_, c_);
        up_(x_, h - 1 - ry, c_) = (1 - kAlpha) * down_(x_, h - 1 - ry, c_) + kAlpha * up_(x_, h - ry, c_);
        // Rows: the same along x.
        RDom rx(1, w - 1, "rx");
        right_(x_, y_, c_) = up_(x_, y_, c_);
        right_(rx, y_, c_) = (1 - kAlpha) * up_(rx, y_, c_) + kAlpha * right_(rx - 1, y_, c_);
        left_(x_, y_, c_) = right_(x_, y_, c_);
        left_(w - 1 - rx, y_, c_) = (1 - kAlpha) * right_(w - 1 - rx, y_, c_) + kAlpha * left_(w - rx, y_, c_);
        out_(x_, y_, c_) = left_(x_, y_, c_);
        return out_;
    }

    void schedule_manual(const Target &target) override {
        // Column passes: strips of 64 columns (whole cache lines per row) per channel in
        // parallel, vectorized across the strip, the recursion walking down it; the downward
        // pass is computed per strip of the upward one, so the strip stays in cache between
        // them. Row passes: the recursion runs along a row, so each row is blurred by itself,
        // just before the output row that consumes it; output rows in parallel.
        const int vec = target.natural_vector_size<float>(), strip = std::max(64, vec);
        // Guarded vectors: rounding a pass up would read the input beyond its edge.
        const TailStrategy guard = TailStrategy::GuardWithIf;
        Var xo("xo"), xi("xi"), t("t");
        // Both stages of the upward pass walk their strips down the rows (y, or ry for the update).
        auto strips = [&](Stage stage, VarOrRVar rows) {
            stage.split(x_, xo, xi, strip, guard)
                .reorder(xi, rows, xo, c_)
                .fuse(xo, c_, t)
                .parallel(t)
                .vectorize(xi, vec);
        };
        up_.compute_root();
        strips(up_, y_);
        strips(up_.update(), ry_);
        down_.compute_at(up_, t).vectorize(x_, vec, guard);
        down_.update().vectorize(x_, vec, guard);
        out_.reorder(x_, c_, y_).parallel(y_, 8).vectorize(x_, vec);
        for (Func f : {right_, left_}) {
            f.compute_at(out_, y_).vectorize(x_, vec, guard);
            f.update().unscheduled(); // a serial recursion along the row
        }
    }

    Buffer<> reference(const std::vector<Buffer<>> &in) const override {
        const Buffer<float> a = in[0];
        const int w = a.width(), h = a.height();
        Buffer<float> t = a.copy();
        for (int c = 0; c < 3; c++) {
            for (int x = 0; x < w; x++) {
                for (int y = 1; y < h; y++) t(x, y, c) = (1 - kAlpha) * t(x, y, c) + kAlpha * t(x, y - 1, c);
                for (int y = h - 2; y >= 0; y--) t(x, y, c) = (1 - kAlpha) * t(x, y, c) + kAlpha * t(x, y + 1, c);
            }
            for (int y = 0; y < h; y++) {
                for (int x = 1; x < w; x++) t(x, y, c) = (1 - kAlpha) * t(x, y, c) + kAlpha * t(x - 1, y, c);
                for (int x = w - 2; x >= 0; x--) t(x, y, c) = (1 - kAlpha) * t(x, y, c) + kAlpha * t(x + 1, y, c);
            }
        }
        return t;
    }

private:
    Var x_{"x"}, y_{"y"}, c_{"c"};
    RDom ry_;
    Func down_{"down"}, up_{"up"}, right_{"right"}, left_{"left"}, out_{"iir_blur"};
};

} // namespace

std::unique_ptr<App> make_iir_blur() { return std::make_unique<IirBlur>(); }

} // namespace schedforge::apps
