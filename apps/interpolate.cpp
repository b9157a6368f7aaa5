// interpolate: multi-scale interpolation of a sparse RGBA float image. A pyramid of
// premultiplied-alpha images is built by [1 2 1]/4 downsampling (10 levels), then collapsed
// coarse to fine: each level keeps its own colour where it is opaque and takes the upsampled
// coarser level where it is not (over-compositing). The output is the colour divided by alpha.
// Each level is clamped to its own extent, so small images work at any depth.
#include "apps/suite.h"

#include <algorithm>

namespace schedforge::apps {

namespace {

using namespace Halide;

constexpr int kLevels = 10;

class Interpolate : public App {
public:
    std::string name() const override { return "interpolate"; }
    std::vector<InputShape> inputs(bool small) const override {
        return {{"input", Float(32), small ? std::vector<int>{53, 45, 4} : std::vector<int>{1536, 2560, 4}}};
    }
    Type output_type() const override { return Float(32); }
    std::vector<int> output_extents(const std::vector<InputShape> &in) const override {
        return {in[0].extents[0], in[0].extents[1], 3};
    }
    // Inlined, every level recomputes the 3x3 taps of the one above: 9^9 loads per pixel.
    bool default_schedule_is_practical() const override { return false; }

    Func define(const std::vector<ImageParam> &in) override {
        const ImageParam &input = in[0];
        down_.clear(), down_x_.clear(), interp_.clear(), up_x_.clear();
        std::vector<Expr> widths{input.dim(0).extent()}, heights{input.dim(1).extent()};
        for (int l = 1; l < kLevels; l++) {
            widths.push_back((widths.back() + 1) / 2);
            heights.push_back((heights.back() + 1) / 2);
        }
        // Level l read at (x, y), clamped to its extent.
        auto at = [&](const Func &f, int l, Expr x, Expr y) {
            return f(clamp(x, 0, widths[size_t(l)] - 1), clamp(y, 0, heights[size_t(l)] - 1), c_);
        };
        Func premultiplied("premultiplied");
        premultiplied(x_, y_, c_) = select(c_ == 3, input(x_, y_, 3), input(x_, y_, c_) * input(x_, y_, 3));
        down_.push_back(premultiplied);
        for (int l = 1; l < kLevels; l++) {
            Func dx("down_x" + std::to_string(l)), d("down" + std::to_string(l));
            const Func &prev = down_.back();
            dx(x_, y_, c_) = (at(prev, l - 1, 2 * x_ - 1, y_) + 2.0f * at(prev, l - 1, 2 * x_, y_) +
                              at(prev, l - 1, 2 * x_ + 1, y_)) *
                             0.25f;
            // dx clamps y itself (through at()), so its rows need no clamping here.
            d(x_, y_, c_) = (dx(x_, 2 * y_ - 1, c_) + 2.0f * dx(x_, 2 * y_, c_) + dx(x_, 2 * y_ + 1, c_)) * 0.25f;
            down_x_.push_back(dx);
            down_.push_back(d);
        }
        interp_.resize(kLevels);
        interp_[kLevels - 1] = down_[kLevels - 1];
        for (int l = kLevels - 2; l >= 0; l--) {
            Func ux("up_x" + std::to_string(l)), up("up" + std::to_string(l)), f("interp" + std::to_string(l));
            const Func &coarse = interp_[size_t(l + 1)];
            // Linear upsampling: even pixels sit on a coarse pixel, odd ones between two.
            ux(x_, y_, c_) = (at(coarse, l + 1, x_ / 2, y_) + at(coarse, l + 1, (x_ + 1) / 2, y_)) * 0.5f;
            up(x_, y_, c_) = (ux(x_, y_ / 2, c_) + ux(x_, (y_ + 1) / 2, c_)) * 0.5f;
            const Expr alpha = down_[size_t(l)](x_, y_, 3);
            f(x_, y_, c_) = down_[size_t(l)](x_, y_, c_) + (1.0f - alpha) * up(x_, y_, c_);
            up_x_.push_back(ux);
            interp_[size_t(l)] = f;
        }
        out_(x_, y_, c_) = interp_[0](x_, y_, c_) / interp_[0](x_, y_, 3);
        return out_;
    }

