// The shapes suite: one small pipeline per kind of algorithm that real Halide generators write and
// that Halide's own autoschedulers accept. Each is scheduled through the SchedForge plugin exactly
// as a Generator would load it (Halide::load_plugin, Pipeline::auto_schedule), compiled, run, and
// compared with the same algorithm built again and scheduled all-compute_root. A refusal is a
// failure: the plugin must schedule everything Halide's autoschedulers schedule.
#include "runner/host_target.h"
#include "runner/output_check.h"

#include <Halide.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

// An extern stage for the `extern_stage` shape: out(x, y) = 2 * in(x, y) over whatever region is
// asked for; in a bounds query it asks for the same region of its input. Exported from the test
// binary (ENABLE_EXPORTS) so that Halide's JIT finds it.
extern "C" int schedforge_shapes_double(halide_buffer_t *in, halide_buffer_t *out) {
    if (in->is_bounds_query()) {
        for (int d = 0; d < 2; d++) {
            in->dim[d].min = out->dim[d].min;
            in->dim[d].extent = out->dim[d].extent;
        }
        return 0;
    }
    Halide::Runtime::Buffer<float> src(*in), dst(*out);
    dst.for_each_element([&](int x, int y) { dst(x, y) = 2 * src(x, y); });
    return 0;
}

namespace schedforge::sampler {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::ImageParam;
using Halide::RDom;
using Halide::Var;

// A pipeline built afresh on each call (its Funcs carry their schedule), with inputs bound.
struct Shape {
    std::vector<Func> outputs;
    std::vector<int> extents; // every output's realization extents
};
using ShapeBuilder = std::function<Shape()>;

// Deterministic input data: small integers, so float sums are exact enough to compare.
template<typename T>
Halide::Buffer<T> input_data(std::vector<int> extents, int salt) {
    Halide::Buffer<T> b(extents);
    b.for_each_element([&](const int *p) {
        int64_t h = salt;
        for (int d = 0; d < b.dimensions(); d++) h = h * 131 + p[d] * (d + 7);
        b(p) = T((h * 2654435761u >> 7) % 97);
    });
    return b;
}

// An input image of T with estimates and bound data: both over [0, extent) in each dimension.
template<typename T>
ImageParam image(const std::string &name, const std::vector<int> &extents, int salt) {
    ImageParam in(Halide::type_of<T>(), int(extents.size()), name);
    std::vector<Halide::Range> estimates;
    for (int e : extents) estimates.push_back({0, e});
    in.set_estimates(estimates);
    in.set(input_data<T>(extents, salt));
    return in;
}

Func clamped(const ImageParam &in) { return Halide::BoundaryConditions::repeat_edge(in); }

// Every Func of the pipeline realized at root.
void schedule_compute_root(const std::vector<Func> &outputs) {
    std::vector<Halide::Internal::Function> fs;
    for (const Func &f : outputs) fs.push_back(f.function());
    for (auto &[name, f] : Halide::Internal::build_environment(fs)) {
        Func func(f);
        func.compute_root();
    }
}

Halide::Realization run(const Shape &s) {
    Halide::Pipeline p(s.outputs);
    const Halide::Target t = runner::jit_target().with_feature(Halide::Target::StrictFloat);
    return p.realize(s.extents, t);
}

void load_plugin() {
    static const bool loaded = (Halide::load_plugin(SCHEDFORGE_PLUGIN), true);
    (void)loaded;
}

const std::map<std::string, ShapeBuilder> &shapes();

class Shapes : public testing::TestWithParam<std::string> {};

TEST_P(Shapes, ScheduledByThePluginMatchComputeRoot) {
    load_plugin();
    const ShapeBuilder &build = shapes().at(GetParam());
    Shape reference = build();
    schedule_compute_root(reference.outputs);
    const Halide::Realization expected = run(reference);

    Shape scheduled = build();
    Halide::Pipeline p(scheduled.outputs);
    const Halide::Target t = runner::jit_target().with_feature(Halide::Target::StrictFloat);
    Halide::AutoSchedulerResults results;
    ASSERT_NO_THROW(results = p.auto_schedule("SchedForge", t, Halide::MachineParams(2, 16 << 20, 40)));
    EXPECT_FALSE(results.schedule_source.empty());
    const Halide::Realization got = p.realize(scheduled.extents, t);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); i++)
        EXPECT_EQ(runner::compare_buffers(got[i], expected[i]), "") << "output " << i << "\n"
                                                                    << results.schedule_source;
}

