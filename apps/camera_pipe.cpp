// camera_pipe: raw-to-RGB processing of a 16-bit GRBG Bayer mosaic, all in integers. Each raw value
// keeps its top 10 bits, loses a black level of 16 and is stretched back to 0..1023; the mosaic is
// split into its four half-resolution color planes (edges clamped per plane, so a plane never
// borrows another color); each pixel is capped at the brightest of its four same-color
// neighbours two raw pixels away (hot-pixel suppression). Green is interpolated at red and blue
// sites along the flatter direction (both directions averaged on a tie); red and blue come from
// the neighbouring red-minus-green and blue-minus-green differences added to the local green. The
// sites are interleaved back to full-resolution RGB, mixed by a fixed 3x3 color matrix in 8.8
// fixed point, and mapped to 8 bits through a 1024-entry gamma (1/2.2) and contrast curve. The
// output (x, y, c) has the raw's size, planar RGB.
#include "apps/suite.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace schedforge::apps {

namespace {

using namespace Halide;

constexpr int kDropBits = 6; // 16-bit raw to 10 bits
constexpr int kBlack = 16;   // black level, in 10-bit units
constexpr int kMaxValue = 1023;
// Color correction rows (R, G, B out) in 8.8 fixed point; each row sums to 256 so gray stays gray.
constexpr int kCcm[3][3] = {{410, -115, -39}, {-64, 371, -51}, {13, -141, 384}};
constexpr double kGamma = 2.2;
constexpr double kContrast = 0.25; // blend weight of the smoothstep S-curve

// The linear 0..1023 value of a raw sample.
int linearize(int raw) { return (std::max(raw >> kDropBits, kBlack) - kBlack) * kMaxValue / (kMaxValue - kBlack); }

// Rounded means that round down like the pipeline's arithmetic shifts (C++17 leaves >> of a
// negative value implementation-defined, so floor explicitly).
int floor_shift(int v, int s) { return v >= 0 ? v >> s : -((-v + (1 << s) - 1) >> s); }
int ref_mean2(int a, int b) { return floor_shift(a + b + 1, 1); }
int ref_mean4(int a, int b, int c, int d) { return floor_shift(a + b + c + d + 2, 2); }

// The tone curve entry of a 0..1023 value (the same double expression the pipeline evaluates; every
// entry lies at least 2e-3 from a rounding boundary, so last-bit differences cannot change it).
uint8_t tone(int v) {
    const double g = std::pow(double(v) / kMaxValue, 1.0 / kGamma);
    const double s = g * g * (3.0 - 2.0 * g);
    const double y = g + kContrast * (s - g);
    return uint8_t(std::clamp(std::floor(255.0 * y + 0.5), 0.0, 255.0));
}

class CameraPipe : public App {
public:
    std::string name() const override { return "camera_pipe"; }
    std::vector<InputShape> inputs(bool small) const override {
        return {{"raw", UInt(16), small ? std::vector<int>{154, 74} : std::vector<int>{2592, 1968}}};
    }
    Type output_type() const override { return UInt(8); }
    std::vector<int> output_extents(const std::vector<InputShape> &in) const override {
        return {in[0].extents[0], in[0].extents[1], 3};
    }

