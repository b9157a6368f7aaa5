// autoschedule: schedules an app or a random pipeline with schedforge's beam search and prints
// the schedule source, the predicted cost, the search statistics and, on request, per-stage
// features and cost terms.
//
//   autoschedule (--app NAME | --pipeline SEED [--config GENERATOR.yaml])
//                [--search-config SEARCH.yaml] [--beam 64] [--passes 1] [--dropout 1] [--seed 0]
//                [--cores N] [--threads N] [--features] [--check] [--benchmark] [--stage-times]
//                [--nest FILE | --nest-out FILE] [--follow FILE] [--stmt FILE] [--asm FILE] [--target host]
//
// Flags override the search config, which overrides the built-in defaults
// (configs/search/default.yaml documents them); without --search-config, this machine kind's
// committed calibration where there is one (sampler/machine_calibration.h). --check compiles the schedule and compares
// its output with the all-compute_root schedule's. --benchmark times the schedule and compute_root's with the benchmark
// runner (isolated workers, which also check the output); the workers search for themselves, since they are forked
// before this process starts any thread. --nest-out writes the schedule as a LoopNest (featurize/loop_nest_text.h, what
// datasets store); --nest reads one instead of searching, so that a hand-edited variant can be costed, checked and
// timed. --follow takes a complete LoopNest (another search's --nest-out) through the search and
// prints, decision by decision, the cost of its prefix beside the beam's: where, and by how much,
// the beam lets go of a schedule that its model may price cheaper once complete. --stmt writes Halide's lowered
// statement of the schedule (the loops and vectors the features predict), --asm its machine code.
// --stage-times runs the schedule under Halide's sampling profiler for about two seconds and
// prints each Func's share of the time beside its share of the manual model's predicted cost:
// where a schedule is mispriced, the stage whose price is wrong. Both are for one core: the
// profiler attributes time exactly only on one thread (runner/stage_profile.h). --target names the
// Halide target; a GPU one (host-cuda-cuda_capability_80) gets the GPU schedule of
// sampler/gpu_schedule.h (or, with the search config's gpu_schedules: search, of sampler/gpu_search.h),
// whose predicted cost and statistics are the host search's; the GPU model's time follows, and
// --features prints each stage's GPU features and each kernel's priced parts.
#include "apps/app.h"
#include "common/yaml_reader.h"
#include "featurize/apply.h"
#include "featurize/function_dag.h"
#include "featurize/gpu_features.h"
#include "featurize/loop_nest_text.h"
#include "generator/build.h"
#include "generator/config.h"
#include "generator/synthesize.h"
#include "runner/benchmark_runner.h"
#include "runner/cuda_device.h"
#include "runner/host_target.h"
#include "runner/output_check.h"
#include "runner/stage_profile.h"
#include "sampler/beam_search.h"
#include "sampler/cost_model.h"
#include "sampler/gpu_cost_model.h"
#include "sampler/gpu_schedule.h"
#include "sampler/machine_calibration.h"
#include "sampler/schedule_pipeline.h"
#include "sampler/search_options.h"
#include "tools/cli.h"
#include "tools/table.h"

#include <Halide.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

