// generate-pipelines: draws random pipelines, writes their specs, and optionally compiles and
// runs each one (JIT, default schedule), printing a summary table.
//
//   generate-pipelines [--config FILE] [--seed S] [--count N] --out DIR [--stages K]
//                      [--stmt] [--html] [--run [--schedule root|inline]]
//
// Pipeline i uses seed S + i. DIR receives <i>_<id>.spec (and .stmt / .stmt.html on request)
// plus pipelines.tsv, one row per pipeline. --run uses the all-compute_root schedule by default:
// Halide's own default (everything inlined, reductions recomputed at their consumers' innermost
// loop) can take minutes on full-size pipelines; ask for it with --schedule inline.
#include "common/rng.h"
#include "generator/build.h"
#include "generator/config.h"
#include "generator/synthesize.h"
#include "runner/host_target.h"
#include "tools/cli.h"
#include "tools/files.h"
#include "tools/progress.h"
#include "tools/table.h"

#include <Halide.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <set>

namespace {

namespace sg = schedforge::gen;
namespace runner = schedforge::runner;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string shape_text(const std::vector<int64_t> &extents) {
    std::string s;
    for (size_t i = 0; i < extents.size(); i++) s += (i ? "x" : "") + std::to_string(extents[i]);
    return s;
}

std::string kinds_text(const sg::PipelineSpec &spec) {
    std::map<std::string, int> counts;
    for (const sg::Node &n : spec.nodes) {
        if (n.kind != sg::StageKind::Input) counts[sg::kind_name(n.kind)]++;
    }
    std::string s;
    for (const auto &[name, count] : counts)
        s += (s.empty() ? "" : " ") + name + (count > 1 ? "*" + std::to_string(count) : "");
    return s;
}

std::string types_text(const sg::PipelineSpec &spec) {
    std::set<int> types;
    for (const sg::Node &n : spec.nodes) types.insert(int(n.type));
    std::string s;
    for (int t : types) s += (s.empty() ? "" : ",") + std::string(sg::type_short_name(sg::ScalarType(t)));
    return s;
}

// A short fingerprint of an output buffer's bytes (equal outputs, equal checksums).
std::string checksum(const Halide::Buffer<> &buf) {
    Halide::Buffer<> dense = buf.copy(); // copy() is dense, so the bytes are contiguous
    const auto *bytes = reinterpret_cast<const char *>(dense.data());
    return sg::format_id(schedforge::common::mix64(schedforge::common::fnv1a64(bytes, dense.size_in_bytes())))
        .substr(0, 8);
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Draw random Halide pipelines, write their specs, and optionally compile and run them.",
                 "generate-pipelines"};
    std::string config_path, out_dir;
    uint64_t seed = 0;
    int64_t count = 8, stages = 0;
    bool stmt = false, html = false, run = false;
    std::string schedule = "root";
    app.add_option("--config", config_path, "Generator config YAML (default: built-in defaults)");
    app.add_option("--seed", seed, "Seed of the first pipeline; pipeline i uses seed + i");
    app.add_option("--count", count, "How many pipelines")->check(CLI::PositiveNumber);
    app.add_option("--out", out_dir, "Output folder (created if missing)")->required();
    app.add_option("--stages", stages, "Exact stage count, overriding the config's range")
        ->check(CLI::NonNegativeNumber);
    app.add_flag("--stmt", stmt, "Also write Halide's lowered statement (.stmt) per pipeline");
    app.add_flag("--html", html, "Also write Halide's HTML statement view (.stmt.html) per pipeline");
    app.add_flag("--run", run, "JIT-compile and run each pipeline");
    app.add_option("--schedule", schedule,
                   "Schedule for --run, --stmt and --html: root (every stage compute_root) or "
                   "inline (Halide's default)")
        ->check(CLI::IsMember({"root", "inline"}));

    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        const sg::GeneratorConfig cfg =
            config_path.empty() ? sg::GeneratorConfig() : sg::load_generator_config(config_path);
        schedforge::tools::ensure_directory(out_dir);

