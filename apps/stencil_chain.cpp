// stencil_chain: 32 chained 5x5 box stencils over a 16-bit image (sums in 32 bits, each stage
// divided by 25), repeat-edge boundary on the input.
#include "apps/suite.h"

#include <algorithm>

namespace schedforge::apps {

namespace {

using namespace Halide;

constexpr int kStages = 32;

class StencilChain : public App {
public:
    std::string name() const override { return "stencil_chain"; }
    std::vector<InputShape> inputs(bool small) const override {
        return {{"input", UInt(16), small ? std::vector<int>{140, 70} : std::vector<int>{1536, 2560}}};
    }
    Type output_type() const override { return UInt(16); }
    std::vector<int> output_extents(const std::vector<InputShape> &in) const override { return in[0].extents; }
    bool default_schedule_is_practical() const override { return false; }

    Func define(const std::vector<ImageParam> &in) override {
        stages_.clear();
        Func prev = BoundaryConditions::repeat_edge(in[0]);
        for (int s = 0; s < kStages; s++) {
            Func f("stage" + std::to_string(s));
            Expr sum = cast<uint32_t>(0);
            for (int dy = -2; dy <= 2; dy++) {
                for (int dx = -2; dx <= 2; dx++) sum += cast<uint32_t>(prev(x_ + dx, y_ + dy));
            }
            f(x_, y_) = cast<uint16_t>(sum / 25);
            stages_.push_back(f);
            prev = f;
        }
        return stages_.back();
    }

    bool has_gpu_schedule() const override { return true; }
    void schedule_manual(const Target &target) override {
        // Groups of 4 stages: the last stage of each group is materialized (at root, or as the
        // output) in 128x64 tiles in parallel, and the 3 stages before it are computed per tile
        // with their halos. Short groups bound the halo recomputation (about 1.4x); the root
        // stages cost one pass over memory each.
        constexpr int kGroup = 4;
        static_assert(kStages % kGroup == 0, "the last group must end at the output");
        if (target.has_gpu_feature()) {
            // The same groups on a GPU: each group's last stage in blocks of 32x8 threads, the
            // three before it in the block's shared memory (their regions grow by 4 a stage: up
            // to 44x20 points, each thread a point of them).
            for (int last = kGroup - 1; last < kStages; last += kGroup) {
                Func group_out = stages_[size_t(last)];
                Var bx("bx"), by("by"), tx("tx"), ty("ty");
                if (last != kStages - 1) group_out.compute_root();
                group_out.gpu_tile(x_, y_, bx, by, tx, ty, 32, 8);
                for (int s = last - kGroup + 1; s < last; s++)
                    stages_[size_t(s)].compute_at(group_out, bx).gpu_threads(x_, y_);
            }
            return;
        }
        const int vec = target.natural_vector_size<uint16_t>();
        for (int last = kGroup - 1; last < kStages; last += kGroup) {
            Func group_out = stages_[size_t(last)];
            Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
            if (last != kStages - 1) group_out.compute_root();
            group_out.tile(x_, y_, xo, yo, xi, yi, 128, 64).parallel(yo).vectorize(xi, vec);
            for (int s = last - kGroup + 1; s < last; s++)
                stages_[size_t(s)].compute_at(group_out, xo).vectorize(x_, vec);
        }
    }

    Buffer<> reference(const std::vector<Buffer<>> &in) const override {
        const Buffer<uint16_t> a = in[0];
        const int w = a.width(), h = a.height(), halo = 2 * kStages;
        // Stage s is needed on the output region grown by 2 * (kStages - s) on every side.
        std::vector<uint16_t> cur(size_t(w + 2 * halo) * size_t(h + 2 * halo)), next(cur.size());
        const int pitch = w + 2 * halo;
        for (int y = -halo; y < h + halo; y++) {
            for (int x = -halo; x < w + halo; x++) {
                cur[size_t(y + halo) * pitch + size_t(x + halo)] = a(std::clamp(x, 0, w - 1), std::clamp(y, 0, h - 1));
            }
        }
        for (int s = 0; s < kStages; s++) {
            const int g = 2 * (kStages - s - 1); // this stage's needed growth
            for (int y = -g; y < h + g; y++) {
                for (int x = -g; x < w + g; x++) {
                    uint32_t sum = 0;
                    for (int dy = -2; dy <= 2; dy++) {
                        for (int dx = -2; dx <= 2; dx++)
                            sum += cur[size_t(y + dy + halo) * pitch + size_t(x + dx + halo)];
                    }
                    next[size_t(y + halo) * pitch + size_t(x + halo)] = uint16_t(sum / 25);
                }
            }
            std::swap(cur, next);
        }
        Buffer<uint16_t> out(w, h);
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) out(x, y) = cur[size_t(y + halo) * pitch + size_t(x + halo)];
        }
        return out;
    }

private:
    Var x_{"x"}, y_{"y"};
    std::vector<Func> stages_;
};

} // namespace

std::unique_ptr<App> make_stencil_chain() { return std::make_unique<StencilChain>(); }

} // namespace schedforge::apps