namespace {

using schedforge::tools::format_number;

namespace sf = schedforge::featurize;
namespace ss = schedforge::sampler;
namespace sg = schedforge::gen;
namespace sa = schedforge::apps;
namespace runner = schedforge::runner;
using schedforge::UserError;

// What is scheduled: a random pipeline or an app, built afresh on each call (each schedule needs
// its own Funcs), with an output buffer of the right shape.
struct Subject {
    Halide::Pipeline pipeline;
    Halide::Buffer<> output;
    std::function<void()> schedule_compute_root;
};

Subject build_subject(const std::optional<sg::PipelineSpec> &spec, const std::string &app_name) {
    Subject s;
    if (spec) {
        auto built = std::make_shared<sg::BuiltPipeline>(sg::build_pipeline(*spec));
        s.pipeline = built->pipeline;
        s.output = Halide::Buffer<>(sg::halide_type(spec->nodes[size_t(spec->output)].type), built->output_extents());
        s.schedule_compute_root = [built]() { built->schedule_compute_root(); };
    } else {
        auto built = std::make_shared<sa::BuiltApp>(sa::build_app(app_name, /*small=*/false));
        s.pipeline = built->pipeline;
        s.output = built->output_buffer;
        s.schedule_compute_root = [built]() { sa::schedule_compute_root(*built); };
    }
    return s;
}

// Schedules a fresh subject's pipeline: by searching, or with the given LoopNest text.
void schedule(Subject &s, const ss::SearchOptions &options, const Halide::Target &target, const std::string &nest,
              bool given_nest) {
    if (!given_nest) {
        ss::schedule_pipeline(s.pipeline, target, options);
        return;
    }
    const sf::FunctionDAG dag = sf::FunctionDAG::build(s.pipeline);
    sf::apply(dag, sf::parse_nest_text(dag, nest));
}

// Each Func's share of the measured one-thread time beside its share of the manual model's
// predicted cost for one core (its stages' costs summed). A Func inlined into others has no time
// of its own ("-").
void print_stage_times(const std::function<Subject()> &build, const sf::FunctionDAG &dag, const ss::SearchResult &r,
                       const ss::SearchOptions &options, const Halide::Target &target) {
    Subject profiled = build(); // the same DAG, node for node, with Halide's names of this build
    const sf::FunctionDAG profiled_dag = sf::FunctionDAG::build(profiled.pipeline);
    sf::apply(profiled_dag, r.nest);
    runner::StageProfile profile = runner::profile_stages(profiled.pipeline, profiled.output, target, 2.0);
    ss::ManualCostModel manual(options.coefficients);
    manual.set_pipeline(dag, 1);
    std::vector<double> predicted(dag.nodes.size(), 0.0);
    double predicted_total = 0;
    for (const sf::StageFeatures &f : r.features) {
        if (!f.scheduled) continue;
        const double c = manual.stage_cost(f);
        predicted[size_t(f.node)] += c;
        predicted_total += c;
    }
    const double measured_total = profile.sampled_total();
    auto share = [](double part, double total) { return format_number("%9.1f%%", total > 0 ? 100 * part / total : 0); };
    std::cout << "\nstage times on one thread (Halide's profiler: " << profile.runs << " runs, "
              << format_number("%.4g", 1e3 * profile.seconds_per_run) << " ms a run, "
              << format_number("%.4g", 1e3 * profile.unprofiled_seconds_per_run) << " ms unprofiled, "
              << format_number("%.0f", 1e3 * measured_total) << " ms sampled)\n";
    const double slowdown = profile.seconds_per_run / std::max(profile.unprofiled_seconds_per_run, 1e-12);
    if (slowdown > 1.2) {
        std::cout << "  (the instrumentation slows this schedule " << format_number("%.1f", slowdown)
                  << "x: Funcs of many productions show more than their share)\n";
    }
    std::cout << "  Func                              measured  predicted (manual model, one core)\n";
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        std::cout << "  " << std::left << std::setw(32) << sf::stable_name(dag.nodes[i].name) << std::right;
        const auto it = profile.sampled.find(profiled_dag.nodes[i].name);
        std::cout << (it == profile.sampled.end() ? std::string(9, ' ') + "- " : share(it->second, measured_total))
                  << share(predicted[i], predicted_total) << "\n";
        if (it != profile.sampled.end()) profile.sampled.erase(it);
    }
    for (const auto &[name, seconds] : profile.sampled) { // Halide's own wrappers, if any
        std::cout << "  " << std::left << std::setw(32) << name << std::right << share(seconds, measured_total)
                  << std::string(9, ' ') << "-\n";
    }
}

