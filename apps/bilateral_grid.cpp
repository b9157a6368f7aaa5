// bilateral_grid: an edge-preserving bilateral filter of a float gray image in [0, 1) via a
// bilateral grid (Chen, Paris and Durand). Each 8x8 tile of pixels is splatted into one grid
// column whose 11 intensity bins (r_sigma = 0.1) accumulate homogeneous (value, weight) pairs;
// the grid is blurred along z, x and y by the 5-tap binomial kernel [1 4 6 4 1]; every pixel then
// reads the blurred grid back by trilinear interpolation and divides value by weight.
// Repeat-edge boundary on the input.
#include "apps/suite.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace schedforge::apps {

namespace {

using namespace Halide;

constexpr int kS = 8;               // s_sigma: pixels per grid cell along x and y
constexpr float kInvRSigma = 10.0f; // 1 / r_sigma, r_sigma = 0.1: intensity bins per unit
constexpr int kBins = 11;           // intensity bins 0..10 (round(v * 10) for v in [0, 1))
constexpr float kTap[5] = {1, 4, 6, 4, 1};

class BilateralGrid : public App {
public:
    std::string name() const override { return "bilateral_grid"; }
    std::vector<InputShape> inputs(bool small) const override {
        return {{"input", Float(32), small ? std::vector<int>{203, 157} : std::vector<int>{1536, 2560}}};
    }
    Type output_type() const override { return Float(32); }
    std::vector<int> output_extents(const std::vector<InputShape> &in) const override { return in[0].extents; }

    Func define(const std::vector<ImageParam> &in) override {
        Func clamped = BoundaryConditions::repeat_edge(in[0]);

        // Splat: grid cell (x, y) gathers the pixels [x*s - s/2, x*s + s/2) x [y*s - s/2, y*s + s/2)
        // into the bin nearest their intensity; channel 0 sums values, channel 1 counts them.
        tile_ = RDom(0, kS, 0, kS, "tile");
        const Expr v = clamped(x_ * kS + tile_.x - kS / 2, y_ * kS + tile_.y - kS / 2);
        const Expr bin = clamp(cast<int>(round(v * kInvRSigma)), 0, kBins - 1);
        grid_(x_, y_, z_, c_) = 0.0f;
        grid_(x_, y_, bin, c_) += select(c_ == 0, v, 1.0f);

        // Blur the grid with [1 4 6 4 1] along z, then x, then y (unnormalized: the final
        // division by the weight channel cancels the scale).
        auto blur = [&](Func f, int dim) {
            Expr s;
            for (int i = 0; i < 5; i++) {
                std::vector<Expr> at = {x_, y_, z_, c_};
                at[dim] += i - 2;
                const Expr term = kTap[i] * f(at);
                s = s.defined() ? s + term : term;
            }
            return s;
        };
        blur_z_(x_, y_, z_, c_) = blur(grid_, 2);
        blur_x_(x_, y_, z_, c_) = blur(blur_z_, 0);
        blur_y_(x_, y_, z_, c_) = blur(blur_x_, 1);

        // Slice: pixel x sits at grid coordinate (x + 0.5) / s; its intensity at v / r_sigma.
        const Expr val = clamped(x_, y_);
        const Expr zf = val * kInvRSigma;
        const Expr zi = clamp(cast<int>(floor(zf)), 0, kBins - 2);
        const Expr fz = zf - cast<float>(zi);
        const Expr xi = x_ / kS, yi = y_ / kS;
        const Expr fx = cast<float>(2 * (x_ % kS) + 1) * (1.0f / (2 * kS));
        const Expr fy = cast<float>(2 * (y_ % kS) + 1) * (1.0f / (2 * kS));
        auto mix = [](Expr a, Expr b, Expr t) { return a * (1.0f - t) + b * t; };
        auto g = [&](int dx, int dy, int dz) { return blur_y_(xi + dx, yi + dy, zi + dz, c_); };
        const Expr lo = mix(mix(g(0, 0, 0), g(1, 0, 0), fx), mix(g(0, 1, 0), g(1, 1, 0), fx), fy);
        const Expr hi = mix(mix(g(0, 0, 1), g(1, 0, 1), fx), mix(g(0, 1, 1), g(1, 1, 1), fx), fy);
        interpolated_(x_, y_, c_) = mix(lo, hi, fz);
        out_(x_, y_) = interpolated_(x_, y_, 0) / interpolated_(x_, y_, 1);
        return out_;
    }

