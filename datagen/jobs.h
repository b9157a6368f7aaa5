// The dataset engine's jobs described as data (runner::JobSpec), for the benchmark runner's
// pooled workers: a generated pipeline, sent as its spec's bytes, with every stage computed at
// root (a pipeline's reference job) or with a searched schedule's loop nest applied (a sample).
// The search runs in generate-dataset's own process; the worker only builds, compiles and times.
#pragma once

#include "generator/spec.h"
#include "runner/benchmark_runner.h"
#include "runner/job_worker.h"

#include <string>

namespace schedforge::datagen {

// The job kind of a generated pipeline with a schedule.
inline const std::string kGeneratedJob = "datagen.generated";

// `spec` scheduled by `nest` (featurize::nest_text; empty: every stage at root).
runner::JobSpec generated_job(const gen::PipelineSpec &spec, const std::string &nest, std::string payload);

// The kinds a worker program for datasets serves (tools/schedforge_worker.cpp).
void add_job_kinds(runner::JobKinds *kinds);

} // namespace schedforge::datagen
