// lens_blur: synthetic depth of field from a stereo pair of 8-bit RGB images. A cost volume of
// absolute differences over 32 disparities is box-filtered (5x5), each pixel's depth is the
// disparity of least cost, and the output gathers the pixels of a radius-4 disc whose circle of
// confusion (growing with their distance from the focal disparity) covers it. Integer costs
// keep the depth choice exact under any schedule; the output is the mean colour in [0, 1].
#include "apps/suite.h"

#include <algorithm>
#include <cstdlib>

namespace schedforge::apps {

namespace {

using namespace Halide;

constexpr int kDisparities = 32;
constexpr int kFocus = 12;    // the disparity in focus
constexpr int kMaxRadius = 4; // the widest circle of confusion
constexpr int kBoxRadius = 2; // cost aggregation window: 5x5

// Circle-of-confusion radius of a pixel at disparity d.
int blur_radius(int d) { return std::min(kMaxRadius, std::abs(d - kFocus) / 3); }

class LensBlur : public App {
public:
    std::string name() const override { return "lens_blur"; }
    std::vector<InputShape> inputs(bool small) const override {
        const std::vector<int> shape = small ? std::vector<int>{71, 37, 3} : std::vector<int>{1536, 2560, 3};
        return {{"left", UInt(8), shape}, {"right", UInt(8), shape}};
    }
    Type output_type() const override { return Float(32); }
    std::vector<int> output_extents(const std::vector<InputShape> &in) const override { return in[0].extents; }
    // Inlined, each of the gather's 49 taps re-derives its depth (a 32-disparity argmin over 5x5
    // boxes of 3-channel costs): 14 s of compilation and a second of running even at test size.
    bool default_schedule_is_practical() const override { return false; }

    Func define(const std::vector<ImageParam> &in) override {
        Func left = BoundaryConditions::repeat_edge(in[0]), right = BoundaryConditions::repeat_edge(in[1]);
        left16_(x_, y_, c_) = cast<int16_t>(left(x_, y_, c_));
        right16_(x_, y_, c_) = cast<int16_t>(right(x_, y_, c_));
        cost_(x_, y_, d_) = cast<uint16_t>(absd(left16_(x_, y_, 0), right16_(x_ - d_, y_, 0)) +
                                           absd(left16_(x_, y_, 1), right16_(x_ - d_, y_, 1)) +
                                           absd(left16_(x_, y_, 2), right16_(x_ - d_, y_, 2)));
        Expr sx = cast<uint16_t>(0), sy = cast<uint16_t>(0);
        for (int i = -kBoxRadius; i <= kBoxRadius; i++) sx += cost_(x_ + i, y_, d_);
        box_x_(x_, y_, d_) = sx;
        for (int i = -kBoxRadius; i <= kBoxRadius; i++) sy += box_x_(x_, y_ + i, d_);
        box_(x_, y_, d_) = sy;
        // The first disparity of least cost.
        RDom rd(0, kDisparities, "rd");
        depth_(x_, y_) = cast<int>(argmin(box_(x_, y_, rd))[0]);
        radius_(x_, y_) = min(kMaxRadius, cast<int>(abs(depth_(x_, y_) - kFocus)) / 3);
        // Gather: a neighbour contributes when its circle of confusion reaches this pixel.
        Expr sum_r = 0, sum_g = 0, sum_b = 0, count = 0;
        for (int dy = -kMaxRadius; dy <= kMaxRadius; dy++) {
            for (int dx = -kMaxRadius; dx <= kMaxRadius; dx++) {
                const int dist2 = dx * dx + dy * dy;
                if (dist2 > kMaxRadius * kMaxRadius) continue;
                const Expr r = radius_(x_ + dx, y_ + dy);
                const Expr covers = select(r * r >= dist2, 1, 0);
                sum_r += covers * cast<int>(left16_(x_ + dx, y_ + dy, 0));
                sum_g += covers * cast<int>(left16_(x_ + dx, y_ + dy, 1));
                sum_b += covers * cast<int>(left16_(x_ + dx, y_ + dy, 2));
                count += covers;
            }
        }
        sums_(x_, y_) = {sum_r, sum_g, sum_b, count};
        const Expr sum = mux(c_, {sums_(x_, y_)[0], sums_(x_, y_)[1], sums_(x_, y_)[2]});
        out_(x_, y_, c_) = cast<float>(sum) / (cast<float>(sums_(x_, y_)[3]) * 255.0f);
        return out_;
    }

