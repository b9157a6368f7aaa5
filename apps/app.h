// The real-application suite: hand-written Halide pipelines with expert schedules, the ground
// truth every autoscheduler is compared against.
//
// An App defines its algorithm from ImageParams (define), applies a manual schedule written as a
// competent Halide programmer would (schedule_manual), and computes the same output with plain
// C++ loops (reference) for the correctness tests. Inputs come at two sizes: the benchmark size
// (like the source paper's) and a small size for tests, still larger than the manual schedule's
// tiles and vectors (up to AVX-512 widths), whose default tail strategy needs that.
#pragma once

#include <Halide.h>

#include <memory>
#include <string>
#include <vector>

namespace schedforge::apps {

struct InputShape {
    std::string name;
    Halide::Type type;
    std::vector<int> extents;
};

class App {
public:
    virtual ~App() = default;
    virtual std::string name() const = 0;
    virtual std::vector<InputShape> inputs(bool small) const = 0;
    virtual Halide::Type output_type() const = 0;
    virtual std::vector<int> output_extents(const std::vector<InputShape> &inputs) const = 0;
    // Defines the algorithm on `in` (in inputs() order) and returns the output Func.
    virtual Halide::Func define(const std::vector<Halide::ImageParam> &in) = 0;
    // The hand-written schedule; call after define(). For a GPU target, the app's GPU schedule;
    // an app without one (has_gpu_schedule()) throws Halide::CompileError.
    virtual void schedule_manual(const Halide::Target &target) = 0;
    virtual bool has_gpu_schedule() const { return false; }
    // The output computed naively from concrete inputs.
    virtual Halide::Buffer<> reference(const std::vector<Halide::Buffer<>> &in) const = 0;
    // False where Halide's default schedule (everything inlined) is impractical even on the small
    // inputs, e.g. 32 chained stencils inline to 25^32 taps.
    virtual bool default_schedule_is_practical() const { return true; }
};

// Every app, in a stable order.
std::vector<std::unique_ptr<App>> all_apps();
std::unique_ptr<App> make_app(const std::string &name); // null for an unknown name
std::vector<std::string> app_names();

// An app built in this process: ImageParams bound to deterministic data, estimates set.
struct BuiltApp {
    std::unique_ptr<App> app;
    std::vector<Halide::ImageParam> params;
    std::vector<Halide::Buffer<>> inputs;
    Halide::Func output;
    Halide::Pipeline pipeline;
    Halide::Buffer<> output_buffer; // the output's shape, for realize()
};
BuiltApp build_app(const std::string &name, bool small);
// The hand-written schedule for `target`, checked: a GPU target needs the app's GPU schedule.
void schedule_manual(BuiltApp &built, const Halide::Target &target);

// Every Func of the app computed at root (the simple schedule tests and comparisons use as a
// reference).
void schedule_compute_root(BuiltApp &built);

} // namespace schedforge::apps
