// max_filter: the maximum over a disc of radius 13 around each pixel of an RGB float image
// (repeat-edge boundary). A doubling pyramid of vertical maxima answers any column window
// [y - h, y + h] with two overlapping power-of-two windows, so each pixel costs two loads per
// column of the disc instead of one per pixel of it.
#include "apps/suite.h"

#include <algorithm>
#include <cmath>

namespace schedforge::apps {

namespace {

using namespace Halide;

constexpr int kRadius = 13;

// Half-height of the disc's column at horizontal offset dx.
int column_half_height(int dx) { return int(std::floor(std::sqrt(double(kRadius * kRadius - dx * dx)))); }

// Largest k with 2^k <= n.
int floor_log2(int n) {
    int k = 0;
    while ((2 << k) <= n) k++;
    return k;
}

class MaxFilter : public App {
public:
    std::string name() const override { return "max_filter"; }
    std::vector<InputShape> inputs(bool small) const override {
        return {{"input", Float(32), small ? std::vector<int>{45, 67, 3} : std::vector<int>{1536, 2560, 3}}};
    }
    Type output_type() const override { return Float(32); }
    std::vector<int> output_extents(const std::vector<InputShape> &in) const override { return in[0].extents; }
    // Inlined, every column of the disc expands its pyramid level into a tree of up to 16 loads:
    // an 800-load expression that takes LLVM over a minute to compile.
    bool default_schedule_is_practical() const override { return false; }

    Func define(const std::vector<ImageParam> &in) override {
        // vmax_[k](x, y) = max of the column window [y, y + 2^k).
        const int levels = floor_log2(2 * kRadius + 1) + 1;
        vmax_.clear();
        vmax_.emplace_back("vmax0");
        vmax_[0](x_, y_, c_) = BoundaryConditions::repeat_edge(in[0])(x_, y_, c_);
        for (int k = 1; k < levels; k++) {
            Func f("vmax" + std::to_string(k));
            f(x_, y_, c_) = max(vmax_[size_t(k - 1)](x_, y_, c_), vmax_[size_t(k - 1)](x_, y_ + (1 << (k - 1)), c_));
            vmax_.push_back(f);
        }
        Expr result;
        for (int dx = -kRadius; dx <= kRadius; dx++) {
            const int h = column_half_height(dx), k = floor_log2(2 * h + 1);
            const Func &level = vmax_[size_t(k)];
            // Two windows of 2^k starting at y - h and ending at y + h cover [y - h, y + h].
            const Expr column = max(level(x_ + dx, y_ - h, c_), level(x_ + dx, y_ + h + 1 - (1 << k), c_));
            result = result.defined() ? max(result, column) : column;
        }
        out_(x_, y_, c_) = result;
        return out_;
    }

    void schedule_manual(const Target &target) override {
        // Strips of 64 rows per channel in parallel. Within a strip the pyramid levels slide
        // down with the output row: each level computes one new row per output row into a
        // small circular buffer, so only the strip's first rows pay for the vertical halo.
        const int vec = target.natural_vector_size<float>();
        Var yo("yo"), yi("yi"), t("t");
        out_.split(y_, yo, yi, 64).fuse(yo, c_, t).parallel(t).vectorize(x_, vec);
        for (Func &level : vmax_) level.store_at(out_, t).compute_at(out_, yi).vectorize(x_, vec);
    }

    Buffer<> reference(const std::vector<Buffer<>> &in) const override {
        const Buffer<float> a = in[0];
        const int w = a.width(), h = a.height();
        Buffer<float> out(w, h, a.channels());
        out.for_each_element([&](int x, int y, int c) {
            float m = -INFINITY;
            for (int dx = -kRadius; dx <= kRadius; dx++) {
                const int hh = column_half_height(dx);
                for (int dy = -hh; dy <= hh; dy++) {
                    m = std::max(m, a(std::clamp(x + dx, 0, w - 1), std::clamp(y + dy, 0, h - 1), c));
                }
            }
            out(x, y, c) = m;
        });
        return out;
    }

private:
    Var x_{"x"}, y_{"y"}, c_{"c"};
    std::vector<Func> vmax_;
    Func out_{"max_filter"};
};

} // namespace

std::unique_ptr<App> make_max_filter() { return std::make_unique<MaxFilter>(); }

} // namespace schedforge::apps
