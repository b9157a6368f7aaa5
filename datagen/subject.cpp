#include "datagen/subject.h"

namespace schedforge::datagen {

void BuiltSubject::schedule_compute_root() {
    if (app.app) {
        apps::schedule_compute_root(app);
    } else {
        random.schedule_compute_root();
    }
}

BuiltSubject build_subject(const std::string &app, const gen::PipelineSpec &spec) {
    BuiltSubject b;
    if (!app.empty()) {
        b.app = apps::build_app(app, /*small=*/false);
        b.pipeline = b.app.pipeline;
        b.output = b.app.output_buffer;
        return b;
    }
    b.random = gen::build_pipeline(spec);
    b.pipeline = b.random.pipeline;
    const gen::Node &out = spec.nodes[size_t(spec.output)];
    b.output = Halide::Buffer<>(gen::halide_type(out.type), b.random.output_extents());
    return b;
}

} // namespace schedforge::datagen
