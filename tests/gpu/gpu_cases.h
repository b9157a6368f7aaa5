// What the GPU tests schedule: random pipelines (configs/generator/small.yaml) and the apps, under
// the search's GPU schedule (a quick search) by the rules (sampler/gpu_schedule.h) and by the GPU
// search (sampler/gpu_search.h), under random CPU nests carried onto the GPU by the rules, and
// under random schedules of the GPU search's space, for a CUDA target.
#pragma once

#include "apps/app.h"
#include "featurize/apply.h"
#include "featurize/function_dag.h"
#include "featurize/random_loop_nest.h"
#include "generator/build.h"
#include "generator/config.h"
#include "generator/synthesize.h"
#include "runner/host_target.h"
#include "sampler/gpu_schedule.h"
#include "sampler/gpu_search.h"
#include "sampler/schedule_pipeline.h"

#include <Halide.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>

namespace schedforge::testing {

// Compiling needs no device: capability 8.0 (Ampere; its PTX runs on later GPUs too).
inline Halide::Target compile_only_cuda_target() {
    return runner::jit_target().with_feature(Halide::Target::CUDA).with_feature(Halide::Target::CUDACapability80);
}

inline sampler::SearchOptions quick_search() {
    sampler::SearchOptions o;
    o.beam_size = 8;
    o.threads = 1;
    o.cores = 4;
    return o;
}

inline gen::PipelineSpec small_random_pipeline(uint64_t seed) {
    return gen::synthesize_pipeline(
        gen::load_generator_config(std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/generator/small.yaml"), seed);
}

// Searched: the CPU search carried over by the rules; RandomNest: a random CPU nest carried over
// by the rules; GpuSearched: the GPU search; GpuRandom: random choices in the GPU search's space.
enum class GpuSchedule { Searched, RandomNest, GpuSearched, GpuRandom };

// The sweep: seeds under a kind of GPU schedule, every `stride`-th seed, named "searched_7", "random_7".
using SweepCase = std::tuple<int, GpuSchedule>;
inline auto sweep_cases(GpuSchedule how, int stride = 1) {
    return ::testing::Combine(::testing::Range(0, SCHEDFORGE_SEED_SWEEP, stride), ::testing::Values(how));
}
inline std::string schedule_kind_name(GpuSchedule how) {
    switch (how) {
    case GpuSchedule::Searched: return "searched";
    case GpuSchedule::RandomNest: return "random";
    case GpuSchedule::GpuSearched: return "gpu_searched";
    case GpuSchedule::GpuRandom: return "gpu_random";
    }
    return "";
}
inline std::string sweep_case_name(const ::testing::TestParamInfo<SweepCase> &info) {
    return schedule_kind_name(std::get<1>(info.param)) + "_" + std::to_string(std::get<0>(info.param));
}

// Schedules `pipeline` for `target` (a GPU one) and returns the schedule's source.
inline std::string schedule_for_gpu(const Halide::Pipeline &pipeline, GpuSchedule how, uint64_t seed,
                                    const Halide::Target &target) {
    const featurize::FunctionDAG dag = featurize::FunctionDAG::build(pipeline);
    featurize::LoopNest nest;
    switch (how) {
    case GpuSchedule::Searched:
    case GpuSchedule::GpuSearched: {
        sampler::SearchOptions options = quick_search();
        if (how == GpuSchedule::GpuSearched) options.gpu_schedules = "search";
        nest = sampler::schedule_pipeline(dag, target, options).search.nest;
        return featurize::schedule_source(dag, nest); // schedule_pipeline applied it
    }
    case GpuSchedule::RandomNest:
        nest = sampler::gpu_nest(dag, featurize::random_loop_nest(dag, featurize::host_part(target), seed));
        break;
    case GpuSchedule::GpuRandom:
        nest =
            sampler::random_gpu_nest(dag, featurize::random_loop_nest(dag, featurize::host_part(target), seed), seed);
        break;
    }
    featurize::apply(dag, nest);
    return featurize::schedule_source(dag, nest);
}

} // namespace schedforge::testing
