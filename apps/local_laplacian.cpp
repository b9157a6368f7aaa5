// local_laplacian: the local Laplacian filter (Paris, Hasinoff and Kautz) on a 16-bit RGB image,
// enhancing detail. The gray image (integer luma) is remapped around each of K = 8 reference
// intensities k / 7 by a detail-boosting curve r(d) = beta * d + alpha * d * exp(-d^2 / 2 sigma^2)
// read from a lookup table over the quantized difference d; each remapped image gets a Gaussian
// and a Laplacian pyramid of J = 4 levels ([1 3 3 1] / 8 downsampling, linear-interpolation
// upsampling, each level repeat-edge clamped to its own extent). Every output Laplacian
// coefficient interpolates between the two remapped images whose reference intensities bracket
// the input's Gaussian-pyramid value there; the collapsed pyramid is the new gray, and color
// returns as input color * new gray / input gray. Output: Float(32) RGB clamped to [0, 1]
// (16-bit values / 65535), so rounding noise stays within the float comparison tolerance.
#include "apps/suite.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace schedforge::apps {

namespace {

using namespace Halide;

constexpr int kLevels = 8;                         // K: reference intensities k / (K - 1)
constexpr int kPyramid = 4;                        // J: pyramid levels
constexpr int kSteps = 128;                        // table steps between reference intensities
constexpr int kRange = (kLevels - 1) * kSteps;     // the quantized gray spans 0 .. kRange
constexpr float kAlpha = 1.0f;                     // detail boost
constexpr float kBeta = 0.9f;                      // large-difference (edge) scale
constexpr float kSigma = 1.0f / (kLevels - 1);     // differences below ~sigma count as detail
constexpr float kLevelStep = 1.0f / (kLevels - 1); // spacing of the reference intensities
constexpr float kTableStep = 1.0f / kRange;        // intensity per table step
constexpr float kInv65535 = 1.0f / 65535.0f;

// The remapping curve at intensity difference t (in [-1, 1]).
float remap_curve(float t) { return kBeta * t + kAlpha * t * std::exp(-t * t * (0.5f / (kSigma * kSigma))); }
Expr remap_curve(Expr t) { return kBeta * t + kAlpha * t * exp(-t * t * (0.5f / (kSigma * kSigma))); }

class LocalLaplacian : public App {
public:
    std::string name() const override { return "local_laplacian"; }
    std::vector<InputShape> inputs(bool small) const override {
        return {{"input", UInt(16), small ? std::vector<int>{164, 131, 3} : std::vector<int>{1536, 2560, 3}}};
    }
    Type output_type() const override { return Float(32); }
    std::vector<int> output_extents(const std::vector<InputShape> &in) const override { return in[0].extents; }
    // Inlined, every pyramid level recomputes 16 taps of the level below: thousands of remapped
    // pixels per output pixel, minutes even on the small input.
    bool default_schedule_is_practical() const override { return false; }