// The GPU model's time for a GPU nest and, with `features`, each stage's GPU features and each
// kernel's occupancy and parts (sampler/gpu_cost_model.h).
void print_gpu_prediction(const sf::FunctionDAG &dag, const sf::LoopNest &nest, const sf::GpuDevice &device,
                          const ss::SearchOptions &options, bool features) {
    const std::vector<sf::GpuStageFeatures> gf = sf::compute_gpu_features(dag, nest);
    const ss::GpuCost cost = ss::gpu_cost(gf, device);
    std::cout << "GPU model (" << device.name << ", gpu_schedules: " << options.gpu_schedules
              << "): " << format_number("%.4g", cost.seconds * 1e3) << " ms, " << cost.kernels.size() << " kernels"
              << (cost.host_seconds > 0 ? ", " + format_number("%.4g", cost.host_seconds * 1e3) + " ms on the host"
                                        : "")
              << "\n";
    if (!features) return;
    for (const sf::GpuStageFeatures &g : gf) {
        if (!g.scheduled) continue;
        std::cout << "\n" << dag.nodes[size_t(g.node)].stages[size_t(g.stage)].name << ":\n";
        const auto values = g.features.values();
        for (size_t i = 0; i < values.size(); i++)
            std::cout << "  " << sf::GpuFeatures::names()[i] << " = " << format_number("%.6g", values[i]) << "\n";
        for (const ss::KernelCost &k : cost.kernels) {
            if (k.row < 0 || &gf[size_t(k.row)] != &g) continue;
            std::cout << "  kernel: " << format_number("%.4g", k.seconds * 1e6) << " us (occupancy "
                      << format_number("%.3g", k.occupancy) << ", " << format_number("%.3g", k.blocks_per_sm)
                      << " blocks per SM, " << format_number("%.3g", k.waves) << " waves; compute "
                      << format_number("%.4g", k.compute * 1e6) << ", DRAM " << format_number("%.4g", k.dram * 1e6)
                      << ", L2 " << format_number("%.4g", k.l2 * 1e6) << ", L1 " << format_number("%.4g", k.l1 * 1e6)
                      << ", shared " << format_number("%.4g", k.shared * 1e6) << ", barriers "
                      << format_number("%.4g", k.barriers * 1e6) << " us)\n";
        }
    }
}

// The followed nest's prefix at each decision beside the beam's states (the last pass's).
void print_follow(const sf::FunctionDAG &dag, const ss::FollowPath &follow) {
    std::cout
        << "\nfollowed nest, decision by decision (cost: its prefix's; rank among the step's candidates, cheapest "
           "first; beam: the cheapest and the dearest state kept)\n";
    std::printf("  %-4s %-28s %12s %-16s %12s %12s\n", "step", "decision", "cost", "rank", "beam best", "beam cut-off");
    for (size_t d = 0; d < follow.steps.size(); d++) {
        const ss::FollowStep &s = follow.steps[d];
        const std::string name =
            dag.nodes[size_t(s.node)].name + (s.stage ? ".update(" + std::to_string(s.stage - 1) + ")" : "");
        std::string rank = s.rank < 0 ? "-" : std::to_string(s.rank + 1) + "/" + std::to_string(s.candidates);
        if (s.kept) rank += " kept";
        std::string cost = format_number("%.4g", s.cost);
        if (!s.generated) cost += " (not generated)";
        if (s.pruned) cost += " (pruned)";
        std::printf("  %-4zu %-28s %12s %-16s %12s %12s\n", d + 1, name.c_str(), cost.c_str(), rank.c_str(),
                    format_number("%.4g", s.beam_best).c_str(), format_number("%.4g", s.beam_cutoff).c_str());
    }
}

