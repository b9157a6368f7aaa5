// dataset: inspects and reshapes schedforge datasets (HDF5, datasets/SCHEMA.md).
//
//   dataset info FILE                      counts, statuses, runtimes, producer and hardware
//   dataset verify FILE                    checksums, schema, CSR offsets, feature versions
//   dataset verify --manifest DIR/SHA256SUMS   a published folder: digests, then every dataset
//   dataset publish DIR                    verifies and compacts DIR/*.h5, writes DIR/README.md
//                                          (the dataset card), read_dataset.py, runtimes.png and
//                                          SHA256SUMS
//   dataset merge --out OUT [--force] IN...  shards into one file (same hardware and features)
//   dataset merge --virtual OUT [--force] IN...  the same as an HDF5 virtual dataset over the
//                                          shards: their tables rebased, their arrays mapped
//                                          (datasets/virtual_merge.h)
//   dataset compact FILE                   rewrites FILE as small as its content (files left by a
//                                          stopped generate-dataset take ~50x that)
//   dataset split FILE --out-dir DIR [--fractions 0.8,0.1,0.1]   train/validation/test by pipeline hash
//   dataset export FILE --out-dir DIR [--format csv|npy]
//   dataset refeaturize FILE --out OUT     the same records with this build's features, computed
//                                          from the stored loop nests (schema version 3 on)
//   dataset retime FILE --out OUT [--config DATASET.yaml] [--threads N] [--resume]
//                                          the stored schedules compiled and timed again on this
//                                          machine (the config's timing and runner keys), with
//                                          this build's features: labels for new hardware. Written
//                                          as it goes to OUT.partial; Ctrl-C stops after the
//                                          pipeline in flight, --resume continues a stopped or
//                                          killed run
//
// Exit codes: 0 fine, 1 verify found problems (or a runtime failure), 2 user error, 130 retime
// stopped by Ctrl-C.
#include "datagen/config.h"
#include "datagen/refeaturize.h"
#include "datagen/retime.h"
#include "datasets/operations.h"
#include "datasets/publish.h"
#include "datasets/reader.h"
#include "datasets/verify.h"
#include "datasets/virtual_merge.h"
#include "tools/cli.h"
#include "tools/files.h"
#include "tools/interrupt.h"
#include "tools/progress.h"
#include "tools/table.h"

#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