    void schedule_manual(const Target &target) override {
        // The grid and its three blurs are small (1/64 of the image times 2 x 15 bins): each is
        // computed at root, parallel over grid rows, vectorized across x. The splat keeps its
        // tile loops innermost per cell with both channels unrolled, so the input is read once.
        // The slice runs in parallel strips of output rows, vectorized across x.
        const int vec = target.natural_vector_size<float>();
        grid_.compute_root().parallel(y_).vectorize(x_, vec);
        grid_.update().reorder(c_, tile_.x, tile_.y, x_, y_).unroll(c_).parallel(y_);
        for (Func f : {blur_z_, blur_x_, blur_y_}) {
            f.compute_root().reorder(x_, c_, z_, y_).parallel(y_).vectorize(x_, vec);
        }
        Var yo("yo"), yi("yi");
        out_.split(y_, yo, yi, 16).parallel(yo).vectorize(x_, vec);
    }

    Buffer<> reference(const std::vector<Buffer<>> &in) const override {
        const Buffer<float> a = in[0];
        const int w = a.width(), h = a.height();
        auto pixel = [&](int x, int y) { return a(std::clamp(x, 0, w - 1), std::clamp(y, 0, h - 1)); };
        // Grid cells -4 .. (w - 1) / s + 4 along x and y (the slice reads cells 0 .. (w - 1) / s + 1,
        // the blurs two more on each side); bins -4 .. kBins + 3 along z, zero outside 0 .. 10.
        const int gx0 = -4, gy0 = -4, gz0 = -4;
        const int gw = (w - 1) / kS + 9, gh = (h - 1) / kS + 9, gd = kBins + 8;
        auto grid_buf = [&] {
            Buffer<float> b(gw, gh, gd, 2);
            b.fill(0.0f);
            b.set_min(gx0, gy0, gz0, 0);
            return b;
        };
        Buffer<float> grid = grid_buf();
        for (int gy = gy0; gy < gy0 + gh; gy++) {
            for (int gx = gx0; gx < gx0 + gw; gx++) {
                for (int ty = 0; ty < kS; ty++) {
                    for (int tx = 0; tx < kS; tx++) {
                        const float v = pixel(gx * kS + tx - kS / 2, gy * kS + ty - kS / 2);
                        const int bin = std::clamp(int(std::nearbyint(v * kInvRSigma)), 0, kBins - 1);
                        grid(gx, gy, bin, 0) += v;
                        grid(gx, gy, bin, 1) += 1.0f;
                    }
                }
            }
        }
        // One blur pass along dimension d; cells beyond the buffer read as zero (exact along z;
        // along x and y only cells the slice never reaches are affected).
        auto blur = [&](const Buffer<float> &src, int d) {
            Buffer<float> dst = grid_buf();
            dst.for_each_element([&](int x, int y, int z, int c) {
                float s = 0;
                for (int i = 0; i < 5; i++) {
                    int at[4] = {x, y, z, c};
                    at[d] += i - 2;
                    const float term = src.contains(at[0], at[1], at[2], at[3]) ? kTap[i] * src(at) : 0.0f;
                    s = i == 0 ? term : s + term;
                }
                dst(x, y, z, c) = s;
            });
            return dst;
        };
        const Buffer<float> bz = blur(grid, 2), bx = blur(bz, 0), by = blur(bx, 1);
        auto mix = [](float lo, float hi, float t) { return lo * (1.0f - t) + hi * t; };
        Buffer<float> out(w, h);
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                const float val = a(x, y);
                const float zf = val * kInvRSigma;
                const int zi = std::clamp(int(std::floor(zf)), 0, kBins - 2);
                const float fz = zf - float(zi);
                const int xi = x / kS, yi = y / kS;
                const float fx = float(2 * (x % kS) + 1) * (1.0f / (2 * kS));
                const float fy = float(2 * (y % kS) + 1) * (1.0f / (2 * kS));
                float r[2];
                for (int c = 0; c < 2; c++) {
                    auto g = [&](int dx, int dy, int dz) { return by(xi + dx, yi + dy, zi + dz, c); };
                    const float lo = mix(mix(g(0, 0, 0), g(1, 0, 0), fx), mix(g(0, 1, 0), g(1, 1, 0), fx), fy);
                    const float hi = mix(mix(g(0, 0, 1), g(1, 0, 1), fx), mix(g(0, 1, 1), g(1, 1, 1), fx), fy);
                    r[c] = mix(lo, hi, fz);
                }
                out(x, y) = r[0] / r[1];
            }
        }
        return out;
    }

private:
    Var x_{"x"}, y_{"y"}, z_{"z"}, c_{"c"};
    RDom tile_;
    Func grid_{"grid"}, blur_z_{"blur_z"}, blur_x_{"blur_x"}, blur_y_{"blur_y"}, interpolated_{"interpolated"},
        out_{"bilateral_grid"};
};

} // namespace

std::unique_ptr<App> make_bilateral_grid() { return std::make_unique<BilateralGrid>(); }

} // namespace schedforge::apps
