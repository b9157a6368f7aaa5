// The pipeline a dataset job schedules, built afresh (each schedule needs its own Funcs): an app
// of apps/ at full size or a random pipeline from its spec, with an output buffer to realize
// into. schedule-report's workers and `dataset refeaturize` build theirs here.
#pragma once

#include "apps/app.h"
#include "generator/build.h"
#include "generator/spec.h"

#include <Halide.h>

#include <string>

namespace schedforge::datagen {

struct BuiltSubject {
    apps::BuiltApp app;        // apps
    gen::BuiltPipeline random; // random pipelines
    Halide::Pipeline pipeline;
    Halide::Buffer<> output;
    void schedule_compute_root();
};

// The app `app` if it is not empty, else the random pipeline `spec`.
BuiltSubject build_subject(const std::string &app, const gen::PipelineSpec &spec);

} // namespace schedforge::datagen