    Func define(const std::vector<ImageParam> &in) override {
        const ImageParam &input = in[0];
        Func clamped = BoundaryConditions::repeat_edge(input);
        // Level extents: each level holds ceil(half) of the one below.
        std::vector<Expr> w = {input.dim(0).extent()}, h = {input.dim(1).extent()};
        for (int j = 1; j < kPyramid; j++) {
            w.push_back((w.back() + 1) / 2);
            h.push_back((h.back() + 1) / 2);
        }

        // Integer luma (exact, so the table index is the same however it is computed), its
        // float value in [0, 1] and its quantization to table steps.
        luma_(x_, y_) = (77 * cast<int>(clamped(x_, y_, 0)) + 150 * cast<int>(clamped(x_, y_, 1)) +
                         29 * cast<int>(clamped(x_, y_, 2)) + 128) >>
                        8;
        gray_(x_, y_) = cast<float>(luma_(x_, y_)) * kInv65535;
        quantized_(x_, y_) = luma_(x_, y_) * kRange / 65535;
        remap_(i_) = remap_curve(cast<float>(i_) * kTableStep);
        // Remapped image k: the reference intensity plus the curve of the difference from it.
        processed_(x_, y_, k_) =
            cast<float>(k_) * kLevelStep + remap_(clamp(quantized_(x_, y_) - k_ * kSteps, -kRange, kRange));

        // Gaussian pyramids of the remapped images (over k) and of the input gray.
        gauss_ = {processed_};
        in_gauss_ = {gray_};
        gauss_x_ = {Func()};
        in_gauss_x_ = {Func()};
        for (int j = 1; j < kPyramid; j++) {
            Func gx, ix;
            gauss_.push_back(downsample(gauss_[j - 1], w[j - 1], h[j - 1], true, "gauss" + std::to_string(j), gx));
            in_gauss_.push_back(
                downsample(in_gauss_[j - 1], w[j - 1], h[j - 1], false, "in_gauss" + std::to_string(j), ix));
            gauss_x_.push_back(gx);
            in_gauss_x_.push_back(ix);
        }
        // Laplacian pyramids of the remapped images: each level minus the next one upsampled.
        laplace_.assign(kPyramid, Func());
        laplace_[kPyramid - 1] = gauss_[kPyramid - 1];
        for (int j = kPyramid - 2; j >= 0; j--) {
            Func up = upsample(gauss_[j + 1], w[j + 1], h[j + 1], true, "gauss_up" + std::to_string(j));
            laplace_[j] = Func("laplace" + std::to_string(j));
            laplace_[j](x_, y_, k_) = gauss_[j](x_, y_, k_) - up(x_, y_, k_);
        }
        // Output Laplacian pyramid: interpolate between the two remapped images whose
        // reference intensities bracket the input's Gaussian value.
        out_laplace_.clear();
        for (int j = 0; j < kPyramid; j++) {
            Func f("out_laplace" + std::to_string(j));
            const Expr level = in_gauss_[j](x_, y_) * float(kLevels - 1);
            const Expr li = clamp(cast<int>(floor(level)), 0, kLevels - 2);
            const Expr lf = level - cast<float>(li);
            f(x_, y_) = (1.0f - lf) * laplace_[j](x_, y_, li) + lf * laplace_[j](x_, y_, li + 1);
            out_laplace_.push_back(f);
        }
        // Collapse: from the coarsest level, upsample and add each finer level.
        collapsed_.assign(kPyramid, Func());
        collapsed_[kPyramid - 1] = out_laplace_[kPyramid - 1];
        for (int j = kPyramid - 2; j >= 0; j--) {
            Func up = upsample(collapsed_[j + 1], w[j + 1], h[j + 1], false, "collapsed_up" + std::to_string(j));
            collapsed_[j] = Func("collapsed" + std::to_string(j));
            collapsed_[j](x_, y_) = out_laplace_[j](x_, y_) + up(x_, y_);
        }
        // Color: scale the input color by new gray / old gray (a zero gray counts as one step).
        const Expr color = cast<float>(clamped(x_, y_, c_)) * kInv65535;
        out_(x_, y_, c_) = clamp(color * collapsed_[0](x_, y_) / max(gray_(x_, y_), kInv65535), 0.0f, 1.0f);
        return out_;
    }

    void schedule_manual(const Target &target) override {
        // Luma and the remap table at root. Every coarser pyramid level at root, in parallel over
        // strips of rows (times the 8 remapped images), its horizontal downsampling pass computed
        // per strip; the remapped images themselves stay inline (a table lookup per tap). The
        // Laplacian and output-Laplacian levels inline into the collapse, whose coarser levels
        // are at root; the finest collapse level is computed per strip of output rows, and the
        // color is applied there for all three channels.
        const int vec = target.natural_vector_size<float>();
        remap_.compute_root().vectorize(i_, vec);
        Var yo("yo"), yi("yi"), t("t");
        luma_.compute_root().split(y_, yo, yi, 16).parallel(yo).vectorize(x_, vec);
        for (int j = 1; j < kPyramid; j++) {
            gauss_[j].compute_root().split(y_, yo, yi, 8).fuse(yo, k_, t).parallel(t).vectorize(x_, vec);
            gauss_x_[j].compute_at(gauss_[j], t).vectorize(x_, vec);
            in_gauss_[j].compute_root().split(y_, yo, yi, 8).parallel(yo).vectorize(x_, vec);
            in_gauss_x_[j].compute_at(in_gauss_[j], yo).vectorize(x_, vec);
            collapsed_[j].compute_root().split(y_, yo, yi, 8).parallel(yo).vectorize(x_, vec);
        }
        out_.reorder(x_, c_, y_).split(y_, yo, yi, 16).parallel(yo).vectorize(x_, vec);
        collapsed_[0].compute_at(out_, yo).vectorize(x_, vec);
    }

