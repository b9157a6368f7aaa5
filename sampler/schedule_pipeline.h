// One call from a Halide pipeline to a scheduled one: build its FunctionDAG, search with the
// manual cost model, apply the best schedule to the pipeline's Funcs. For a GPU target, the search
// schedules the host CPU and sampler/gpu_schedule.h (or, asked, sampler/gpu_search.h) carries its
// result onto the GPU. The plugin, compare-schedulers'
// SchedForge column and the dataset tools all schedule through it.
#pragma once

#include "featurize/function_dag.h"
#include "featurize/gpu_features.h"
#include "sampler/beam_search.h"
#include "sampler/search_options.h"

#include <Halide.h>

#include <string>

namespace schedforge::sampler {

struct ScheduledPipeline {
    SearchResult search;
    std::string source; // featurize::schedule_source() of the schedule applied
    std::string nest;   // featurize::nest_text() of it (what datasets store)
};

// The search for `target`: beam_search() for a CPU; for a GPU, beam_search() for its host, carried
// onto the GPU by the rules (gpu_nest()) or, with options.gpu_schedules "search", by the GPU search
// from its inlining (gpu_search()); the result's features and cost are then the host schedule's,
// and `follow` follows a host schedule.
SearchResult search_for_target(const featurize::FunctionDAG &dag, const Halide::Target &target, CostModel &model,
                               const SearchOptions &options, FollowPath *follow = nullptr);

// The device the GPU cost model prices for `target`: options.gpu_device, else the target's.
const featurize::GpuDevice &gpu_device(const Halide::Target &target, const SearchOptions &options);

// Throws featurize::UnsupportedPipeline for a pipeline the search cannot take (e.g. a Func
// without estimates).
ScheduledPipeline schedule_pipeline(const Halide::Pipeline &pipeline, const Halide::Target &target,
                                    const SearchOptions &options);
// The same with the pipeline's FunctionDAG already built (its Funcs get the schedule).
ScheduledPipeline schedule_pipeline(const featurize::FunctionDAG &dag, const Halide::Target &target,
                                    const SearchOptions &options);
// The schedule the search finds, not applied: the Funcs keep theirs, so that several searches may
// share one DAG, each on a thread of its own (generate-dataset's searches of one pipeline).
ScheduledPipeline search_schedule(const featurize::FunctionDAG &dag, const Halide::Target &target,
                                  const SearchOptions &options);

} // namespace schedforge::sampler
