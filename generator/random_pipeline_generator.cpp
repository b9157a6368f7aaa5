// The `random_pipeline` Halide Generator: the same pipelines as synthesize_pipeline(), exposed
// to Halide's own tooling (GenGen flags, -p/-s autoscheduler plugins, RunGen).
//
//   random_pipeline.generator -g random_pipeline -o DIR target=host seed=7
//       [config=configs/generator/default.yaml] [stages=12] [auto_schedule=true -p PLUGIN -s NAME]
//
// Inputs and the output are declared in configure(), since their number, types and dimensions
// depend on the seed.
#include "common/errors.h"
#include "generator/build.h"
#include "generator/config.h"
#include "generator/synthesize.h"

#include <Halide.h>

#include <cstdlib>
#include <iostream>

namespace {

using namespace Halide;
namespace sg = schedforge::gen;

class RandomPipeline : public Generator<RandomPipeline> {
public:
    GeneratorParam<uint64_t> seed{"seed", 0};
    GeneratorParam<std::string> config{"config", ""}; // empty: the built-in defaults
    GeneratorParam<int> stages{"stages", 0};          // 0: the config's stage range

    void configure() {
        try {
            const sg::GeneratorConfig cfg =
                config.value().empty() ? sg::GeneratorConfig() : sg::load_generator_config(config.value());
            spec_ = sg::synthesize_pipeline(cfg, seed.value(), stages.value());
        } catch (const schedforge::UserError &e) {
            // A bad config is the user's to fix: one line and exit 2, before anything is written.
            std::cerr << "random_pipeline: " << e.what() << "\n";
            std::exit(2);
        }
        for (int index : spec_.input_nodes()) {
            const sg::Node &node = spec_.nodes[size_t(index)];
            inputs_.push_back(add_input<Buffer<>>("in" + std::to_string(index), sg::halide_type(node.type),
                                                  int(node.extents.size())));
        }
        const sg::Node &out = spec_.nodes[size_t(spec_.output)];
        output_ = add_output<Buffer<>>("output", sg::halide_type(out.type), int(out.extents.size()));
    }

    void generate() {
        std::vector<sg::InputSource> sources;
        const std::vector<int> input_nodes = spec_.input_nodes();
        for (size_t i = 0; i < inputs_.size(); i++) {
            GeneratorInput<Buffer<>> &in = *inputs_[i];
            sg::InputSource src{Func(in), {}};
            for (int d = 0; d < in.dimensions(); d++) src.bounds.emplace_back(in.dim(d).min(), in.dim(d).extent());
            in.set_estimates(sg::estimate_region(spec_.nodes[size_t(input_nodes[i])]));
            sources.push_back(std::move(src));
        }
        const std::vector<Func> funcs = sg::define_pipeline(spec_, sources);
        *output_ = funcs[size_t(spec_.output)];
        output_->set_estimates(sg::estimate_region(spec_.nodes[size_t(spec_.output)]));
    }

private:
    sg::PipelineSpec spec_;
    std::vector<GeneratorInput<Buffer<>> *> inputs_;
    GeneratorOutput<Buffer<>> *output_ = nullptr;
};

} // namespace

HALIDE_REGISTER_GENERATOR(RandomPipeline, random_pipeline)
