#include "sampler/schedule_pipeline.h"

#include "featurize/apply.h"
#include "featurize/function_dag.h"
#include "featurize/loop_nest_text.h"
#include "sampler/cost_model.h"
#include "sampler/gpu_schedule.h"
#include "sampler/gpu_search.h"

namespace schedforge::sampler {

const featurize::GpuDevice &gpu_device(const Halide::Target &target, const SearchOptions &options) {
    return options.gpu_device.empty() ? featurize::gpu_device_for(target)
                                      : featurize::gpu_device_named(options.gpu_device);
}

SearchResult search_for_target(const featurize::FunctionDAG &dag, const Halide::Target &target, CostModel &model,
                               const SearchOptions &options, FollowPath *follow) {
    SearchResult r = beam_search(dag, featurize::host_part(target), model, options, follow); // a CPU target's self
    if (!target.has_gpu_feature()) return r;
    if (options.gpu_schedules == "search") {
        r.nest = gpu_search(dag, r.nest, gpu_device(target, options), options.gpu_beam_size, options.threads).nest;
    } else {
        r.nest = gpu_nest(dag, r.nest);
    }
    return r;
}

ScheduledPipeline schedule_pipeline(const Halide::Pipeline &pipeline, const Halide::Target &target,
                                    const SearchOptions &options) {
    return schedule_pipeline(featurize::FunctionDAG::build(pipeline), target, options);
}

ScheduledPipeline schedule_pipeline(const featurize::FunctionDAG &dag, const Halide::Target &target,
                                    const SearchOptions &options) {
    ScheduledPipeline scheduled = search_schedule(dag, target, options);
    featurize::apply(dag, scheduled.search.nest);
    return scheduled;
}

ScheduledPipeline search_schedule(const featurize::FunctionDAG &dag, const Halide::Target &target,
                                  const SearchOptions &options) {
    const std::unique_ptr<CostModel> model = make_cost_model(options.weights, options.coefficients);
    ScheduledPipeline scheduled;
    scheduled.search = search_for_target(dag, target, *model, options);
    scheduled.source = featurize::schedule_source(dag, scheduled.search.nest);
    scheduled.nest = featurize::nest_text(dag, scheduled.search.nest);
    return scheduled;
}

} // namespace schedforge::sampler