        std::vector<std::string> header = {"#", "seed", "id", "flavour", "stages", "inputs", "output", "types"};
        if (run) header.insert(header.end(), {"compile_ms", "run_ms", "checksum"});
        header.push_back("kinds");
        schedforge::tools::Table table(header);
        std::string tsv;
        int failures = 0;
        const Halide::Target target = runner::jit_target();

        schedforge::tools::ProgressBar progress("pipelines", count);
        for (int64_t i = 0; i < count; i++) {
            const uint64_t s = seed + uint64_t(i);
            const sg::PipelineSpec spec = sg::synthesize_pipeline(cfg, s, stages);
            char prefix[32];
            std::snprintf(prefix, sizeof(prefix), "%04lld_", (long long)i);
            const std::string base = out_dir + "/" + prefix + sg::format_id(spec.id());
            schedforge::tools::write_file_atomic(base + ".spec", spec.to_text());

            std::string inputs;
            for (int in : spec.input_nodes()) {
                const sg::Node &n = spec.nodes[size_t(in)];
                if (n.image) inputs += (inputs.empty() ? "" : " ") + shape_text(n.extents);
            }
            std::vector<std::string> row = {std::to_string(i),
                                            std::to_string(s),
                                            sg::format_id(spec.id()),
                                            spec.dnn ? "dnn" : "imaging",
                                            std::to_string(spec.num_stages()),
                                            inputs,
                                            shape_text(spec.nodes[size_t(spec.output)].extents),
                                            types_text(spec)};
            if (stmt || html || run) {
                try {
                    sg::BuiltPipeline built = sg::build_pipeline(spec);
                    if (schedule == "root") built.schedule_compute_root();
                    if (stmt)
                        built.pipeline.compile_to_lowered_stmt(base + ".stmt", built.pipeline.infer_arguments(),
                                                               Halide::Text, target);
                    if (html)
                        built.pipeline.compile_to_lowered_stmt(base + ".stmt.html", built.pipeline.infer_arguments(),
                                                               Halide::HTML, target);
                    if (run) {
                        auto start = Clock::now();
                        built.pipeline.compile_jit(target);
                        const double compile_ms = ms_since(start);
                        start = Clock::now();
                        const Halide::Buffer<> out = built.run(target);
                        const double run_ms = ms_since(start);
                        char a[32], b[32];
                        std::snprintf(a, sizeof(a), "%.0f", compile_ms);
                        std::snprintf(b, sizeof(b), "%.1f", run_ms);
                        row.insert(row.end(), {a, b, checksum(out)});
                    }
                } catch (const Halide::Error &e) {
                    // One bad pipeline does not end the run; it is reported and counted.
                    failures++;
                    std::fprintf(stderr, "generate-pipelines: pipeline %lld (seed %llu) failed: %s\n", (long long)i,
                                 (unsigned long long)s, e.what());
                    if (run) row.insert(row.end(), {"FAILED", "-", "-"});
                }
            }
            row.push_back(kinds_text(spec));
            table.add_row(row);
            for (size_t k = 0; k < row.size(); k++) tsv += row[k] + (k + 1 < row.size() ? "\t" : "\n");
            progress.step(failures ? std::to_string(failures) + " failed" : "");
        }
        progress.finish();
        std::string tsv_header;
        for (size_t k = 0; k < header.size(); k++) tsv_header += header[k] + (k + 1 < header.size() ? "\t" : "\n");
        schedforge::tools::write_file_atomic(out_dir + "/pipelines.tsv", tsv_header + tsv);
        table.print(std::cout);
        std::printf("%lld pipelines written to %s%s\n", (long long)count, out_dir.c_str(),
                    failures ? (", " + std::to_string(failures) + " failed").c_str() : "");
        return failures ? 1 : 0;
    });
}
