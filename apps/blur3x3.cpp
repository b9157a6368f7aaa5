// blur3x3: a separable 3x3 box blur of a 16-bit image, repeat-edge boundary.
#include "apps/suite.h"

#include <algorithm>

namespace schedforge::apps {

namespace {

using namespace Halide;

class Blur3x3 : public App {
public:
    std::string name() const override { return "blur3x3"; }
    std::vector<InputShape> inputs(bool small) const override {
        return {{"input", UInt(16), small ? std::vector<int>{300, 70} : std::vector<int>{2048, 2048}}};
    }
    Type output_type() const override { return UInt(16); }
    std::vector<int> output_extents(const std::vector<InputShape> &in) const override { return in[0].extents; }

    Func define(const std::vector<ImageParam> &in) override {
        Func clamped = BoundaryConditions::repeat_edge(in[0]);
        // Sums in 32 bits so 16-bit values cannot overflow.
        blur_x_(x_, y_) =
            cast<uint16_t>((cast<uint32_t>(clamped(x_ - 1, y_)) + clamped(x_, y_) + clamped(x_ + 1, y_)) / 3);
        blur_y_(x_, y_) =
            cast<uint16_t>((cast<uint32_t>(blur_x_(x_, y_ - 1)) + blur_x_(x_, y_) + blur_x_(x_, y_ + 1)) / 3);
        return blur_y_;
    }

    bool has_gpu_schedule() const override { return true; }
    void schedule_manual(const Target &target) override {
        if (target.has_gpu_feature()) {
            // Blocks of 32x8 threads, one output each; a block's blur_x rows (10 of them) in
            // shared memory, computed by the block's threads first.
            Var bx("bx"), by("by"), tx("tx"), ty("ty");
            blur_y_.gpu_tile(x_, y_, bx, by, tx, ty, 32, 8);
            blur_x_.compute_at(blur_y_, bx).gpu_threads(x_, y_);
            return;
        }
        const int vec = target.natural_vector_size<uint16_t>();
        Var xi("xi"), yi("yi");
        blur_y_.tile(x_, y_, xi, yi, 256, 32).vectorize(xi, vec).parallel(y_);
        blur_x_.compute_at(blur_y_, x_).store_at(blur_y_, x_).vectorize(x_, vec);
    }

    Buffer<> reference(const std::vector<Buffer<>> &in) const override {
        const Buffer<uint16_t> a = in[0];
        const int w = a.width(), h = a.height();
        auto at = [&](int x, int y) { return uint32_t(a(std::clamp(x, 0, w - 1), std::clamp(y, 0, h - 1))); };
        Buffer<uint16_t> bx(w, h + 2), out(w, h);
        bx.set_min(0, -1);
        for (int y = -1; y <= h; y++) {
            for (int x = 0; x < w; x++) bx(x, y) = uint16_t((at(x - 1, y) + at(x, y) + at(x + 1, y)) / 3);
        }
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) out(x, y) = uint16_t((uint32_t(bx(x, y - 1)) + bx(x, y) + bx(x, y + 1)) / 3);
        }
        return out;
    }

private:
    Var x_{"x"}, y_{"y"};
    Func blur_x_{"blur_x"}, blur_y_{"blur_y"};
};

} // namespace

std::unique_ptr<App> make_blur3x3() { return std::make_unique<Blur3x3>(); }

} // namespace schedforge::apps
