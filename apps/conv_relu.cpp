// conv_relu: a DNN convolution layer (3x3, valid) with bias and ReLU, at the source paper's
// size: batch 5, 120 input channels, 24 output channels, 100x80 outputs. Channels innermost.
#include "apps/suite.h"

#include <algorithm>

namespace schedforge::apps {

namespace {

using namespace Halide;

class ConvRelu : public App {
public:
    std::string name() const override { return "conv_relu"; }
    std::vector<InputShape> inputs(bool small) const override {
        const int ci = small ? 5 : 120, co = small ? 19 : 24, w = small ? 9 : 100, h = small ? 6 : 80,
                  n = small ? 2 : 5;
        return {{"input", Float(32), {ci, w + 2, h + 2, n}},
                {"filter", Float(32), {co, 3, 3, ci}},
                {"bias", Float(32), {co}}};
    }
    Type output_type() const override { return Float(32); }
    std::vector<int> output_extents(const std::vector<InputShape> &in) const override {
        return {in[1].extents[0], in[0].extents[1] - 2, in[0].extents[2] - 2, in[0].extents[3]};
    }

    Func define(const std::vector<ImageParam> &in) override {
        const ImageParam &input = in[0], &filter = in[1], &bias = in[2];
        r_ = RDom(0, input.dim(0).extent(), 0, 3, 0, 3, "r");
        conv_(c_, x_, y_, n_) = bias(c_);
        conv_(c_, x_, y_, n_) += filter(c_, r_.y, r_.z, r_.x) * input(r_.x, x_ + r_.y, y_ + r_.z, n_);
        relu_(c_, x_, y_, n_) = max(0.0f, conv_(c_, x_, y_, n_));
        return relu_;
    }

    bool has_gpu_schedule() const override { return true; }
    void schedule_manual(const Target &target) override {
        if (target.has_gpu_feature()) {
            // A thread per 4 neighbouring outputs along x (unrolled: each filter tap is loaded
            // once for the four), blocks of 8 channels by 32 such groups, a grid dimension for
            // the rows of all images; the accumulators in registers. Guarded tails: there are
            // fewer channels and x groups than some tiles hold.
            Var cb("cb"), ct("ct"), xo("xo"), xb("xb"), xt("xt"), xi("xi"), yn("yn");
            relu_.split(x_, xo, xi, 4)
                .fuse(y_, n_, yn)
                .gpu_tile(c_, xo, cb, xb, ct, xt, 8, 32, TailStrategy::GuardWithIf)
                .reorder(xi, ct, xt, cb, xb, yn)
                .unroll(xi)
                .gpu_blocks(yn);
            conv_.compute_at(relu_, ct).unroll(x_);
            conv_.update().reorder(x_, r_.x, r_.y, r_.z).unroll(x_);
            return;
        }
        // Register blocking: one vector of output channels x 4 pixels of a row x 2 rows (8
        // accumulators) is computed at once, with the whole reduction (input channels and the
        // 3x3 window) inside, so the accumulators stay in registers: each step broadcasts one
        // input value and loads one vector of filter weights. Rows of blocks in parallel.
        const int vec = target.natural_vector_size<float>();
        Var co("co"), ci("ci"), xo("xo"), xi("xi"), yo("yo"), yi("yi"), task("task");
        relu_.split(c_, co, ci, vec)
            .split(x_, xo, xi, 4)
            .split(y_, yo, yi, 2)
            .reorder(ci, xi, yi, co, xo, yo, n_)
            .vectorize(ci)
            .unroll(xi)
            .unroll(yi)
            .fuse(yo, n_, task)
            .parallel(task);
        conv_.compute_at(relu_, co).vectorize(c_).unroll(x_).unroll(y_);
        conv_.update().reorder(c_, x_, y_, r_.x, r_.y, r_.z).vectorize(c_).unroll(x_).unroll(y_);
    }

    Buffer<> reference(const std::vector<Buffer<>> &in) const override {
        const Buffer<float> input = in[0], filter = in[1], bias = in[2];
        const int ci = input.dim(0).extent(), co = filter.dim(0).extent();
        Buffer<float> out(co, input.dim(1).extent() - 2, input.dim(2).extent() - 2, input.dim(3).extent());
        out.for_each_element([&](int c, int x, int y, int n) {
            float s = bias(c);
            for (int ky = 0; ky < 3; ky++) {
                for (int kx = 0; kx < 3; kx++) {
                    for (int i = 0; i < ci; i++) s += filter(c, kx, ky, i) * input(i, x + kx, y + ky, n);
                }
            }
            out(c, x, y, n) = std::max(0.0f, s);
        });
        return out;
    }

private:
    Var c_{"c"}, x_{"x"}, y_{"y"}, n_{"n"};
    RDom r_;
    Func conv_{"conv"}, relu_{"relu"};
};

} // namespace

std::unique_ptr<App> make_conv_relu() { return std::make_unique<ConvRelu>(); }

} // namespace schedforge::apps