// ---- the shapes ----

Shape zero_dimensional_func() {
    // A scalar computed from parameters (a gain, a normalization) that the output reads.
    static Halide::Param<float> gain("gain");
    gain.set_estimate(2.0f);
    gain.set(2.0f);
    const ImageParam in = image<float>("in", {64, 48}, 1);
    Func scale("scale"), out("out");
    Var x("x"), y("y");
    scale() = gain * 0.5f + 1;
    out(x, y) = in(x, y) * scale();
    out.set_estimates({{0, 64}, {0, 48}});
    return {{out}, {64, 48}};
}

Shape zero_dimensional_reduction() {
    // A whole-image statistic (the mean) that every output point reads.
    const ImageParam in = image<float>("in", {40, 30}, 2);
    Func total("total"), out("out");
    Var x("x"), y("y");
    RDom r(0, 40, 0, 30);
    total() = 0.0f;
    total() += in(r.x, r.y);
    out(x, y) = in(x, y) - total() / (40 * 30);
    out.set_estimates({{0, 40}, {0, 30}});
    return {{out}, {40, 30}};
}

Shape float_param_radius() {
    // A stencil whose radius is computed from a float parameter (a Gaussian's sigma).
    static Halide::Param<float> sigma("sigma");
    sigma.set_estimate(1.5f);
    sigma.set(1.5f);
    const ImageParam in = image<float>("in", {64, 48}, 3);
    const Func c = clamped(in);
    const Expr radius = Halide::cast<int>(Halide::ceil(sigma * 3.0f));
    RDom r(-radius, 2 * radius + 1);
    Func blur_x("blur_x"), out("out");
    Var x("x"), y("y");
    blur_x(x, y) = Halide::sum(c(x + r, y));
    out(x, y) = Halide::sum(blur_x(x, y + r));
    out.set_estimates({{0, 64}, {0, 48}});
    return {{out}, {64, 48}};
}

Shape float_param_range() {
    // Resampling by a float scale factor: the region read scales with the parameter.
    static Halide::Param<float> scale("scale");
    scale.set_estimate(0.5f);
    scale.set(0.5f);
    const ImageParam in = image<uint8_t>("in", {80, 60}, 4);
    const Func c = clamped(in);
    Func wide("wide"), out("out");
    Var x("x"), y("y");
    wide(x, y) = Halide::cast<uint16_t>(c(x, y)) * 3;
    const Expr sx = Halide::cast<int>(Halide::floor(Halide::cast<float>(x) * scale));
    const Expr sy = Halide::cast<int>(Halide::floor(Halide::cast<float>(y) * scale));
    out(x, y) = wide(sx, sy) + wide(sx + 1, sy);
    out.set_estimates({{0, 80}, {0, 60}});
    return {{out}, {80, 60}};
}

Shape radius_from_scalar_func() {
    // A stencil radius computed by a zero-dimensional Func from a float parameter: the region read
    // is bounded through the Func's value bounds, which are expressions of the parameter.
    static Halide::Param<float> sigma("sigma_r");
    sigma.set_estimate(1.2f);
    sigma.set(1.2f);
    const ImageParam in = image<float>("in", {56, 40}, 16);
    const Func c = clamped(in);
    Func radius("radius"), out("out");
    Var x("x"), y("y");
    radius() = Halide::cast<int>(Halide::ceil(sigma * 2.0f));
    out(x, y) = c(x - radius(), y) + c(x + radius(), y) + c(x, y + radius());
    out.set_estimates({{0, 56}, {0, 40}});
    return {{out}, {56, 40}};
}

Shape int_and_bool_params() {
    // An integer offset and a boolean switch that move and pick the region read.
    static Halide::Param<int> offset("offset");
    static Halide::Param<bool> flip("flip");
    offset.set_estimate(3);
    offset.set(3);
    flip.set_estimate(true);
    flip.set(true);
    const ImageParam in = image<int16_t>("in", {50, 40}, 5);
    const Func c = clamped(in);
    Func shifted("shifted"), out("out");
    Var x("x"), y("y");
    shifted(x, y) = c(x + offset, y) - c(x, y - offset);
    out(x, y) = Halide::select(flip, shifted(49 - x, y), shifted(x, y));
    out.set_estimates({{0, 50}, {0, 40}});
    return {{out}, {50, 40}};
}