// compute_root's output and time, then the schedule's (checked against it), in workers.
void benchmark(const std::function<Subject()> &build, const ss::SearchOptions &options, const Halide::Target &target,
               const std::string &nest, bool given_nest) {
    runner::RunnerOptions runner;
    runner.target = target.to_string();
    runner.integer_tolerance = 1; // fast-math may move a float that becomes an integer by one
    runner::BenchmarkJob root;
    root.name = "compute_root";
    root.prepare = [build]() {
        Subject s = build();
        s.schedule_compute_root();
        return runner::PreparedJob{s.pipeline, s.output};
    };
    root.return_output = true;
    const runner::JobResult reference = runner::run_jobs({root}, runner).front();
    runner::BenchmarkJob searched;
    searched.name = given_nest ? "the given nest" : "schedforge";
    searched.prepare = [build, options, target, nest, given_nest]() {
        Subject s = build();
        schedule(s, options, target, nest, given_nest);
        return runner::PreparedJob{s.pipeline, s.output};
    };
    searched.reference = reference.output;
    const runner::JobResult ours = runner::run_jobs({searched}, runner).front();
    for (const runner::JobResult *r : {&reference, &ours}) {
        std::cout << "benchmark " << r->name << ": ";
        if (r->status != runner::JobStatus::Ok) {
            std::cout << runner::status_name(r->status) << " (" << r->message << ")\n";
            continue;
        }
        std::cout << format_number("%.4f", 1e3 * r->timing.min_seconds) << " ms min, "
                  << format_number("%.4f", 1e3 * r->timing.median_seconds) << " ms median (" << r->timing.samples.size()
                  << " runs, " << r->timing.threads << " threads, "
                  << format_number("%.0f", r->timing.median_page_faults) << " page faults a run); compiled in "
                  << format_number("%.2f", r->compile_seconds) << " s\n";
    }
    if (reference.status == runner::JobStatus::Ok && ours.status == runner::JobStatus::Ok &&
        ours.timing.min_seconds > 0) {
        std::cout << "speedup over compute_root: "
                  << format_number("%.2f", reference.timing.min_seconds / ours.timing.min_seconds) << "x\n";
    }
    if (ours.status != runner::JobStatus::Ok) throw std::runtime_error("the schedule failed to benchmark");
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Schedule a pipeline with schedforge's beam search.", "autoschedule"};
    std::string app_name, generator_config, search_config, weights, nest_in, nest_out, follow_in, stmt_out, asm_out,
        target_text;
    std::optional<uint64_t> pipeline_seed;
    std::optional<int> beam, passes, cores, threads;
    std::optional<double> dropout;
    std::optional<uint64_t> seed;
    bool show_features = false, check = false, bench = false, stage_times = false;
    auto *app_opt = app.add_option("--app", app_name, "An app of the suite (see apps/)");
    auto *pipe_opt = app.add_option("--pipeline", pipeline_seed, "Seed of a random pipeline");
    app_opt->excludes(pipe_opt);
    app.add_option("--config", generator_config, "Generator config for --pipeline")->check(CLI::ExistingFile);
    app.add_option("--search-config", search_config, "Search config (YAML)")->check(CLI::ExistingFile);
    app.add_option("--weights", weights, "Learned cost model weights (train-cost-model); default: the manual model");
    app.add_option("--beam", beam, "Beam size");
    app.add_option("--passes", passes, "Coarse-to-fine passes");
    app.add_option("--dropout", dropout, "Probability of keeping each state considered (1: no dropout)");
    app.add_option("--seed", seed, "Dropout seed");
    app.add_option("--cores", cores, "Cores of the target (default: this machine's)");
    app.add_option("--threads", threads, "Search threads (default: all)");
    app.add_option("--target", target_text,
                   "Halide target (default: this machine; host-cuda-cuda_capability_80 for an NVIDIA GPU)");
    app.add_flag("--features", show_features, "Print each stage's features and cost terms");
    app.add_flag("--check", check, "Compile the schedule and compare its output with compute_root's");
    app.add_flag("--benchmark", bench, "Time the schedule and compute_root's with the benchmark runner");
    app.add_flag("--stage-times", stage_times,
                 "Each Func's share of the run time on one thread (Halide's profiler) beside its share of the "
                 "predicted cost for one core");
    auto *nest_in_opt =
        app.add_option("--nest", nest_in, "Schedule with this LoopNest text instead of searching (search flags unused)")
            ->check(CLI::ExistingFile);
    app.add_option("--nest-out", nest_out, "Write the searched schedule as LoopNest text")->excludes(nest_in_opt);
    app.add_option("--follow", follow_in,
                   "Follow this complete LoopNest through the search: its prefix's cost at each decision beside the "
                   "beam's")
        ->check(CLI::ExistingFile)
        ->excludes(nest_in_opt);
    app.add_option("--stmt", stmt_out, "Write Halide's lowered statement of the schedule to this file");
    app.add_option("--asm", asm_out, "Write the schedule's machine code (LLVM's assembly) to this file");
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        if (app_name.empty() && !pipeline_seed) throw UserError("give --app NAME or --pipeline SEED");
        std::string searched_with;
        ss::SearchOptions options = ss::search_options_or_default(search_config, &searched_with);
        if (!weights.empty()) options.weights = weights;
        if (beam) options.beam_size = *beam;
        if (passes) options.passes = *passes;
        if (dropout) options.dropout = *dropout;
        if (seed) options.seed = *seed;
        if (cores) options.cores = *cores;
        if (threads) options.threads = *threads;
        options.validate("command line");

        std::optional<sg::PipelineSpec> spec;
        if (pipeline_seed) {
            const sg::GeneratorConfig cfg =
                generator_config.empty() ? sg::GeneratorConfig() : sg::load_generator_config(generator_config);
            spec = sg::synthesize_pipeline(cfg, *pipeline_seed);
        } else if (!sa::make_app(app_name)) {
            throw UserError("--app: unknown app '" + app_name + "'");
        }
        if (!target_text.empty() && !Halide::Target::validate_target_string(target_text))
            throw UserError("--target '" + target_text + "' is not a Halide target");
        const Halide::Target target =
            target_text.empty() ? runner::host_target() : runner::runnable_here(Halide::Target(target_text));
        const bool gpu = target.has_gpu_feature();
        // The GPU model prices this machine's device where it knows it (else the target's capability's).
        if (gpu && options.gpu_device.empty()) options.gpu_device = sf::gpu_device_matching(runner::cuda_device().name);
        if (gpu && stage_times) throw UserError("--stage-times describes CPU schedules; not with a GPU --target");
        if (gpu && !follow_in.empty()) throw UserError("--follow follows a CPU schedule; not with a GPU --target");
        auto build = [spec, app_name]() { return build_subject(spec, app_name); };
        const bool given_nest = !nest_in.empty();
        const std::string nest_text = given_nest ? schedforge::yaml::read_file(nest_in) : "";
        const std::string follow_text = follow_in.empty() ? "" : schedforge::yaml::read_file(follow_in);
        for (const std::string &out : {stmt_out, asm_out}) { // Halide would fail silently
            if (!out.empty() && !std::ofstream(out, std::ios::trunc)) throw UserError(out + ": cannot write");
        }
        // A partial nest is refused here, with its line, rather than in a worker or after a benchmark.
        auto complete_nest = [&](const sf::FunctionDAG &dag, const std::string &path, const std::string &text) {
            sf::LoopNest nest = sf::parse_nest_text(dag, text);
            if (!nest.complete(dag)) throw UserError(path + ": a partial schedule (some Funcs unscheduled)");
            return nest;
        };
        if (given_nest || !follow_in.empty()) {
            Subject s = build();
            const sf::FunctionDAG dag = sf::FunctionDAG::build(s.pipeline);
            if (given_nest) complete_nest(dag, nest_in, nest_text);
            if (!follow_in.empty()) complete_nest(dag, follow_in, follow_text);
        }
        if (bench)
            benchmark(build, options, target, nest_text,
                      given_nest); // first: the runner forks before any thread starts
        Subject subject = build();
        const sf::FunctionDAG dag = sf::FunctionDAG::build(subject.pipeline);
        const std::unique_ptr<ss::CostModel> model = ss::make_cost_model(options.weights, options.coefficients);
        ss::SearchResult r;
        std::optional<ss::FollowPath> follow;
        if (!follow_in.empty()) {
            follow.emplace();
            follow->goal = complete_nest(dag, follow_in, follow_text);
        }
        if (!given_nest) {
            r = ss::search_for_target(dag, target, *model, options, follow ? &*follow : nullptr);
        } else {
            r.nest = sf::parse_nest_text(dag, nest_text);
            r.features = sf::compute_schedule_features(dag, r.nest, sf::host_part(target), options.cache_sizes());
            model->set_pipeline(dag, options.target_cores());
            std::vector<double> cost;
            model->evaluate({&r.features}, cost);
            r.cost = cost.at(0);
        }
        if (!nest_out.empty()) {
            std::ofstream out(nest_out, std::ios::binary | std::ios::trunc);
            out << sf::nest_text(dag, r.nest);
            if (!out.flush()) throw UserError(nest_out + ": cannot write");
        }

        std::cout << sf::schedule_source(dag, r.nest) << "\n";
        std::cout << "predicted cost" << (gpu ? " (of the host search's schedule)" : "") << ": "
                  << format_number("%.4g", r.cost) << "\n";
        if (gpu) print_gpu_prediction(dag, r.nest, ss::gpu_device(target, options), options, show_features);
        if (bench) { // beside the page faults measured above (the rest are the runtime's and the code's)
            double refaulted = 0;
            for (const sf::StageFeatures &f : r.features) refaulted += f.features.heap_bytes_refaulted;
            std::cout << "heap pages faulted in again a run (the features' model of glibc): "
                      << format_number("%.0f", refaulted / 4096) << "\n";
        }
        std::cout << "search config: " << searched_with << "\n";
        if (!given_nest) { // the search's statistics
            const ss::SearchStats &s = r.stats;
            double total = 0;
            for (double t : s.pass_seconds) total += t;
            std::cout << "search: " << s.states_generated << " states generated, " << s.states_pruned << " pruned, "
                      << s.lookahead_states << " in twins' lookahead, " << s.cost_evaluations
                      << " costed; stage features: " << s.stages_featurized << " computed, " << s.feature_cache_hits
                      << " kept from the parent; " << format_number("%.2f", total) << " s (featurize "
                      << format_number("%.2f", s.featurize_seconds) << " s, cost "
                      << format_number("%.2f", s.cost_seconds) << " s)\n";
            for (size_t p = 0; p < s.pass_seconds.size(); p++) {
                std::cout << "  pass " << p + 1 << ": " << format_number("%.2f", s.pass_seconds[p]) << " s, best cost "
                          << format_number("%.4g", s.pass_best_cost[p]) << "\n";
            }
        }
        if (follow) print_follow(dag, *follow);
        if (show_features && !gpu) {
            // Costs and terms as the manual model sees them (the terms are the learned model's too).
            ss::ManualCostModel manual(options.coefficients);
            manual.set_pipeline(dag, options.target_cores());
            for (const sf::StageFeatures &f : r.features) {
                if (!f.scheduled) continue;
                const sf::Node &n = dag.nodes[size_t(f.node)];
                std::cout << "\n"
                          << n.name << (f.stage ? ".update(" + std::to_string(f.stage - 1) + ")" : "") << ": cost "
                          << format_number("%.4g", manual.stage_cost(f))
                          << (options.weights.empty() ? "" : " (manual model)") << "\n";
                const auto values = f.features.values();
                for (size_t i = 0; i < values.size(); i++) {
                    std::cout << "  " << sf::ScheduleFeatures::names()[i] << " = " << format_number("%.6g", values[i])
                              << "\n";
                }
                std::array<double, sf::kNumCostTerms> terms;
                manual.stage_cost(f, &terms);
                for (size_t i = 0; i < terms.size(); i++) {
                    std::cout << "  term." << sf::cost_term_names()[i] << " = " << format_number("%.6g", terms[i])
                              << "\n";
                }
            }
        }
        if (stage_times) print_stage_times(build, dag, r, options, target);
        if (!stmt_out.empty() || !asm_out.empty()) { // the code Halide makes of it: what the features must predict
            Subject lowered = build();
            sf::apply(sf::FunctionDAG::build(lowered.pipeline), r.nest);
            const std::vector<Halide::Argument> args = lowered.pipeline.infer_arguments();
            if (!stmt_out.empty()) lowered.pipeline.compile_to_lowered_stmt(stmt_out, args, Halide::Text, target);
            if (!asm_out.empty()) lowered.pipeline.compile_to_assembly(asm_out, args, "schedule", target);
        }
        if (check) {
            const Halide::Target strict = target.with_feature(Halide::Target::StrictFloat);
            Subject reference = build();
            reference.schedule_compute_root();
            reference.pipeline.realize(reference.output, strict);
            sf::apply(dag, r.nest);
            subject.pipeline.realize(subject.output, strict);
            if (subject.output.copy_to_host() != 0) throw std::runtime_error("copying the output from the GPU failed");
            const std::string diff = runner::compare_buffers(reference.output, subject.output);
            if (!diff.empty()) {
                std::cerr << "autoschedule: the schedule's output differs from compute_root's: " << diff << "\n";
                return 1;
            }
            std::cout << "check: the output matches compute_root's\n";
        }
        return 0;
    });
}