    bool has_gpu_schedule() const override { return true; }
    void schedule_manual(const Target &target) override {
        if (target.has_gpu_feature()) {
            // Every pyramid level at root, in blocks of 32x8 threads, each thread a pixel's four
            // channels (unrolled); the passes between levels (down_x, up_x) inlined.
            Var bx("bx"), by("by"), tx("tx"), ty("ty");
            auto on_gpu = [&](Func f, int channels) {
                f.bound(c_, 0, channels).reorder(c_, x_, y_).unroll(c_).gpu_tile(x_, y_, bx, by, tx, ty, 32, 8);
            };
            for (int l = 1; l < kLevels; l++) on_gpu(down_[size_t(l)].compute_root(), 4);
            for (int l = 1; l < kLevels - 1; l++) on_gpu(interp_[size_t(l)].compute_root(), 4);
            on_gpu(out_, 3);
            return;
        }
        // Every pyramid level at root. The fine levels (the first kFineLevels) hold nearly all
        // the work: rows in parallel, vectorized across x, the horizontal downsampling pass per
        // row of its consumer. The coarse levels are a few pixels wide and run as plain loops,
        // which also keeps the code small. The output computes the finest level per row, all four
        // channels at once.
        constexpr int kFineLevels = 4;
        const int vec = target.natural_vector_size<float>();
        for (int l = 1; l < kLevels; l++) {
            Func &d = down_[size_t(l)];
            d.compute_root().bound(c_, 0, 4);
            down_x_[size_t(l - 1)].compute_at(d, y_);
            if (l < kFineLevels) {
                d.reorder(x_, y_, c_).parallel(y_).vectorize(x_, vec);
                down_x_[size_t(l - 1)].vectorize(x_, vec);
            }
        }
        for (int l = 1; l < kLevels - 1; l++) {
            Func &f = interp_[size_t(l)];
            f.compute_root().bound(c_, 0, 4);
            if (l < kFineLevels) f.parallel(y_).vectorize(x_, vec);
        }
        Var yo("yo"), yi("yi");
        out_.reorder(c_, x_, y_).bound(c_, 0, 3).unroll(c_).split(y_, yo, yi, 16).parallel(yo).vectorize(x_, vec);
        interp_[0].compute_at(out_, yi).reorder(c_, x_, y_).bound(c_, 0, 4).unroll(c_).vectorize(x_, vec);
    }

    Buffer<> reference(const std::vector<Buffer<>> &in) const override {
        const Buffer<float> input = in[0];
        std::vector<Buffer<float>> down{Buffer<float>(input.width(), input.height(), 4)};
        down[0].for_each_element(
            [&](int x, int y, int c) { down[0](x, y, c) = c == 3 ? input(x, y, 3) : input(x, y, c) * input(x, y, 3); });
        auto at = [](const Buffer<float> &b, int x, int y, int c) {
            return b(std::clamp(x, 0, b.width() - 1), std::clamp(y, 0, b.height() - 1), c);
        };
        for (int l = 1; l < kLevels; l++) {
            const Buffer<float> &prev = down.back();
            const int w = (prev.width() + 1) / 2, h = (prev.height() + 1) / 2;
            Buffer<float> dx(w, prev.height(), 4), d(w, h, 4);
            dx.for_each_element([&](int x, int y, int c) {
                dx(x, y, c) =
                    (at(prev, 2 * x - 1, y, c) + 2.0f * at(prev, 2 * x, y, c) + at(prev, 2 * x + 1, y, c)) * 0.25f;
            });
            d.for_each_element([&](int x, int y, int c) {
                d(x, y, c) = (at(dx, x, 2 * y - 1, c) + 2.0f * at(dx, x, 2 * y, c) + at(dx, x, 2 * y + 1, c)) * 0.25f;
            });
            down.push_back(d);
        }
        Buffer<float> coarse = down.back();
        for (int l = kLevels - 2; l >= 0; l--) {
            const Buffer<float> &d = down[size_t(l)];
            Buffer<float> ux(d.width(), (d.height() + 1) / 2 + 1, 4), f(d.width(), d.height(), 4);
            ux.for_each_element([&](int x, int y, int c) {
                ux(x, y, c) = (at(coarse, x / 2, y, c) + at(coarse, (x + 1) / 2, y, c)) * 0.5f;
            });
            f.for_each_element([&](int x, int y, int c) {
                const float up = (ux(x, y / 2, c) + ux(x, (y + 1) / 2, c)) * 0.5f;
                f(x, y, c) = d(x, y, c) + (1.0f - d(x, y, 3)) * up;
            });
            coarse = f;
        }
        Buffer<float> out(input.width(), input.height(), 3);
        out.for_each_element([&](int x, int y, int c) { out(x, y, c) = coarse(x, y, c) / coarse(x, y, 3); });
        return out;
    }

private:
    Var x_{"x"}, y_{"y"}, c_{"c"};
    std::vector<Func> down_, down_x_, interp_, up_x_;
    Func out_{"interpolate"};
};

} // namespace

std::unique_ptr<App> make_interpolate() { return std::make_unique<Interpolate>(); }

} // namespace schedforge::apps