    Func define(const std::vector<ImageParam> &in) override {
        const ImageParam &raw = in[0];
        const Expr half_w = raw.dim(0).extent() / 2, half_h = raw.dim(1).extent() / 2;

        // Plane k of the mosaic: 0 green on red rows, 1 red, 2 blue, 3 green on blue rows.
        const Expr sx = 2 * clamp(px_, 0, half_w - 1) + k_ % 2, sy = 2 * clamp(py_, 0, half_h - 1) + k_ / 2;
        const Expr v10 = cast<int32_t>(raw(sx, sy)) >> kDropBits;
        planes_(px_, py_, k_) = cast<int16_t>((max(v10, kBlack) - kBlack) * kMaxValue / (kMaxValue - kBlack));
        const Expr brightest_neighbour = max(max(planes_(px_ - 1, py_, k_), planes_(px_ + 1, py_, k_)),
                                             max(planes_(px_, py_ - 1, k_), planes_(px_, py_ + 1, k_)));
        denoised_(px_, py_, k_) = min(planes_(px_, py_, k_), brightest_neighbour);
        auto gr = [&](Expr x, Expr y) { return denoised_(x, y, 0); };
        auto r = [&](Expr x, Expr y) { return denoised_(x, y, 1); };
        auto b = [&](Expr x, Expr y) { return denoised_(x, y, 2); };
        auto gb = [&](Expr x, Expr y) { return denoised_(x, y, 3); };

        auto mean2 = [](Expr a, Expr c) { return (a + c + 1) >> 1; };
        auto mean4 = [](Expr a, Expr c, Expr d, Expr e) { return (a + c + d + e + 2) >> 2; };
        // Green along the direction whose two greens differ less.
        auto directional = [&](Expr h0, Expr h1, Expr v0, Expr v1) {
            const Expr dh = absd(h0, h1), dv = absd(v0, v1);
            const Expr gh = mean2(h0, h1), gv = mean2(v0, v1);
            return select(dh < dv, gh, dv < dh, gv, mean2(gh, gv));
        };
        // A red site (2px + 1, 2py) has greens left/right in its row and above/below from gb.
        g_at_r_(px_, py_) = directional(gr(px_, py_), gr(px_ + 1, py_), gb(px_, py_ - 1), gb(px_, py_));
        // A blue site (2px, 2py + 1): greens left/right from gb, above/below from gr.
        g_at_b_(px_, py_) = directional(gb(px_ - 1, py_), gb(px_, py_), gr(px_, py_), gr(px_, py_ + 1));
        r_minus_g_(px_, py_) = r(px_, py_) - g_at_r_(px_, py_);
        b_minus_g_(px_, py_) = b(px_, py_) - g_at_b_(px_, py_);
        auto dr = [&](Expr x, Expr y) { return r_minus_g_(x, y); };
        auto db = [&](Expr x, Expr y) { return b_minus_g_(x, y); };
        // Red and blue at the other sites: local green plus the mean neighbouring difference.
        r_at_gr_(px_, py_) = gr(px_, py_) + mean2(dr(px_ - 1, py_), dr(px_, py_));
        b_at_gr_(px_, py_) = gr(px_, py_) + mean2(db(px_, py_ - 1), db(px_, py_));
        b_at_r_(px_, py_) =
            g_at_r_(px_, py_) + mean4(db(px_, py_ - 1), db(px_ + 1, py_ - 1), db(px_, py_), db(px_ + 1, py_));
        r_at_b_(px_, py_) =
            g_at_b_(px_, py_) + mean4(dr(px_ - 1, py_), dr(px_, py_), dr(px_ - 1, py_ + 1), dr(px_, py_ + 1));
        r_at_gb_(px_, py_) = gb(px_, py_) + mean2(dr(px_, py_), dr(px_, py_ + 1));
        b_at_gb_(px_, py_) = gb(px_, py_) + mean2(db(px_, py_), db(px_ + 1, py_));

        // Back to full resolution: pick the value computed for this pixel's site.
        const Expr hx = x_ / 2, hy = y_ / 2, even_x = x_ % 2 == 0, even_y = y_ % 2 == 0;
        auto interleave = [&](Expr at_gr, Expr at_r, Expr at_b, Expr at_gb) {
            return select(even_y, select(even_x, at_gr, at_r), select(even_x, at_b, at_gb));
        };
        red_(x_, y_) = interleave(r_at_gr_(hx, hy), r(hx, hy), r_at_b_(hx, hy), r_at_gb_(hx, hy));
        green_(x_, y_) = interleave(gr(hx, hy), g_at_r_(hx, hy), g_at_b_(hx, hy), gb(hx, hy));
        blue_(x_, y_) = interleave(b_at_gr_(hx, hy), b_at_r_(hx, hy), b(hx, hy), b_at_gb_(hx, hy));

        // Color matrix in 8.8 fixed point, clamped to the curve's domain.
        const Expr rr = cast<int32_t>(red_(x_, y_)), gg = cast<int32_t>(green_(x_, y_)),
                   bb = cast<int32_t>(blue_(x_, y_));
        std::vector<Expr> rows;
        for (const auto &m : kCcm) rows.push_back((m[0] * rr + m[1] * gg + m[2] * bb + 128) >> 8);
        corrected_(x_, y_, c_) = cast<int16_t>(clamp(mux(c_, rows), 0, kMaxValue));

        // The tone curve as a lookup table, in doubles (see tone() for the same expression in C++).
        auto f64 = [](double v) { return Internal::make_const(Float(64), v); };
        const Expr g = pow(cast<double>(v_) / f64(kMaxValue), f64(1.0 / kGamma));
        const Expr s = g * g * (f64(3.0) - f64(2.0) * g);
        const Expr y = g + f64(kContrast) * (s - g);
        curve_(v_) = cast<uint8_t>(clamp(floor(f64(255.0) * y + f64(0.5)), f64(0.0), f64(255.0)));

        out_(x_, y_, c_) = curve_(cast<int32_t>(corrected_(x_, y_, c_)));
        return out_;
    }