Shape multiple_outputs() {
    // Two outputs that share a producer.
    const ImageParam in = image<float>("in", {64, 32}, 6);
    const Func c = clamped(in);
    Func blur("blur"), sharp("sharp"), soft("soft");
    Var x("x"), y("y");
    blur(x, y) = (c(x - 1, y) + c(x, y) + c(x + 1, y)) / 3;
    sharp(x, y) = 2 * c(x, y) - blur(x, y);
    soft(x, y) = (blur(x, y - 1) + blur(x, y + 1)) / 2;
    sharp.set_estimates({{0, 64}, {0, 32}});
    soft.set_estimates({{0, 64}, {0, 32}});
    return {{sharp, soft}, {64, 32}};
}

Shape tuple_valued() {
    // A Func of two values (a running min and max), read element by element.
    const ImageParam in = image<uint8_t>("in", {48, 40}, 7);
    const Func c = clamped(in);
    Func range("range"), out("out");
    Var x("x"), y("y");
    RDom r(-2, 5);
    range(x, y) = {Halide::cast<uint8_t>(255), Halide::cast<uint8_t>(0)};
    range(x, y) = {Halide::min(range(x, y)[0], c(x + r, y)), Halide::max(range(x, y)[1], c(x + r, y))};
    out(x, y) = Halide::cast<int16_t>(range(x, y)[1]) - Halide::cast<int16_t>(range(x, y)[0]);
    out.set_estimates({{0, 48}, {0, 40}});
    return {{out}, {48, 40}};
}

Shape tuple_output() {
    // The output itself is a Tuple.
    const ImageParam in = image<float>("in", {32, 32}, 8);
    const Func c = clamped(in);
    Func dx("dx"), out("out");
    Var x("x"), y("y");
    dx(x, y) = c(x + 1, y) - c(x - 1, y);
    out(x, y) = {dx(x, y), dx(x, y) * dx(x, y) + c(x, y + 1)};
    out.set_estimates({{0, 32}, {0, 32}});
    return {{out}, {32, 32}};
}

Shape extern_stage() {
    // A stage defined by a C function, between two Halide stages.
    const ImageParam in = image<float>("in", {40, 24}, 9);
    const Func c = clamped(in);
    Func pre("pre"), ext("ext"), out("out");
    Var x("x"), y("y");
    pre(x, y) = c(x, y) + c(x + 1, y);
    ext.define_extern("schedforge_shapes_double", {pre}, Halide::Float(32), {x, y});
    out(x, y) = ext(x, y) + ext(x, y + 1);
    out.set_estimates({{0, 40}, {0, 23}});
    return {{out}, {40, 23}};
}

Shape rdom_where() {
    // A reduction over a disc: an RDom with a where() predicate.
    const ImageParam in = image<float>("in", {48, 36}, 10);
    const Func c = clamped(in);
    Func disc("disc"), out("out");
    Var x("x"), y("y");
    RDom r(-3, 7, -3, 7);
    r.where(r.x * r.x + r.y * r.y <= 9);
    disc(x, y) = 0.0f;
    disc(x, y) = Halide::max(disc(x, y), c(x + r.x, y + r.y));
    out(x, y) = disc(x, y) * 0.5f;
    out.set_estimates({{0, 48}, {0, 36}});
    return {{out}, {48, 36}};
}

Shape data_dependent_update() {
    // A histogram: the update's index is a value read from the input, then a lookup through it.
    const ImageParam in = image<uint8_t>("in", {64, 48}, 11);
    Func hist("hist"), cdf("cdf"), out("out");
    Var x("x"), y("y"), i("i");
    RDom r(0, 64, 0, 48);
    hist(i) = 0;
    hist(Halide::clamp(Halide::cast<int>(in(r.x, r.y)), 0, 255)) += 1;
    RDom b(1, 255);
    cdf(i) = hist(i);
    cdf(b) = cdf(b - 1) + hist(b);
    out(x, y) = cdf(Halide::cast<int>(in(x, y)));
    out.set_estimates({{0, 64}, {0, 48}});
    return {{out}, {64, 48}};
}

Shape index_simplified_away() {
    // A lookup whose index Func is clamped to one point: the simplifier removes the read of
    // `index`, which the definition still names (a random pipeline's one-channel gather).
    const ImageParam in = image<float>("in", {40, 30, 1}, 17);
    Func index("index"), out("out");
    Var x("x"), y("y");
    index(x, y) = Halide::cast<int>(in(x, y, 0) * 4);
    out(x, y) = in(x, y, Halide::clamp(index(x, y), 0, 0)) * 2;
    out.set_estimates({{0, 40}, {0, 30}});
    return {{out}, {40, 30}};
}