    Buffer<> reference(const std::vector<Buffer<>> &in) const override {
        const Buffer<uint16_t> a = in[0];
        const int width = a.width(), height = a.height();
        std::vector<int> w = {width}, h = {height};
        for (int j = 1; j < kPyramid; j++) {
            w.push_back((w.back() + 1) / 2);
            h.push_back((h.back() + 1) / 2);
        }
        Buffer<int> luma(width, height);
        Buffer<float> gray(width, height);
        luma.for_each_element([&](int x, int y) {
            luma(x, y) = (77 * a(x, y, 0) + 150 * a(x, y, 1) + 29 * a(x, y, 2) + 128) >> 8;
            gray(x, y) = float(luma(x, y)) * kInv65535;
        });
        std::vector<float> table(2 * kRange + 1);
        for (int d = -kRange; d <= kRange; d++) table[d + kRange] = remap_curve(float(d) * kTableStep);

        // gauss[k][j], laplace[k][j], in_gauss[j]
        std::vector<std::vector<Buffer<float>>> gauss(kLevels), laplace(kLevels);
        for (int k = 0; k < kLevels; k++) {
            Buffer<float> p(width, height);
            p.for_each_element([&](int x, int y) {
                const int q = luma(x, y) * kRange / 65535;
                p(x, y) = float(k) * kLevelStep + table[std::clamp(q - k * kSteps, -kRange, kRange) + kRange];
            });
            gauss[k].push_back(p);
            for (int j = 1; j < kPyramid; j++) gauss[k].push_back(downsample_ref(gauss[k][j - 1]));
            for (int j = 0; j + 1 < kPyramid; j++) {
                const Buffer<float> up = upsample_ref(gauss[k][j + 1], w[j], h[j]);
                Buffer<float> l(w[j], h[j]);
                l.for_each_element([&](int x, int y) { l(x, y) = gauss[k][j](x, y) - up(x, y); });
                laplace[k].push_back(l);
            }
            laplace[k].push_back(gauss[k][kPyramid - 1]);
        }
        std::vector<Buffer<float>> in_gauss = {gray};
        for (int j = 1; j < kPyramid; j++) in_gauss.push_back(downsample_ref(in_gauss[j - 1]));

        std::vector<Buffer<float>> out_laplace;
        for (int j = 0; j < kPyramid; j++) {
            Buffer<float> o(w[j], h[j]);
            o.for_each_element([&](int x, int y) {
                const float level = in_gauss[j](x, y) * float(kLevels - 1);
                const int li = std::clamp(int(std::floor(level)), 0, kLevels - 2);
                const float lf = level - float(li);
                o(x, y) = (1.0f - lf) * laplace[li][j](x, y) + lf * laplace[li + 1][j](x, y);
            });
            out_laplace.push_back(o);
        }
        Buffer<float> collapsed = out_laplace[kPyramid - 1];
        for (int j = kPyramid - 2; j >= 0; j--) {
            const Buffer<float> up = upsample_ref(collapsed, w[j], h[j]);
            Buffer<float> c(w[j], h[j]);
            c.for_each_element([&](int x, int y) { c(x, y) = out_laplace[j](x, y) + up(x, y); });
            collapsed = c;
        }

        Buffer<float> out(width, height, 3);
        out.for_each_element([&](int x, int y, int c) {
            const float color = float(a(x, y, c)) * kInv65535;
            out(x, y, c) = std::clamp(color * collapsed(x, y) / std::max(gray(x, y), kInv65535), 0.0f, 1.0f);
        });
        return out;
    }

private:
    // Halves f (extent w x h, repeat-edge beyond) with [1 3 3 1] / 8 along x (the Func pass_x),
    // then along y (the Func returned).
    Func downsample(Func f, Expr w, Expr h, bool has_k, const std::string &name, Func &pass_x) {
        Func dx(name + "_x"), dy(name);
        dx(args(has_k)) = (f(at(2 * x_ - 1, y_, w, h, has_k)) + 3.0f * f(at(2 * x_, y_, w, h, has_k)) +
                           3.0f * f(at(2 * x_ + 1, y_, w, h, has_k)) + f(at(2 * x_ + 2, y_, w, h, has_k))) *
                          0.125f;
        // The x pass reads f clamped, so it is already clamped along y beyond its extent.
        dy(args(has_k)) = (dx(at(x_, 2 * y_ - 1, has_k)) + 3.0f * dx(at(x_, 2 * y_, has_k)) +
                           3.0f * dx(at(x_, 2 * y_ + 1, has_k)) + dx(at(x_, 2 * y_ + 2, has_k))) *
                          0.125f;
        pass_x = dx;
        return dy;
    }