    void schedule_manual(const Target &target) override {
        // Strips of 32 output rows in parallel. Each strip computes its half-resolution planes
        // (16 rows plus halo) vectorized across px: the linearized planes (each raw sample
        // converted once, not once per hot-pixel tap), their denoised versions, green at red and
        // blue sites, and red/blue at the other sites. Per output vector, the interleaved
        // full-resolution R, G, B are computed once and shared by the three (unrolled) color
        // matrix rows and curve lookups. The curve table is computed once at root.
        const int vec16 = target.natural_vector_size<int16_t>();
        const int vec8 = target.natural_vector_size<uint8_t>();
        Var yo("yo"), yi("yi");
        curve_.compute_root();
        out_.bound(c_, 0, 3).reorder(c_, x_, y_).split(y_, yo, yi, 32).parallel(yo).vectorize(x_, vec8).unroll(c_);
        for (Func f : {red_, green_, blue_}) f.compute_at(out_, x_).vectorize(x_);
        planes_.compute_at(out_, yo).vectorize(px_, vec16);
        denoised_.compute_at(out_, yo).vectorize(px_, vec16);
        for (Func f : {g_at_r_, g_at_b_, r_at_gr_, b_at_gr_, b_at_r_, r_at_b_, r_at_gb_, b_at_gb_}) {
            f.compute_at(out_, yo).vectorize(px_, vec16);
        }
    }

