// harris: Harris corner response of an RGB float image: Sobel gradients of the gray image, their
// products summed over 3x3 windows, then det - 0.04 * trace^2. Repeat-edge boundary.
#include "apps/suite.h"

#include <algorithm>

namespace schedforge::apps {

namespace {

using namespace Halide;

class Harris : public App {
public:
    std::string name() const override { return "harris"; }
    std::vector<InputShape> inputs(bool small) const override {
        return {{"input", Float(32), small ? std::vector<int>{45, 39, 3} : std::vector<int>{1536, 2560, 3}}};
    }
    Type output_type() const override { return Float(32); }
    std::vector<int> output_extents(const std::vector<InputShape> &in) const override {
        return {in[0].extents[0], in[0].extents[1]};
    }

    Func define(const std::vector<ImageParam> &in) override {
        Func clamped = BoundaryConditions::repeat_edge(in[0]);
        gray_(x_, y_) = 0.299f * clamped(x_, y_, 0) + 0.587f * clamped(x_, y_, 1) + 0.114f * clamped(x_, y_, 2);
        ix_(x_, y_) = (gray_(x_ + 1, y_ - 1) - gray_(x_ - 1, y_ - 1)) + 2 * (gray_(x_ + 1, y_) - gray_(x_ - 1, y_)) +
                      (gray_(x_ + 1, y_ + 1) - gray_(x_ - 1, y_ + 1));
        iy_(x_, y_) = (gray_(x_ - 1, y_ + 1) - gray_(x_ - 1, y_ - 1)) + 2 * (gray_(x_, y_ + 1) - gray_(x_, y_ - 1)) +
                      (gray_(x_ + 1, y_ + 1) - gray_(x_ + 1, y_ - 1));
        auto box = [&](Func f) {
            Expr s = 0.0f;
            for (int dy = -1; dy <= 1; dy++) {
                for (int dx = -1; dx <= 1; dx++) s += f(x_ + dx, y_ + dy);
            }
            return s;
        };
        ixx_(x_, y_) = ix_(x_, y_) * ix_(x_, y_);
        iyy_(x_, y_) = iy_(x_, y_) * iy_(x_, y_);
        ixy_(x_, y_) = ix_(x_, y_) * iy_(x_, y_);
        const Expr sxx = box(ixx_), syy = box(iyy_), sxy = box(ixy_);
        out_(x_, y_) = sxx * syy - sxy * sxy - 0.04f * (sxx + syy) * (sxx + syy);
        return out_;
    }

    void schedule_manual(const Target &target) override {
        // Strips of 32 rows in parallel; gradients computed per strip (with their halo).
        const int vec = target.natural_vector_size<float>();
        Var yo("yo"), yi("yi");
        out_.split(y_, yo, yi, 32).parallel(yo).vectorize(x_, vec);
        gray_.compute_at(out_, yo).vectorize(x_, vec);
        ix_.compute_at(out_, yo).vectorize(x_, vec);
        iy_.compute_at(out_, yo).vectorize(x_, vec);
    }

    Buffer<> reference(const std::vector<Buffer<>> &in) const override {
        const Buffer<float> a = in[0];
        const int w = a.width(), h = a.height();
        auto gray = [&](int x, int y) {
            x = std::clamp(x, 0, w - 1);
            y = std::clamp(y, 0, h - 1);
            return 0.299f * a(x, y, 0) + 0.587f * a(x, y, 1) + 0.114f * a(x, y, 2);
        };
        auto ix = [&](int x, int y) {
            return (gray(x + 1, y - 1) - gray(x - 1, y - 1)) + 2 * (gray(x + 1, y) - gray(x - 1, y)) +
                   (gray(x + 1, y + 1) - gray(x - 1, y + 1));
        };
        auto iy = [&](int x, int y) {
            return (gray(x - 1, y + 1) - gray(x - 1, y - 1)) + 2 * (gray(x, y + 1) - gray(x, y - 1)) +
                   (gray(x + 1, y + 1) - gray(x + 1, y - 1));
        };
        Buffer<float> out(w, h);
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                float sxx = 0, syy = 0, sxy = 0;
                for (int dy = -1; dy <= 1; dy++) {
                    for (int dx = -1; dx <= 1; dx++) {
                        const float gx = ix(x + dx, y + dy), gy = iy(x + dx, y + dy);
                        sxx += gx * gx, syy += gy * gy, sxy += gx * gy;
                    }
                }
                out(x, y) = sxx * syy - sxy * sxy - 0.04f * (sxx + syy) * (sxx + syy);
            }
        }
        return out;
    }

private:
    Var x_{"x"}, y_{"y"};
    Func gray_{"gray"}, ix_{"Ix"}, iy_{"Iy"}, ixx_{"Ixx"}, iyy_{"Iyy"}, ixy_{"Ixy"}, out_{"harris"};
};

} // namespace

std::unique_ptr<App> make_harris() { return std::make_unique<Harris>(); }

} // namespace schedforge::apps
