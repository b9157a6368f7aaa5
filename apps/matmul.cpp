// matmul: C = A B for float matrices (A is K wide and N tall, B is N wide and K tall).
#include "apps/suite.h"

namespace schedforge::apps {

namespace {

using namespace Halide;

class Matmul : public App {
public:
    std::string name() const override { return "matmul"; }
    std::vector<InputShape> inputs(bool small) const override {
        const int n = small ? 70 : 1024;
        return {{"A", Float(32), {n, n}}, {"B", Float(32), {n, n}}};
    }
    Type output_type() const override { return Float(32); }
    std::vector<int> output_extents(const std::vector<InputShape> &in) const override {
        return {in[1].extents[0], in[0].extents[1]};
    }

    Func define(const std::vector<ImageParam> &in) override {
        const ImageParam &a = in[0], &b = in[1];
        k_ = RDom(0, a.dim(0).extent(), "k");
        prod_(x_, y_) = 0.0f;
        prod_(x_, y_) += a(k_, y_) * b(x_, k_);
        out_(x_, y_) = prod_(x_, y_);
        return out_;
    }

    bool has_gpu_schedule() const override { return true; }
    void schedule_manual(const Target &target) override {
        if (target.has_gpu_feature()) {
            // Blocks of 64x4 threads over 64x16 outputs: each thread 4 outputs down a column,
            // their accumulators in registers, so that a loaded B(x, k) serves four products.
            Var bx("bx"), by("by"), tx("tx"), ty("ty"), tyo("tyo"), yr("yr");
            out_.tile(x_, y_, bx, by, tx, ty, 64, 16)
                .split(ty, tyo, yr, 4)
                .reorder(yr, tx, tyo, bx, by)
                .unroll(yr)
                .gpu_blocks(bx, by)
                .gpu_threads(tx, tyo);
            prod_.compute_at(out_, tx).unroll(y_);
            prod_.update().reorder(x_, y_, k_).unroll(y_);
            return;
        }
        // Register blocking: each 2-vector x 6-row block of the output accumulates in 12 vector
        // registers over the whole k loop (one broadcast of A and two loads of B per 12 FMAs).
        // Column panels of blocks run in parallel, rows inside a panel, so the panel's slice of
        // B (k x 2 vectors) stays in cache while the rows stream past it.
        const int vec = target.natural_vector_size<float>();
        Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
        out_.tile(x_, y_, xo, yo, xi, yi, 2 * vec, 6)
            .reorder(xi, yi, yo, xo)
            .vectorize(xi, vec)
            .unroll(xi)
            .unroll(yi)
            .parallel(xo);
        prod_.compute_at(out_, yo).vectorize(x_, vec).unroll(x_).unroll(y_);
        prod_.update().reorder(x_, y_, k_).vectorize(x_, vec).unroll(x_).unroll(y_);
    }

    Buffer<> reference(const std::vector<Buffer<>> &in) const override {
        const Buffer<float> a = in[0], b = in[1];
        const int n = a.width();
        Buffer<float> c(b.width(), a.height());
        for (int y = 0; y < c.height(); y++) {
            for (int x = 0; x < c.width(); x++) {
                float s = 0;
                for (int k = 0; k < n; k++) s += a(k, y) * b(x, k);
                c(x, y) = s;
            }
        }
        return c;
    }

private:
    Var x_{"x"}, y_{"y"};
    RDom k_;
    Func prod_{"prod"}, out_{"matmul"};
};

} // namespace

std::unique_ptr<App> make_matmul() { return std::make_unique<Matmul>(); }

} // namespace schedforge::apps