    Buffer<> reference(const std::vector<Buffer<>> &in) const override {
        const Buffer<uint16_t> raw = in[0];
        const int w = raw.width(), h = raw.height(), hw = w / 2, hh = h / 2;
        // Planes with a one-pixel clamped border, then the hot-pixel cap.
        auto plane = [&](int x, int y, int k) {
            x = std::clamp(x, 0, hw - 1), y = std::clamp(y, 0, hh - 1);
            return linearize(raw(2 * x + k % 2, 2 * y + k / 2));
        };
        // Half-resolution images carry a border of 2 (the demosaic reaches one plane pixel out).
        const int pad = 2;
        auto half = [&]() {
            Buffer<int> b(hw + 2 * pad, hh + 2 * pad);
            b.set_min(-pad, -pad);
            return b;
        };
        Buffer<int> den[4] = {half(), half(), half(), half()};
        for (int k = 0; k < 4; k++) {
            den[k].for_each_element([&](int x, int y) {
                const int m = std::max(std::max(plane(x - 1, y, k), plane(x + 1, y, k)),
                                       std::max(plane(x, y - 1, k), plane(x, y + 1, k)));
                den[k](x, y) = std::min(plane(x, y, k), m);
            });
        }
        const Buffer<int> &gr = den[0], &r = den[1], &b = den[2], &gb = den[3];
        auto directional = [](int h0, int h1, int v0, int v1) {
            const int dh = std::abs(h0 - h1), dv = std::abs(v0 - v1), gh = ref_mean2(h0, h1), gv = ref_mean2(v0, v1);
            return dh < dv ? gh : dv < dh ? gv : ref_mean2(gh, gv);
        };
        Buffer<int> g_at_r = half(), g_at_b = half(), dr = half(), db = half();
        // One pixel inside the padded border is enough for the differences' neighbours.
        for (int y = -1; y <= hh; y++) {
            for (int x = -1; x <= hw; x++) {
                g_at_r(x, y) = directional(gr(x, y), gr(x + 1, y), gb(x, y - 1), gb(x, y));
                g_at_b(x, y) = directional(gb(x - 1, y), gb(x, y), gr(x, y), gr(x, y + 1));
                dr(x, y) = r(x, y) - g_at_r(x, y);
                db(x, y) = b(x, y) - g_at_b(x, y);
            }
        }
        uint8_t curve[kMaxValue + 1];
        for (int v = 0; v <= kMaxValue; v++) curve[v] = tone(v);
        Buffer<uint8_t> out(w, h, 3);
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                const int X = x / 2, Y = y / 2;
                int rgb[3];
                if (y % 2 == 0 && x % 2 == 0) { // green on a red row
                    rgb[0] = gr(X, Y) + ref_mean2(dr(X - 1, Y), dr(X, Y));
                    rgb[1] = gr(X, Y);
                    rgb[2] = gr(X, Y) + ref_mean2(db(X, Y - 1), db(X, Y));
                } else if (y % 2 == 0) { // red
                    rgb[0] = r(X, Y);
                    rgb[1] = g_at_r(X, Y);
                    rgb[2] = g_at_r(X, Y) + ref_mean4(db(X, Y - 1), db(X + 1, Y - 1), db(X, Y), db(X + 1, Y));
                } else if (x % 2 == 0) { // blue
                    rgb[0] = g_at_b(X, Y) + ref_mean4(dr(X - 1, Y), dr(X, Y), dr(X - 1, Y + 1), dr(X, Y + 1));
                    rgb[1] = g_at_b(X, Y);
                    rgb[2] = b(X, Y);
                } else { // green on a blue row
                    rgb[0] = gb(X, Y) + ref_mean2(dr(X, Y), dr(X, Y + 1));
                    rgb[1] = gb(X, Y);
                    rgb[2] = gb(X, Y) + ref_mean2(db(X, Y), db(X + 1, Y));
                }
                for (int c = 0; c < 3; c++) {
                    const int v = floor_shift(kCcm[c][0] * rgb[0] + kCcm[c][1] * rgb[1] + kCcm[c][2] * rgb[2] + 128, 8);
                    out(x, y, c) = curve[std::clamp(v, 0, kMaxValue)];
                }
            }
        }
        return out;
    }

private:
    Var x_{"x"}, y_{"y"}, c_{"c"}, px_{"px"}, py_{"py"}, k_{"k"}, v_{"v"};
    Func planes_{"planes"}, denoised_{"denoised"}, g_at_r_{"g_at_r"}, g_at_b_{"g_at_b"}, r_minus_g_{"r_minus_g"},
        b_minus_g_{"b_minus_g"}, r_at_gr_{"r_at_gr"}, b_at_gr_{"b_at_gr"}, b_at_r_{"b_at_r"}, r_at_b_{"r_at_b"},
        r_at_gb_{"r_at_gb"}, b_at_gb_{"b_at_gb"}, red_{"red"}, green_{"green"}, blue_{"blue"}, corrected_{"corrected"},
        curve_{"curve"}, out_{"camera_pipe"};
};

} // namespace

std::unique_ptr<App> make_camera_pipe() { return std::make_unique<CameraPipe>(); }

} // namespace schedforge::apps