namespace {

using schedforge::UserError;
using schedforge::tools::format_number;
namespace ds = schedforge::datasets;
namespace runner = schedforge::runner;

int refeaturize(const std::string &file, const std::string &out) {
    std::unique_ptr<schedforge::tools::ProgressBar> bar;
    const schedforge::datagen::RefeaturizeReport r =
        schedforge::datagen::refeaturize_dataset(file, out, [&](uint64_t, uint64_t total) {
            if (!bar) bar = std::make_unique<schedforge::tools::ProgressBar>("refeaturize", int64_t(total));
            bar->step();
        });
    if (bar) bar->finish();
    std::cout << out << ": " << r.pipelines << " pipelines, " << r.schedules << " schedules (" << r.refeaturized
              << " refeaturized from their loop nests, " << r.without_features << " without features as before)\n";
    return 0;
}

int retime(const std::string &file, const std::string &out, const std::string &config, int threads, bool resume) {
    runner::RunnerOptions runner = config.empty() ? schedforge::datagen::DatasetConfig().runner
                                                  : schedforge::datagen::load_dataset_config(config).runner;
    if (threads >= 0) runner.timing.threads = threads;
    const std::atomic<bool> *stop = schedforge::tools::stop_on_interrupt(
        "\ndataset retime: stopping after the pipelines in flight (Ctrl-C again to quit now; --resume continues)\n");
    std::unique_ptr<schedforge::tools::ProgressBar> bar;
    const schedforge::datagen::RetimeReport r =
        schedforge::datagen::retime_dataset(file, out, runner, resume, stop, [&](uint64_t, uint64_t total) {
            if (!bar) bar = std::make_unique<schedforge::tools::ProgressBar>("retime", int64_t(total), true);
            bar->step();
        });
    if (bar) bar->finish();
    if (r.stopped) {
        std::cerr << "dataset retime: stopped; what finished is in " << out << ".partial (--resume continues)\n";
        return 130;
    }
    std::cout << out << ": " << r.pipelines << " pipelines, " << r.schedules << " schedules (" << r.timed
              << " timed again, " << r.ok << " ok; " << r.without_nest << " without a stored schedule, as before";
    if (r.resumed) std::cout << "; " << r.resumed << " timed by the run resumed";
    std::cout << ")\n";
    return 0;
}

std::string milliseconds(double seconds) { return format_number("%.4f", seconds * 1e3) + " ms"; }

int info(const std::string &path) {
    const auto reader = ds::DatasetReader::open(path);
    const ds::FileInfo &i = reader->info();
    const ds::DatasetSummary s = ds::summarize(*reader, path);
    std::cout << path << ": schedforge dataset, schema version " << i.schema_version << "\n"
              << "  producer: " << i.producer << " (commit " << i.producer_commit.substr(0, 12) << "), Halide "
              << i.halide_version << ", created " << i.created << "\n"
              << "  target: " << i.target << "\n"
              << "  features: " << i.pipeline_feature_names.size() << " pipeline (version "
              << i.pipeline_feature_version << "), " << i.schedule_feature_names.size() << " schedule (version "
              << i.schedule_feature_version << ") per stage\n"
              << "  " << s.pipelines << " pipelines, " << s.schedules << " schedules, "
              << format_number("%.1f", double(s.file_bytes) / 1024) << " KiB ("
              << format_number("%.0f", s.schedules ? double(s.file_bytes) / double(s.schedules) : 0)
              << " bytes per schedule)\n";
    const std::vector<ds::VirtualSource> shards = ds::virtual_sources(path);
    if (!shards.empty()) {
        std::cout << "  virtual merge of " << shards.size() << " shard" << (shards.size() == 1 ? "" : "s") << ":";
        for (const ds::VirtualSource &v : shards) std::cout << " " << v.path;
        std::cout << "\n";
    }
    schedforge::tools::Table status({"status", "schedules", "share"});
    for (int k = 0; k < ds::kNumStatuses; k++) {
        const uint64_t n = s.by_status[size_t(k)];
        if (n == 0) continue;
        status.add_row({ds::status_name(ds::Status(k)), std::to_string(n),
                        format_number("%.1f%%", 100.0 * double(n) / double(s.schedules))});
    }
    status.print(std::cout);
    if (s.by_status[0]) {
        std::cout << "runtimes (ok schedules, their labels: timing_protocol says which): fastest "
                  << milliseconds(s.runtime_min) << ", median " << milliseconds(s.runtime_median) << ", slowest "
                  << milliseconds(s.runtime_max) << "\n";
    }
    if (s.pipelines_compared) {
        std::cout << "over " << s.pipelines_compared << " pipelines (geomean): beam search "
                  << format_number("%.2f", s.beam_speedup_over_root) << "x faster than compute_root; the best sample "
                  << format_number("%.2f", s.best_speedup_over_beam) << "x faster than beam search\n";
    }
    std::cout << "hardware:\n";
    std::istringstream hw(i.hardware);
    for (std::string line; std::getline(hw, line);) std::cout << "  " << line << "\n";
    return 0;
}

int verify(const std::string &path) {
    const ds::VerifyReport r = ds::verify_dataset(path);
    if (r.ok()) {
        std::cout << path << ": ok (" << r.pipelines << " pipelines, " << r.schedules << " schedules)\n";
        return 0;
    }
    for (const std::string &p : r.problems) std::cout << path << ": " << p << "\n";
    std::cerr << "dataset verify: " << r.problems.size() << " problem(s) in " << path << "\n";
    return 1;
}

// A downloaded copy against its manifest: digests, then every record of each dataset.
int verify_manifest(const std::string &manifest) {
    const ds::ManifestCheck r = ds::check_manifest(manifest);
    if (r.ok()) {
        std::cout << manifest << ": ok (" << r.files << " files, digests and datasets)\n";
        return 0;
    }
    for (const std::string &p : r.problems) std::cout << manifest << ": " << p << "\n";
    std::cerr << "dataset verify: " << r.problems.size() << " problem(s) against " << manifest << "\n";
    return 1;
}

// The runtime labels of every ok schedule of the folder's files, as a histogram of log10 seconds
// per file (gnuplot); false where gnuplot is missing or failed.
bool plot_runtimes(const std::string &dir, const std::vector<ds::PublishedFile> &files, const std::string &png) {
    std::string data, plot;
    for (size_t i = 0; i < files.size(); i++) {
        if (!files[i].virtual_shards.empty()) continue; // its shards are drawn
        const auto reader = ds::DatasetReader::open(dir + "/" + files[i].name);
        std::map<int, int> bins; // tenths of a decade
        for (const ds::ScheduleRecord &s : reader->schedule_summaries()) {
            if (s.status == ds::Status::Ok && s.runtime_min > 0)
                bins[int(std::floor(std::log10(s.runtime_min) * 10))]++;
        }
        data += "$f" + std::to_string(i) + " << EOD\n";
        for (const auto &[bin, n] : bins) data += std::to_string((bin + 0.5) / 10) + " " + std::to_string(n) + "\n";
        data += "EOD\n";
        plot += std::string(plot.empty() ? "plot " : ", ") + "$f" + std::to_string(i) +
                " using 1:2 with steps lw 2 title '" + files[i].name + "'";
    }
    return schedforge::tools::run_gnuplot(png, data +
                                                   "set xlabel 'runtime label, log10 seconds'\n"
                                                   "set ylabel 'ok schedules per tenth of a decade'\nset grid\n" +
                                                   plot + "\n");
}

int publish(const std::string &dir) {
    const std::vector<ds::PublishedFile> files = ds::prepare_for_publishing(dir);
    std::vector<ds::CardPlot> plots;
    if (plot_runtimes(dir, files, dir + "/runtimes.png"))
        plots.push_back({"runtimes.png", "Runtime labels of the ok schedules, per file."});
    ds::write_dataset_card(dir, files, plots);
    ds::write_manifest(dir);
    for (const ds::PublishedFile &f : files) {
        std::cout << f.name << ": " << f.summary.pipelines << " pipelines, " << f.summary.schedules << " schedules, "
                  << format_number("%.1f", double(f.bytes_before) / 1024) << " -> "
                  << format_number("%.1f", double(f.summary.file_bytes) / 1024) << " KiB\n";
    }
    std::cout << "published " << dir << ": README.md, read_dataset.py" << (plots.empty() ? "" : ", runtimes.png")
              << ", SHA256SUMS" << (plots.empty() ? " (no runtime plot: gnuplot failed or is missing)" : "") << "\n";
    return 0;
}

std::array<double, 3> parse_fractions(const std::string &text) {
    std::array<double, 3> f{};
    std::istringstream in(text);
    std::string part;
    int n = 0;
    while (std::getline(in, part, ',')) {
        if (n == 3) throw UserError("--fractions: give three numbers (train,validation,test)");
        try {
            size_t used = 0;
            f[size_t(n)] = std::stod(part, &used);
            if (used != part.size()) throw std::invalid_argument(part);
        } catch (const std::exception &) {
            throw UserError("--fractions: '" + part + "' is not a number");
        }
        n++;
    }
    if (n != 3) throw UserError("--fractions: give three numbers (train,validation,test)");
    return f;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Inspect, check, merge, compact, split and export schedforge datasets.", "dataset"};
    app.require_subcommand(1);
    std::string file, out, out_dir, format = "csv", fractions = "0.8,0.1,0.1";
    std::vector<std::string> inputs;
    std::string config, manifest;
    int threads = -1;
    bool force = false, resume = false;
    auto *info_cmd = app.add_subcommand("info", "Counts, statuses, runtimes, producer and hardware");
    info_cmd->add_option("FILE", file, "Dataset")->required();
    auto *verify_cmd = app.add_subcommand("verify", "Check checksums, schema, CSR offsets and feature versions");
    verify_cmd->add_option("FILE", file, "Dataset");
    verify_cmd->add_option("--manifest", manifest, "Check a published folder's SHA256SUMS (digests, then datasets)");
    auto *publish_cmd = app.add_subcommand(
        "publish", "Verify and compact a folder's datasets; write its card, an h5py example and SHA256SUMS");
    publish_cmd->add_option("DIR", out_dir, "Folder of finished datasets")->required();
    std::string virtual_out;
    auto *merge_cmd = app.add_subcommand("merge", "Merge shards into one file");
    auto *merge_out = merge_cmd->add_option("--out", out, "The merged copy (must not exist)");
    merge_cmd
        ->add_option("--virtual", virtual_out,
                     "Write instead a virtual merge (must not exist): the shards' tables, their arrays mapped")
        ->excludes(merge_out);
    merge_cmd->add_flag("--force", force, "Merge even if hardware, target or Halide version differ");
    merge_cmd->add_option("INPUTS", inputs, "Shards")->required();
    auto *compact_cmd = app.add_subcommand("compact", "Rewrite a file as small as its content, in place");
    compact_cmd->add_option("FILE", file, "Dataset")->required();
    auto *split_cmd = app.add_subcommand("split", "Split by pipeline into train/validation/test files");
    split_cmd->add_option("FILE", file, "Dataset")->required();
    split_cmd->add_option("--out-dir", out_dir, "Folder for train.h5, validation.h5, test.h5")->required();
    split_cmd->add_option("--fractions", fractions, "train,validation,test (default 0.8,0.1,0.1)");
    auto *export_cmd = app.add_subcommand("export", "Write CSV tables or NumPy arrays");
    export_cmd->add_option("FILE", file, "Dataset")->required();
    export_cmd->add_option("--out-dir", out_dir, "Output folder")->required();
    export_cmd->add_option("--format", format, "csv or npy");
    auto *refeaturize_cmd =
        app.add_subcommand("refeaturize", "The same records with this build's features, from the stored loop nests");
    refeaturize_cmd->add_option("FILE", file, "Dataset")->required();
    refeaturize_cmd->add_option("--out", out, "The refeaturized file (must not exist)")->required();
    auto *retime_cmd = app.add_subcommand(
        "retime", "The stored schedules compiled and timed again on this machine, with this build's features");
    retime_cmd->add_option("FILE", file, "Dataset")->required();
    retime_cmd->add_option("--out", out, "The retimed file (must not exist)")->required();
    retime_cmd->add_option("--config", config, "Dataset config whose timing and runner keys to use (default: defaults)")
        ->check(CLI::ExistingFile);
    retime_cmd->add_option("--threads", threads, "Halide runtime threads while timing (0: one per CPU it may use)")
        ->check(CLI::NonNegativeNumber);
    retime_cmd->add_flag("--resume", resume, "Continue OUT.partial, left by a stopped or killed retime");
    const std::set<std::string> commands{"info",   "verify",  "merge",       "compact", "split",
                                         "export", "publish", "refeaturize", "retime"};
    if (argc > 1 && argv[1][0] != '-' && !commands.count(argv[1])) {
        std::cerr << "dataset: unknown command '" << argv[1]
                  << "' (info, verify, merge, compact, split, export, publish, refeaturize or retime)\n";
        return 2;
    }
    return schedforge::tools::run_cli(app, argc, argv, [&]() {
        if (info_cmd->parsed()) return info(file);
        if (verify_cmd->parsed()) {
            if (file.empty() == manifest.empty()) throw UserError("verify: give a FILE or --manifest SHA256SUMS");
            return manifest.empty() ? verify(file) : verify_manifest(manifest);
        }
        if (publish_cmd->parsed()) return publish(out_dir);
        if (merge_cmd->parsed()) {
            if (out.empty() && virtual_out.empty()) throw UserError("merge: give --out OUT or --virtual OUT");
            const ds::MergeReport r =
                out.empty() ? ds::merge_virtual(inputs, virtual_out, force) : ds::merge_datasets(inputs, out, force);
            std::cout << "merged " << inputs.size() << " files into "
                      << (out.empty() ? virtual_out + " (virtual)" : out) << ": " << r.pipelines << " pipelines, "
                      << r.schedules << " schedules";
            if (r.duplicates_skipped) std::cout << " (" << r.duplicates_skipped << " duplicate samples skipped)";
            std::cout << "\n";
            return 0;
        }
        if (compact_cmd->parsed()) {
            const ds::CompactReport r = ds::compact_dataset(file);
            std::cout << file << ": " << r.pipelines << " pipelines, " << r.schedules << " schedules; "
                      << format_number("%.1f", double(r.bytes_before) / 1024) << " KiB -> "
                      << format_number("%.1f", double(r.bytes_after) / 1024) << " KiB\n";
            return 0;
        }
        if (split_cmd->parsed()) {
            const ds::SplitReport r = ds::split_dataset(file, out_dir, parse_fractions(fractions));
            const char *names[3] = {"train", "validation", "test"};
            for (int p = 0; p < 3; p++) {
                std::cout << out_dir << "/" << names[p] << ".h5: " << r.pipelines[size_t(p)] << " pipelines, "
                          << r.schedules[size_t(p)] << " schedules\n";
            }
            return 0;
        }
        if (refeaturize_cmd->parsed()) return refeaturize(file, out);
        if (retime_cmd->parsed()) return retime(file, out, config, threads, resume);
        ds::export_dataset(file, out_dir, format);
        std::cout << "exported " << file << " as " << format << " to " << out_dir << "\n";
        return 0;
    });
}
