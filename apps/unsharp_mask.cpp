// unsharp_mask: sharpen an RGB float image by the ratio of (2 * gray - blurred gray) to gray,
// with a 7-tap Gaussian (sigma 1.5), repeat-edge boundary.
#include "apps/suite.h"

#include <algorithm>
#include <cmath>

namespace schedforge::apps {

namespace {

using namespace Halide;

constexpr int kRadius = 3;

std::vector<float> gaussian_weights() {
    std::vector<float> w;
    float total = 0;
    for (int i = -kRadius; i <= kRadius; i++) {
        w.push_back(std::exp(-float(i * i) / (2 * 1.5f * 1.5f)));
        total += w.back();
    }
    for (float &v : w) v /= total;
    return w;
}

class UnsharpMask : public App {
public:
    std::string name() const override { return "unsharp_mask"; }
    std::vector<InputShape> inputs(bool small) const override {
        return {{"input", Float(32), small ? std::vector<int>{45, 70, 3} : std::vector<int>{1536, 2560, 3}}};
    }
    Type output_type() const override { return Float(32); }
    std::vector<int> output_extents(const std::vector<InputShape> &in) const override { return in[0].extents; }

    Func define(const std::vector<ImageParam> &in) override {
        Func clamped = BoundaryConditions::repeat_edge(in[0]);
        const std::vector<float> w = gaussian_weights();
        gray_(x_, y_) = 0.299f * clamped(x_, y_, 0) + 0.587f * clamped(x_, y_, 1) + 0.114f * clamped(x_, y_, 2);
        Expr by = 0.0f, bx = 0.0f;
        for (int i = -kRadius; i <= kRadius; i++) by += w[size_t(i + kRadius)] * gray_(x_, y_ + i);
        blur_y_(x_, y_) = by;
        for (int i = -kRadius; i <= kRadius; i++) bx += w[size_t(i + kRadius)] * blur_y_(x_ + i, y_);
        blur_x_(x_, y_) = bx;
        ratio_(x_, y_) = (2 * gray_(x_, y_) - blur_x_(x_, y_)) / (gray_(x_, y_) + 1e-3f);
        out_(x_, y_, c_) = ratio_(x_, y_) * clamped(x_, y_, c_);
        return out_;
    }

    void schedule_manual(const Target &target) override {
        const int vec = target.natural_vector_size<float>();
        Var yo("yo"), yi("yi");
        out_.reorder(x_, c_, y_).split(y_, yo, yi, 32).parallel(yo).vectorize(x_, vec);
        ratio_.compute_at(out_, yi).vectorize(x_, vec);
        blur_y_.compute_at(out_, yi).vectorize(x_, vec);
        gray_.compute_at(out_, yo).store_at(out_, yo).vectorize(x_, vec);
    }

    Buffer<> reference(const std::vector<Buffer<>> &in) const override {
        const Buffer<float> a = in[0];
        const int w = a.width(), h = a.height();
        const std::vector<float> k = gaussian_weights();
        auto px = [&](int x, int y, int c) { return a(std::clamp(x, 0, w - 1), std::clamp(y, 0, h - 1), c); };
        auto gray = [&](int x, int y) { return 0.299f * px(x, y, 0) + 0.587f * px(x, y, 1) + 0.114f * px(x, y, 2); };
        auto blur_y = [&](int x, int y) {
            float s = 0;
            for (int i = -kRadius; i <= kRadius; i++) s += k[size_t(i + kRadius)] * gray(x, y + i);
            return s;
        };
        Buffer<float> out(w, h, 3);
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                float bx = 0;
                for (int i = -kRadius; i <= kRadius; i++) bx += k[size_t(i + kRadius)] * blur_y(x + i, y);
                const float ratio = (2 * gray(x, y) - bx) / (gray(x, y) + 1e-3f);
                for (int c = 0; c < 3; c++) out(x, y, c) = ratio * a(x, y, c);
            }
        }
        return out;
    }

private:
    Var x_{"x"}, y_{"y"}, c_{"c"};
    Func gray_{"gray"}, blur_y_{"blur_y"}, blur_x_{"blur_x"}, ratio_{"ratio"}, out_{"unsharp"};
};

} // namespace

std::unique_ptr<App> make_unsharp_mask() { return std::make_unique<UnsharpMask>(); }

} // namespace schedforge::apps
