// resnet_block: a ResNet basic block: 3x3 convolution ("same", zero padding) -> batch norm
// (folded into a per-channel scale and shift) -> ReLU -> 3x3 convolution -> batch norm -> add
// the block's input -> ReLU. 64 channels at 56x56, batch 1 (ResNet-18's first stage).
// Channels innermost.
#include "apps/suite.h"

#include <algorithm>

namespace schedforge::apps {

namespace {

using namespace Halide;

class ResnetBlock : public App {
public:
    std::string name() const override { return "resnet_block"; }
    std::vector<InputShape> inputs(bool small) const override {
        const int c = small ? 19 : 64, w = small ? 11 : 56, h = small ? 9 : 56;
        return {{"input", Float(32), {c, w, h, 1}}, {"filter1", Float(32), {c, 3, 3, c}}, {"scale1", Float(32), {c}},
                {"shift1", Float(32), {c}},         {"filter2", Float(32), {c, 3, 3, c}}, {"scale2", Float(32), {c}},
                {"shift2", Float(32), {c}}};
    }
    Type output_type() const override { return Float(32); }
    std::vector<int> output_extents(const std::vector<InputShape> &in) const override { return in[0].extents; }

    Func define(const std::vector<ImageParam> &in) override {
        const ImageParam &input = in[0];
        const Expr channels = input.dim(0).extent();
        r_ = RDom(0, channels, 0, 3, 0, 3, "r");
        Func padded = BoundaryConditions::constant_exterior(
            input, 0.0f, {{Expr(), Expr()}, {0, input.dim(1).extent()}, {0, input.dim(2).extent()}, {Expr(), Expr()}});
        conv1_(c_, x_, y_, n_) = 0.0f;
        conv1_(c_, x_, y_, n_) += in[1](c_, r_.y, r_.z, r_.x) * padded(r_.x, x_ + r_.y - 1, y_ + r_.z - 1, n_);
        relu1_(c_, x_, y_, n_) = max(0.0f, conv1_(c_, x_, y_, n_) * in[2](c_) + in[3](c_));
        // The second convolution pads the first's output with zeros as well.
        const Expr inside = x_ >= 0 && x_ < input.dim(1).extent() && y_ >= 0 && y_ < input.dim(2).extent();
        padded1_(c_, x_, y_, n_) = select(inside, relu1_(c_, x_, y_, n_), 0.0f);
        conv2_(c_, x_, y_, n_) = 0.0f;
        conv2_(c_, x_, y_, n_) += in[4](c_, r_.y, r_.z, r_.x) * padded1_(r_.x, x_ + r_.y - 1, y_ + r_.z - 1, n_);
        out_(c_, x_, y_, n_) = max(0.0f, conv2_(c_, x_, y_, n_) * in[5](c_) + in[6](c_) + input(c_, x_, y_, n_));
        return out_;
    }

    void schedule_manual(const Target &target) override {
        // Each convolution: output channels vectorized, 4 output pixels of a row accumulated at
        // once in registers, rows in parallel. The first block's ReLU output is materialized
        // whole (with a one-pixel zero border), since every row of the second needs three of it.
        const int vec = target.natural_vector_size<float>();
        auto schedule_conv = [&](Func consumer, Func conv) {
            Var xo("xo"), xi("xi"), yn("yn");
            consumer.split(x_, xo, xi, 4, TailStrategy::GuardWithIf)
                .reorder(c_, xi, xo, y_, n_)
                .fuse(y_, n_, yn)
                .parallel(yn)
                .vectorize(c_, vec, TailStrategy::GuardWithIf);
            conv.compute_at(consumer, xo).vectorize(c_, vec, TailStrategy::GuardWithIf).unroll(x_);
            conv.update().reorder(c_, x_, r_.x, r_.y, r_.z).vectorize(c_, vec, TailStrategy::GuardWithIf).unroll(x_);
        };
        padded1_.compute_root();
        schedule_conv(padded1_, conv1_);
        schedule_conv(out_, conv2_);
    }

    Buffer<> reference(const std::vector<Buffer<>> &in) const override {
        const Buffer<float> input = in[0];
        const int ch = input.dim(0).extent(), w = input.dim(1).extent(), h = input.dim(2).extent();
        // One convolution + batch norm from a zero-padded source, before the ReLU.
        auto conv_bn = [&](const Buffer<float> &src, const Buffer<float> &filter, const Buffer<float> &scale,
                           const Buffer<float> &shift) {
            Buffer<float> out(ch, w, h, 1);
            out.for_each_element([&](int c, int x, int y, int n) {
                float s = 0.0f;
                for (int ky = 0; ky < 3; ky++) {
                    for (int kx = 0; kx < 3; kx++) {
                        const int sx = x + kx - 1, sy = y + ky - 1;
                        if (sx < 0 || sx >= w || sy < 0 || sy >= h) continue;
                        for (int i = 0; i < ch; i++) s += filter(c, kx, ky, i) * src(i, sx, sy, n);
                    }
                }
                out(c, x, y, n) = s * scale(c) + shift(c);
            });
            return out;
        };
        Buffer<float> relu1 = conv_bn(input, in[1], in[2], in[3]);
        relu1.for_each_value([](float &v) { v = std::max(0.0f, v); });
        Buffer<float> out = conv_bn(relu1, in[4], in[5], in[6]);
        out.for_each_element(
            [&](int c, int x, int y, int n) { out(c, x, y, n) = std::max(0.0f, out(c, x, y, n) + input(c, x, y, n)); });
        return out;
    }

private:
    Var c_{"c"}, x_{"x"}, y_{"y"}, n_{"n"};
    RDom r_;
    Func conv1_{"conv1"}, relu1_{"relu1"}, padded1_{"padded1"}, conv2_{"conv2"}, out_{"resnet_block"};
};

} // namespace

std::unique_ptr<App> make_resnet_block() { return std::make_unique<ResnetBlock>(); }

} // namespace schedforge::apps
