#include "datagen/jobs.h"

#include "common/wire.h"
#include "featurize/apply.h"
#include "featurize/function_dag.h"
#include "featurize/loop_nest_text.h"
#include "generator/build.h"
#include "generator/spec_codec.h"

#include <stdexcept>

namespace schedforge::datagen {

namespace sf = featurize;

runner::JobSpec generated_job(const gen::PipelineSpec &spec, const std::string &nest, std::string payload) {
    common::ByteWriter w;
    w.put_string(gen::encode_spec(spec));
    w.put_string(nest);
    return runner::JobSpec{kGeneratedJob, w.bytes(), std::move(payload)};
}

namespace {

// The pipeline `built` from `spec`, with a buffer of its output's type and shape to realize into.
runner::PreparedJob prepared_output(const gen::PipelineSpec &spec, gen::BuiltPipeline &built) {
    const gen::Node &out = spec.nodes[size_t(spec.output)];
    return runner::PreparedJob{built.pipeline, Halide::Buffer<>(gen::halide_type(out.type), built.output_extents())};
}

runner::PreparedJob build_generated(const std::string &data) {
    common::ByteReader r(data);
    const std::string spec_bytes = r.get_string(), nest = r.get_string();
    gen::PipelineSpec spec;
    if (!r.ok() || !r.at_end() || !gen::decode_spec(spec_bytes, &spec))
        throw std::runtime_error("a generated-pipeline job whose bytes do not decode");
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    runner::PreparedJob job = prepared_output(spec, built);
    if (nest.empty()) {
        built.schedule_compute_root();
    } else {
        const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
        sf::apply(dag, sf::parse_nest_text(dag, nest));
    }
    return job;
}

} // namespace

void add_job_kinds(runner::JobKinds *kinds) { (*kinds)[kGeneratedJob] = build_generated; }

} // namespace schedforge::datagen
