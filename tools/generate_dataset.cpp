// generate-dataset: builds a dataset of random pipelines, sampled schedules, per-stage features
// and measured runtimes (the source paper's §5), as an HDF5 file (datasets/SCHEMA.md).
//
//   generate-dataset --config configs/datasets/NAME.yaml --out FILE.h5 [--pipelines N]
//                    [--schedules-per-pipeline 32] [--seed S] [--shard K/N] [--resume]
//
// Flags override the config. --shard K/N generates only shard K of the run's N (datagen/shard.h);
// under mpirun or a Slurm array job each process takes its shard from the launcher, and --out
// DIR/ (a folder) writes DIR/shard-K-of-N.h5. Ctrl-C stops gracefully: no new sample starts,
// the ones in flight finish and are saved (a second Ctrl-C quits at once); --resume continues a
// stopped or killed run with neither duplicates nor gaps. Exit codes: 0 done, 1 runtime failure, 2 user error,
// 130 stopped by Ctrl-C.
#include "common/errors.h"
#include "datagen/config.h"
#include "datagen/generate.h"
#include "datagen/shard.h"
#include "datasets/schema.h"
#include "sampler/cost_model.h"
#include "tools/cli.h"
#include "tools/interrupt.h"
#include "tools/progress.h"
#include "tools/table.h"

#include <filesystem>
#include <iostream>
#include <optional>
#include <sys/resource.h>
#include <thread>

