#include "apps/app.h"

#include "apps/suite.h"

#include <cstdint>

namespace schedforge::apps {

std::vector<std::unique_ptr<App>> all_apps() {
    std::vector<std::unique_ptr<App>> apps;
    apps.push_back(make_blur3x3());
    apps.push_back(make_unsharp_mask());
    apps.push_back(make_matmul());
    apps.push_back(make_conv_relu());
    apps.push_back(make_iir_blur());
    apps.push_back(make_harris());
    apps.push_back(make_stencil_chain());
    apps.push_back(make_hist_equalize());
    apps.push_back(make_max_filter());
    apps.push_back(make_lens_blur());
    apps.push_back(make_interpolate());
    apps.push_back(make_resnet_block());
    apps.push_back(make_camera_pipe());
    apps.push_back(make_nl_means());
    apps.push_back(make_bilateral_grid());
    apps.push_back(make_local_laplacian());
    return apps;
}

std::vector<std::string> app_names() {
    std::vector<std::string> names;
    for (const auto &a : all_apps()) names.push_back(a->name());
    return names;
}

std::unique_ptr<App> make_app(const std::string &name) {
    for (auto &a : all_apps()) {
        if (a->name() == name) return std::move(a);
    }
    return nullptr;
}

namespace {

// Deterministic input data (a 64-bit LCG): integers over the type's bit pattern, floats in [0, 1).
template<typename T>
void fill_typed(Halide::Buffer<T> b, uint64_t seed) {
    uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    b.for_each_value([&](T &v) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const uint64_t r = state >> 33;
        if constexpr (std::is_floating_point_v<T>) {
            v = T(double(r & 0xffffff) / double(1 << 24));
        } else {
            v = T(r);
        }
    });
    b.set_host_dirty(); // for_each_value does not say so: a GPU pipeline copies it to the device
}

void fill(Halide::Buffer<> &b, uint64_t seed) {
    const Halide::Type t = b.type();
    if (t == Halide::Float(32)) return fill_typed(Halide::Buffer<float>(b), seed);
    if (t == Halide::UInt(8)) return fill_typed(Halide::Buffer<uint8_t>(b), seed);
    if (t == Halide::UInt(16)) return fill_typed(Halide::Buffer<uint16_t>(b), seed);
    if (t == Halide::Int(16)) return fill_typed(Halide::Buffer<int16_t>(b), seed);
    if (t == Halide::Int(32)) return fill_typed(Halide::Buffer<int32_t>(b), seed);
    throw std::runtime_error("apps: no input filler for this type");
}

} // namespace

BuiltApp build_app(const std::string &name, bool small) {
    BuiltApp built;
    built.app = make_app(name);
    if (!built.app) throw std::runtime_error("unknown app '" + name + "'");
    const std::vector<InputShape> shapes = built.app->inputs(small);
    for (size_t i = 0; i < shapes.size(); i++) {
        const InputShape &s = shapes[i];
        Halide::ImageParam p(s.type, int(s.extents.size()), s.name);
        Halide::Buffer<> data(s.type, s.extents);
        fill(data, 1000 + i);
        p.set(data);
        Halide::Region estimates;
        for (int e : s.extents) estimates.emplace_back(0, e);
        p.set_estimates(estimates);
        built.params.push_back(p);
        built.inputs.push_back(data);
    }
    built.output = built.app->define(built.params);
    const std::vector<int> out = built.app->output_extents(shapes);
    Halide::Region estimates;
    for (int e : out) estimates.emplace_back(0, e);
    built.output.set_estimates(estimates);
    built.pipeline = Halide::Pipeline(built.output);
    built.output_buffer = Halide::Buffer<>(built.app->output_type(), out);
    return built;
}

void schedule_manual(BuiltApp &built, const Halide::Target &target) {
    if (target.has_gpu_feature() && !built.app->has_gpu_schedule())
        throw Halide::CompileError(built.app->name() + " has no manual GPU schedule");
    built.app->schedule_manual(target);
}

void schedule_compute_root(BuiltApp &built) {
    for (const auto &[name, f] : Halide::Internal::find_transitive_calls(built.output.function())) {
        Halide::Func(f).compute_root();
    }
}

} // namespace schedforge::apps
