// The `app` Halide Generator: every app of the suite exposed to Halide's own tooling (GenGen
// flags, -p/-s autoscheduler plugins, add_halide_library, RunGen).
//
//   app.generator -g app -o DIR target=host app=harris                  (the manual schedule)
//   app.generator -g app -o DIR target=host app=harris auto_schedule=true -p PLUGIN -s NAME
//
// Inputs and the output are declared in configure(), since they depend on the app. Estimates
// are the app's benchmark sizes.
#include "apps/app.h"

#include <Halide.h>

#include <cstdlib>
#include <iostream>

namespace {

using namespace Halide;
namespace sa = schedforge::apps;

Region estimates_of(const std::vector<int> &extents) {
    Region r;
    for (int e : extents) r.emplace_back(0, e);
    return r;
}

class AppGenerator : public Generator<AppGenerator> {
public:
    GeneratorParam<std::string> app{"app", ""};

    void configure() {
        app_ = sa::make_app(app.value());
        if (!app_) {
            // A bad name is the user's to fix: one line and exit 2, before anything is written.
            std::string names;
            for (const std::string &n : sa::app_names()) names += (names.empty() ? "" : ", ") + n;
            std::cerr << "app generator: unknown app '" << app.value() << "' (set app= to one of: " << names << ")\n";
            std::exit(2);
        }
        shapes_ = app_->inputs(/*small=*/false);
        for (const sa::InputShape &s : shapes_) {
            inputs_.push_back(add_input<Buffer<>>(s.name, s.type, int(s.extents.size())));
        }
        output_ = add_output<Buffer<>>("output", app_->output_type(), int(app_->output_extents(shapes_).size()));
    }

    void generate() {
        std::vector<ImageParam> params;
        for (size_t i = 0; i < inputs_.size(); i++) {
            inputs_[i]->set_estimates(estimates_of(shapes_[i].extents));
            params.push_back(*inputs_[i]);
        }
        *output_ = app_->define(params);
        output_->set_estimates(estimates_of(app_->output_extents(shapes_)));
    }

    void schedule() {
        // With auto_schedule=true the plugin named by -s schedules the pipeline instead.
        if (!auto_schedule) app_->schedule_manual(get_target());
    }

private:
    std::unique_ptr<sa::App> app_;
    std::vector<sa::InputShape> shapes_;
    std::vector<GeneratorInput<Buffer<>> *> inputs_;
    GeneratorOutput<Buffer<>> *output_ = nullptr;
};

} // namespace

HALIDE_REGISTER_GENERATOR(AppGenerator, app)
