#include "sampler/schedule_pipeline.h"

#include "featurize/apply.h"
#include "featurize/function_dag.h"
#include "featurize/loop_nest_text.h"
#include "sampler/cost_model.h"

namespace schedforge::sampler {

ScheduledPipeline schedule_pipeline(const Halide::Pipeline &pipeline, const Halide::Target &target,
                                    const SearchOptions &options) {
    return schedule_pipeline(featurize::FunctionDAG::build(pipeline), target, options);
}

ScheduledPipeline schedule_pipeline(const featurize::FunctionDAG &dag, const Halide::Target &target,
                                    const SearchOptions &options) {
    const std::unique_ptr<CostModel> model = make_cost_model(options.weights, options.coefficients);
    ScheduledPipeline scheduled;
    scheduled.search = beam_search(dag, target, *model, options);
    featurize::apply(dag, scheduled.search.nest);
    scheduled.source = featurize::schedule_source(dag, scheduled.search.nest);
    scheduled.nest = featurize::nest_text(dag, scheduled.search.nest);
    return scheduled;
}

} // namespace schedforge::sampler