    // Doubles f (extent w x h, repeat-edge beyond) by linear interpolation along x, then y: fine
    // pixel 2i takes 3/4 of coarse i and 1/4 of i - 1, fine pixel 2i + 1 3/4 of i and 1/4 of i + 1.
    Func upsample(Func f, Expr w, Expr h, bool has_k, const std::string &name) {
        Func ux(name + "_x"), uy(name);
        ux(args(has_k)) =
            0.75f * f(at(x_ / 2, y_, w, h, has_k)) + 0.25f * f(at(x_ / 2 - 1 + 2 * (x_ % 2), y_, w, h, has_k));
        uy(args(has_k)) = 0.75f * ux(at(x_, y_ / 2, has_k)) + 0.25f * ux(at(x_, y_ / 2 - 1 + 2 * (y_ % 2), has_k));
        return uy;
    }

    // Call arguments (x, y[, k]), optionally clamped to [0, w) x [0, h).
    std::vector<Expr> at(Expr x, Expr y, bool has_k) const {
        std::vector<Expr> e = {x, y};
        if (has_k) e.push_back(k_);
        return e;
    }
    std::vector<Expr> at(Expr x, Expr y, Expr w, Expr h, bool has_k) const {
        return at(clamp(x, 0, w - 1), clamp(y, 0, h - 1), has_k);
    }
    std::vector<Var> args(bool has_k) const {
        std::vector<Var> a = {x_, y_};
        if (has_k) a.push_back(k_);
        return a;
    }

    // The reference's [1 3 3 1] / 8 downsampling, same order of operations.
    static Buffer<float> downsample_ref(const Buffer<float> &f) {
        const int w = f.width(), h = f.height(), dw = (w + 1) / 2, dh = (h + 1) / 2;
        auto cx = [&](int x) { return std::clamp(x, 0, w - 1); };
        auto cy = [&](int y) { return std::clamp(y, 0, h - 1); };
        Buffer<float> dx(dw, h), dy(dw, dh);
        dx.for_each_element([&](int x, int y) {
            dx(x, y) =
                (f(cx(2 * x - 1), y) + 3.0f * f(cx(2 * x), y) + 3.0f * f(cx(2 * x + 1), y) + f(cx(2 * x + 2), y)) *
                0.125f;
        });
        dy.for_each_element([&](int x, int y) {
            dy(x, y) =
                (dx(x, cy(2 * y - 1)) + 3.0f * dx(x, cy(2 * y)) + 3.0f * dx(x, cy(2 * y + 1)) + dx(x, cy(2 * y + 2))) *
                0.125f;
        });
        return dy;
    }

    // The reference's linear-interpolation upsampling to fw x fh, same order of operations.
    static Buffer<float> upsample_ref(const Buffer<float> &f, int fw, int fh) {
        const int w = f.width(), h = f.height();
        auto cx = [&](int x) { return std::clamp(x, 0, w - 1); };
        auto cy = [&](int y) { return std::clamp(y, 0, h - 1); };
        Buffer<float> ux(fw, h), uy(fw, fh);
        ux.for_each_element(
            [&](int x, int y) { ux(x, y) = 0.75f * f(cx(x / 2), y) + 0.25f * f(cx(x / 2 - 1 + 2 * (x % 2)), y); });
        uy.for_each_element(
            [&](int x, int y) { uy(x, y) = 0.75f * ux(x, cy(y / 2)) + 0.25f * ux(x, cy(y / 2 - 1 + 2 * (y % 2))); });
        return uy;
    }

    Var x_{"x"}, y_{"y"}, c_{"c"}, k_{"k"}, i_{"i"};
    Func luma_{"luma"}, gray_{"gray"}, quantized_{"quantized"}, remap_{"remap"}, processed_{"processed"},
        out_{"local_laplacian"};
    std::vector<Func> gauss_, gauss_x_, in_gauss_, in_gauss_x_, laplace_, out_laplace_, collapsed_;
};

} // namespace

std::unique_ptr<App> make_local_laplacian() { return std::make_unique<LocalLaplacian>(); }

} // namespace schedforge::apps