namespace {

using schedforge::tools::format_number;
namespace ds = schedforge::datasets;
namespace sh = schedforge::datagen;
namespace ss = schedforge::sampler;

// User and system CPU seconds of this process and of the children it has collected.
double process_tree_cpu_seconds() {
    double total = 0;
    for (const int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
        rusage u{};
        getrusage(who, &u);
        for (const timeval &t : {u.ru_utime, u.ru_stime}) total += double(t.tv_sec) + 1e-6 * double(t.tv_usec);
    }
    return total;
}

std::string failures_note(const sh::GenerationStats &s) {
    std::string note;
    for (int k = 1; k < ds::kNumStatuses; k++) {
        if (s.by_status[size_t(k)] == 0) continue;
        note +=
            (note.empty() ? "" : ", ") + std::to_string(s.by_status[size_t(k)]) + " " + ds::status_name(ds::Status(k));
    }
    return note;
}

void print_summary(const sh::GenerationStats &s, const std::string &path) {
    std::cout << "wrote " << s.samples_written << " samples of " << s.pipelines_written << " new pipelines to " << path;
    if (s.samples_present) std::cout << " (" << s.samples_present << " were already there)";
    std::cout << "\n";
    schedforge::tools::Table status({"status", "samples"});
    for (int k = 0; k < ds::kNumStatuses; k++) {
        if (s.by_status[size_t(k)])
            status.add_row({ds::status_name(ds::Status(k)), std::to_string(s.by_status[size_t(k)])});
    }
    status.print(std::cout);
    const double hours = s.wall_seconds / 3600;
    std::cout << "time: " << format_number("%.1f", s.wall_seconds) << " s wall, "
              << format_number("%.0f", hours > 0 ? double(s.samples_written) / hours : 0) << " samples/hour; search "
              << format_number("%.1f", s.search_seconds) << " s, compile " << format_number("%.1f", s.compile_seconds)
              << " s (summed over workers), benchmark " << format_number("%.1f", s.benchmark_seconds) << " s, write "
              << format_number("%.2f", s.write_seconds) << " s\n";
    if (s.retaken_timings) {
        std::cout << "contention: " << s.retaken_timings
                  << " timing samples retaken while other processes held the CPUs; " << s.contended_labels
                  << " runtimes timed under contention all the same (their messages say so)\n";
    }
    // How close the run came to keeping every core busy, two ways. Slots: the searches' and
    // compiles' seconds (each in a compile slot of its own, one a core) and the benchmarks'
    // (which hold the whole machine), over wall time x cores: how well the runner keeps its
    // slots filled. CPU: the CPU time of this process (searches, writes) and of its workers
    // (compiles, timed runs) over wall time x cores: a timed run that leaves a core idle counts so.
    const double cores = std::max(1u, std::thread::hardware_concurrency());
    if (s.wall_seconds > 0) {
        const double slots = s.search_seconds + s.compile_seconds + s.benchmark_seconds * cores;
        std::cout << "cores busy: " << format_number("%.0f", 100 * slots / (s.wall_seconds * cores)) << "% of "
                  << format_number("%.0f", cores) << " (search, compile and benchmark time); CPU "
                  << format_number("%.0f", 100 * process_tree_cpu_seconds() / (s.wall_seconds * cores)) << "%\n";
    }
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    const int64_t samples = s.samples_written + s.samples_present;
    if (!ec && samples > 0) {
        std::cout << "file: " << format_number("%.1f", double(bytes) / 1024) << " KiB, "
                  << format_number("%.0f", double(bytes) / double(samples)) << " bytes per sample\n";
    }
}

// The shard to generate: --shard, else the launcher's (mpirun, a Slurm array), else the whole run;
// and the file it goes to: a folder (--out DIR/ or an existing one) takes DIR/shard-K-of-N.h5.
std::string shard_output(const std::string &shard_flag, const std::string &out, sh::DatasetConfig &config) {
    std::optional<sh::LaunchedShard> launched = sh::shard_from_environment();
    if (!shard_flag.empty()) {
        config.shard = sh::parse_shard(shard_flag);
    } else if (launched) {
        config.shard = launched->shard;
        config.runner.processes_on_machine = int(launched->processes_on_machine);
    }
    // Shards that share a machine take turns to time (runner/machine_lock.h), whoever started them.
    if (!config.shard.whole() && config.runner.exclusive_benchmark)
        config.runner.machine_lock = (std::filesystem::temp_directory_path() / "schedforge-timing.lock").string();
    const bool folder = (!out.empty() && out.back() == '/') || std::filesystem::is_directory(out);
    if (!folder) {
        if (launched && shard_flag.empty()) {
            throw schedforge::UserError(launched->launcher + " started " + std::to_string(launched->shard.count) +
                                        " processes, each writing its own shard: give --out a folder (DIR/)");
        }
        return out;
    }
    if (config.shard.whole()) {
        throw schedforge::UserError("--out " + out +
                                    " is a folder, which takes shards: add --shard K/N, or run under mpirun or as a "
                                    "Slurm array job");
    }
    return (std::filesystem::path(out) / config.shard.file_name()).string();
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Generate a dataset of random pipelines, sampled schedules, features and runtimes (HDF5).",
                 "generate-dataset"};
    std::string config_path, out_path, weights, shard;
    std::optional<int64_t> pipelines, schedules;
    std::optional<uint64_t> seed;
    bool resume = false;
    app.add_option("--config", config_path, "Dataset config (configs/datasets/*.yaml)")->required();
    app.add_option("--out", out_path, "The HDF5 file to write")->required();
    app.add_option("--pipelines", pipelines, "Random pipelines (overrides the config)");
    app.add_option("--schedules-per-pipeline", schedules, "Schedules sampled per pipeline (overrides the config)");
    app.add_option("--seed", seed, "Run seed (overrides the config)");
    app.add_option("--weights", weights, "Learned cost model weights for the search (overrides the config)");
    app.add_option("--shard", shard, "Generate shard K of N of the run (K/N, K from 0; default: the launcher's)");
    app.add_flag("--resume", resume, "Continue FILE: run only the samples it lacks");
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        sh::DatasetConfig config = sh::load_dataset_config(config_path);
        if (pipelines) config.pipelines = *pipelines;
        if (schedules) config.schedules_per_pipeline = *schedules;
        if (seed) config.seed = *seed;
        if (!weights.empty()) config.search.weights = weights;
        out_path = shard_output(shard, out_path, config);
        config.validate("command line");
        // A bad weights file is a user error now, not a failure in every worker.
        if (!config.search.weights.empty()) ss::make_cost_model(config.search.weights, config.search.coefficients);
        // A shard's folder is made once every check has passed (a whole run's must exist).
        if (const auto folder = std::filesystem::path(out_path).parent_path(); !config.shard.whole() && !folder.empty())
            std::filesystem::create_directories(folder);

        const std::atomic<bool> *stop = schedforge::tools::stop_on_interrupt(
            "\ngenerate-dataset: stopping after the samples in flight (Ctrl-C again to quit now; --resume "
            "continues)\n");
        if (!config.shard.whole()) std::cout << "shard " << config.shard.text() << " of the run: " << out_path << "\n";
        std::optional<schedforge::tools::ProgressBar> bar;
        const sh::GenerationStats stats =
            sh::generate_dataset(config, out_path, resume, stop, [&](const sh::GenerationStats &s) {
                if (!bar) { // the first call: the plan is made
                    bar.emplace("samples", s.samples_planned - s.samples_present, /*per_hour=*/true);
                    return;
                }
                bar->step(failures_note(s));
            });
        if (bar) bar->finish();
        print_summary(stats, out_path);
        if (stats.stopped) {
            std::cerr << "generate-dataset: stopped; " << stats.samples_present + stats.samples_written << " of "
                      << stats.samples_planned << " samples are in " << out_path << " (--resume continues)\n";
            return 130;
        }
        return 0;
    });
}