Shape constrained_inputs() {
    // Inputs with bounds, stride and alignment constraints, as generators declare them.
    ImageParam in(Halide::UInt(16), 2, "in");
    in.dim(0).set_min(0).set_stride(1);
    in.dim(1).set_min(0);
    in.dim(0).set_extent((in.dim(0).extent() / 8) * 8);
    in.set_estimates({{0, 64}, {0, 32}});
    in.set(input_data<uint16_t>({64, 32}, 12));
    Func down("down"), out("out");
    Var x("x"), y("y");
    down(x, y) = in(2 * x, y) / 2 + in(2 * x + 1, y) / 2;
    out(x, y) = down(x, y) + down(Halide::min(x + 1, 31), y);
    out.set_estimates({{0, 32}, {0, 32}});
    return {{out}, {32, 32}};
}

Shape fewer_and_more_dimensions() {
    // A 1-D lookup table and a 3-D stack read by a 2-D output, and a 4-D output of a 2-D Func.
    const ImageParam in = image<float>("in", {32, 24}, 13);
    const Func c = clamped(in);
    Func lut("lut"), stack("stack"), flat("flat"), out("out");
    Var x("x"), y("y"), z("z"), w("w");
    lut(x) = Halide::sqrt(Halide::cast<float>(x) + 1);
    stack(x, y, z) = c(x + z, y) * lut(z);
    flat(x, y) = stack(x, y, 0) + stack(x, y, 1) + stack(x, y, 2) + lut(x % 16);
    out(x, y, z, w) = flat(x, y) * Halide::cast<float>(z + w);
    out.set_estimates({{0, 32}, {0, 24}, {0, 3}, {0, 2}});
    return {{out}, {32, 24, 3, 2}};
}

Shape estimates_differ_from_bounds() {
    // The output's estimates are not the region realized; an intermediate carries estimates of
    // its own that do not match what its consumer reads.
    ImageParam in(Halide::Float(32), 2, "in");
    in.set_estimates({{0, 100}, {0, 100}});
    in.set(input_data<float>({70, 50}, 14));
    const Func c = clamped(in);
    Func mid("mid"), out("out");
    Var x("x"), y("y");
    mid(x, y) = c(x, y) * c(x + 1, y + 1);
    mid.set_estimates({{0, 10}, {0, 10}});
    out(x, y) = mid(x, y) + mid(x + 2, y);
    out.set_estimates({{0, 200}, {0, 150}});
    return {{out}, {70, 50}};
}

Shape output_with_update() {
    // The output has an update (a scan along x).
    const ImageParam in = image<int32_t>("in", {40, 30}, 15);
    Func out("out");
    Var x("x"), y("y");
    RDom r(1, 39);
    out(x, y) = in(x, y);
    out(r, y) = out(r - 1, y) + in(r, y);
    out.set_estimates({{0, 40}, {0, 30}});
    return {{out}, {40, 30}};
}

const std::map<std::string, ShapeBuilder> &shapes() {
    static const std::map<std::string, ShapeBuilder> all = {
        {"zero_dimensional_func", zero_dimensional_func},
        {"zero_dimensional_reduction", zero_dimensional_reduction},
        {"float_param_radius", float_param_radius},
        {"float_param_range", float_param_range},
        {"radius_from_scalar_func", radius_from_scalar_func},
        {"int_and_bool_params", int_and_bool_params},
        {"multiple_outputs", multiple_outputs},
        {"tuple_valued", tuple_valued},
        {"tuple_output", tuple_output},
        {"extern_stage", extern_stage},
        {"rdom_where", rdom_where},
        {"data_dependent_update", data_dependent_update},
        {"index_simplified_away", index_simplified_away},
        {"constrained_inputs", constrained_inputs},
        {"fewer_and_more_dimensions", fewer_and_more_dimensions},
        {"estimates_differ_from_bounds", estimates_differ_from_bounds},
        {"output_with_update", output_with_update},
    };
    return all;
}

std::vector<std::string> shape_names() {
    std::vector<std::string> names;
    for (const auto &[name, build] : shapes()) names.push_back(name);
    return names;
}

INSTANTIATE_TEST_SUITE_P(All, Shapes, testing::ValuesIn(shape_names()),
                         [](const testing::TestParamInfo<std::string> &info) { return info.param; });

} // namespace
} // namespace schedforge::sampler