    void schedule_manual(const Target &target) override {
        // Strips of 16 rows in parallel. Per strip: the cost volume is filtered one disparity
        // slice at a time (cost and horizontal box per slice, vertical box per strip), then the
        // depth map and the gather run vectorized along x.
        const int vec16 = target.natural_vector_size<uint16_t>(), vec = target.natural_vector_size<float>();
        Var yo("yo"), yi("yi");
        out_.reorder(c_, x_, y_).bound(c_, 0, 3).unroll(c_).split(y_, yo, yi, 16).parallel(yo).vectorize(x_, vec);
        sums_.compute_at(out_, yo).vectorize(x_, vec);
        radius_.compute_at(out_, yo).vectorize(x_, vec);
        depth_.compute_at(out_, yo).vectorize(x_, vec);
        box_.compute_at(depth_, y_).vectorize(x_, vec16);
        box_x_.compute_at(out_, yo).reorder(x_, y_, d_).vectorize(x_, vec16);
        cost_.compute_at(box_x_, y_).vectorize(x_, vec16);
        left16_.compute_at(out_, yo).vectorize(x_, vec16);
        right16_.compute_at(out_, yo).vectorize(x_, vec16);
    }

    Buffer<> reference(const std::vector<Buffer<>> &in) const override {
        const Buffer<uint8_t> left = in[0], right = in[1];
        const int w = left.width(), h = left.height();
        auto px = [&](const Buffer<uint8_t> &b, int x, int y, int c) {
            return int(b(std::clamp(x, 0, w - 1), std::clamp(y, 0, h - 1), c));
        };
        auto cost = [&](int x, int y, int d) {
            int s = 0;
            for (int c = 0; c < 3; c++) s += std::abs(px(left, x, y, c) - px(right, x - d, y, c));
            return s;
        };
        // Depth on the output region grown by the gather radius.
        const int g = kMaxRadius, dw = w + 2 * g, dh = h + 2 * g;
        std::vector<int> radius(size_t(dw) * size_t(dh));
        for (int y = -g; y < h + g; y++) {
            for (int x = -g; x < w + g; x++) {
                int best = 0, best_cost = 0;
                for (int d = 0; d < kDisparities; d++) {
                    int s = 0;
                    for (int j = -kBoxRadius; j <= kBoxRadius; j++) {
                        for (int i = -kBoxRadius; i <= kBoxRadius; i++) s += cost(x + i, y + j, d);
                    }
                    if (d == 0 || s < best_cost) best = d, best_cost = s;
                }
                radius[size_t(y + g) * size_t(dw) + size_t(x + g)] = blur_radius(best);
            }
        }
        Buffer<float> out(w, h, 3);
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                int sum[3] = {0, 0, 0}, count = 0;
                for (int dy = -g; dy <= g; dy++) {
                    for (int dx = -g; dx <= g; dx++) {
                        const int dist2 = dx * dx + dy * dy;
                        const int r = radius[size_t(y + dy + g) * size_t(dw) + size_t(x + dx + g)];
                        if (dist2 > g * g || r * r < dist2) continue;
                        for (int c = 0; c < 3; c++) sum[c] += px(left, x + dx, y + dy, c);
                        count++;
                    }
                }
                for (int c = 0; c < 3; c++) out(x, y, c) = float(sum[c]) / (float(count) * 255.0f);
            }
        }
        return out;
    }

private:
    Var x_{"x"}, y_{"y"}, c_{"c"}, d_{"d"};
    Func left16_{"left16"}, right16_{"right16"}, cost_{"cost"}, box_x_{"box_x"}, box_{"box"}, depth_{"depth"},
        radius_{"radius"}, sums_{"sums"}, out_{"lens_blur"};
};

} // namespace

std::unique_ptr<App> make_lens_blur() { return std::make_unique<LensBlur>(); }

} // namespace schedforge::apps
