// hist_equalize: histogram equalization of an 8-bit gray image: a 256-bin histogram (a scatter
// reduction), its cumulative sum (a scan), and a lookup of each pixel's CDF value.
#include "apps/suite.h"

namespace schedforge::apps {

namespace {

using namespace Halide;

class HistEqualize : public App {
public:
    std::string name() const override { return "hist_equalize"; }
    std::vector<InputShape> inputs(bool small) const override {
        return {{"input", UInt(8), small ? std::vector<int>{83, 70} : std::vector<int>{1536, 2560}}};
    }
    Type output_type() const override { return UInt(8); }
    std::vector<int> output_extents(const std::vector<InputShape> &in) const override { return in[0].extents; }

    Func define(const std::vector<ImageParam> &in) override {
        const ImageParam &input = in[0];
        pixels_ = RDom(0, input.dim(0).extent(), 0, input.dim(1).extent(), "p");
        hist_(i_) = 0;
        hist_(cast<int>(input(pixels_.x, pixels_.y))) += 1;
        RDom bins(1, 255, "bins");
        cdf_(i_) = hist_(0);
        cdf_(bins) = cdf_(bins - 1) + hist_(bins);
        const Expr total = input.dim(0).extent() * input.dim(1).extent();
        out_(x_, y_) = cast<uint8_t>(clamp(cdf_(cast<int>(input(x_, y_))) * 255 / total, 0, 255));
        return out_;
    }

    bool has_gpu_schedule() const override { return true; }
    void schedule_manual(const Target &target) override {
        if (target.has_gpu_feature()) {
            // The histogram by atomic adds from blocks of 32x8 pixels, the 256-bin scan on one
            // GPU thread (it is tiny), the lookup in blocks of 32x8 outputs.
            RVar rxo("rxo"), rxi("rxi"), ryo("ryo"), ryi("ryi");
            Var bo("bo"), bi("bi");
            hist_.compute_root().gpu_tile(i_, bo, bi, 256);
            hist_.update()
                .atomic()
                .split(pixels_.x, rxo, rxi, 32, TailStrategy::GuardWithIf)
                .split(pixels_.y, ryo, ryi, 8, TailStrategy::GuardWithIf)
                .reorder(rxi, ryi, rxo, ryo)
                .gpu_blocks(rxo, ryo)
                .gpu_threads(rxi, ryi);
            cdf_.compute_root().gpu_single_thread();
            cdf_.update().gpu_single_thread();
            Var bx("bx"), by("by"), tx("tx"), ty("ty");
            out_.gpu_tile(x_, y_, bx, by, tx, ty, 32, 8);
            return;
        }
        // The histogram in parallel: per-strip partial histograms (rfactor), then summed.
        RVar ryo("ryo"), ryi("ryi");
        Var strip("strip");
        hist_.compute_root();
        hist_.update().split(pixels_.y, ryo, ryi, 64, TailStrategy::GuardWithIf);
        Func partial = hist_.update().rfactor(ryo, strip);
        partial.compute_root().update().parallel(strip);
        cdf_.compute_root();
        Var yo("yo"), yi("yi");
        out_.split(y_, yo, yi, 64).parallel(yo).vectorize(x_, target.natural_vector_size<uint8_t>());
    }

    Buffer<> reference(const std::vector<Buffer<>> &in) const override {
        const Buffer<uint8_t> a = in[0];
        int64_t hist[256] = {0}, cdf[256];
        a.for_each_value([&](uint8_t v) { hist[v]++; });
        cdf[0] = hist[0];
        for (int i = 1; i < 256; i++) cdf[i] = cdf[i - 1] + hist[i];
        const int64_t total = int64_t(a.width()) * a.height();
        Buffer<uint8_t> out(a.width(), a.height());
        out.for_each_element(
            [&](int x, int y) { out(x, y) = uint8_t(std::min<int64_t>(255, cdf[a(x, y)] * 255 / total)); });
        return out;
    }

private:
    Var x_{"x"}, y_{"y"}, i_{"i"};
    RDom pixels_;
    Func hist_{"hist"}, cdf_{"cdf"}, out_{"hist_equalize"};
};

} // namespace

std::unique_ptr<App> make_hist_equalize() { return std::make_unique<HistEqualize>(); }

} // namespace schedforge::apps
