// libautoschedule_schedforge.so: schedforge's search as a Halide 14 autoscheduler plugin.
//
// Loading the library registers the autoscheduler "SchedForge", so any Generator runs it with
//   GENERATOR -o DIR -p libautoschedule_schedforge.so -s SchedForge auto_schedule=true
//             [machine_params=CORES,CACHE,BALANCE] ...
// and a JIT program with Halide::load_plugin() and Pipeline::auto_schedule("SchedForge", ...).
// The target's core count is the machine parameters' parallelism (the cache size and balance
// are not used: the cost model has its own terms); everything else comes from the environment
// (search_options_from_environment(): SCHEDFORGE_SEARCH_CONFIG, SCHEDFORGE_BEAM_SIZE, ...); with
// no SCHEDFORGE_SEARCH_CONFIG, a CPU target of this machine's own architecture searches with this
// machine kind's committed calibration where there is one (sampler/machine_calibration.h).
// The schedule is applied to the pipeline's Funcs and returned as C++ source. A GPU target
// (host-cuda...) gets the search's GPU schedule (sampler/gpu_schedule.h).
//
// Errors reach Halide as Halide::CompileError, which GenGen reports before writing any output.
#include "common/errors.h"
#include "featurize/function_dag.h"
#include "sampler/machine_calibration.h"
#include "sampler/schedule_pipeline.h"
#include "sampler/search_options.h"

#include <Halide.h>

#include <stdexcept>
#include <string>

namespace {

namespace sf = schedforge::featurize;
namespace ss = schedforge::sampler;

constexpr const char *kName = "SchedForge";

void autoschedule(const Halide::Pipeline &pipeline, const Halide::Target &target, const Halide::MachineParams &params,
                  Halide::AutoSchedulerResults *results) {
    try {
        // A calibration prices this machine's CPU: not a GPU's kernels, nor another architecture.
        const Halide::Target host = Halide::get_host_target();
        const bool this_cpu = !target.has_gpu_feature() && target.arch == host.arch && target.bits == host.bits;
        ss::SearchOptions options = ss::search_options_from_environment(
            this_cpu ? ss::default_search_options(schedforge::common::host_kind()) : ss::SearchOptions());
        options.cores = params.parallelism;
        options.validate("machine_params (parallelism is the core count)");
        const ss::ScheduledPipeline scheduled = ss::schedule_pipeline(pipeline, target, options);
        if (results) {
            results->scheduler_name = kName;
            results->target = target;
            results->machine_params_string = params.to_string();
            results->schedule_source = scheduled.source;
        }
    } catch (const Halide::Error &) {
        throw;
    } catch (const schedforge::UserError &e) {
        throw Halide::CompileError(std::string(kName) + ": " + e.what());
    } catch (const sf::UnsupportedPipeline &e) {
        throw Halide::CompileError(std::string(kName) + ": cannot schedule this pipeline: " + e.what());
    } catch (const std::exception &e) {
        throw Halide::InternalError(std::string(kName) + ": internal error: " + e.what());
    }
}

struct Registration {
    Registration() { Halide::Pipeline::add_autoscheduler(kName, autoschedule); }
} registration;

} // namespace
