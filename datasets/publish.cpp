#include "datasets/publish.h"

#include "common/build_info.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/sha256.h"
#include "datasets/reader.h"
#include "datasets/verify.h"
#include "datasets/virtual_merge.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace schedforge::datasets {

namespace {

namespace fs = std::filesystem;

constexpr const char *kManifest = "SHA256SUMS";

std::string number(const char *format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), format, v);
    return buf;
}

std::string seconds(double s) {
    if (!(s > 0)) return "-";
    if (s < 1e-3) return number("%.1f µs", s * 1e6);
    if (s < 1) return number("%.2f ms", s * 1e3);
    return number("%.2f s", s);
}

std::string failures(const DatasetSummary &s) {
    std::string out;
    for (int k = 1; k < kNumStatuses; k++) {
        if (!s.by_status[size_t(k)]) continue;
        out += (out.empty() ? "" : ", ") + std::to_string(s.by_status[size_t(k)]) + " " + status_name(Status(k));
    }
    return out.empty() ? "none" : out;
}

// Groups the files by one of their attributes: each distinct value with the files that have it.
template<typename Key>
std::vector<std::pair<std::string, std::vector<std::string>>> grouped(const std::vector<PublishedFile> &files,
                                                                      Key key) {
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;
    for (const PublishedFile &f : files) {
        const std::string value = key(f);
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto &g) { return g.first == value; });
        if (it == groups.end()) {
            groups.push_back({value, {}});
            it = std::prev(groups.end());
        }
        it->second.push_back(f.name);
    }
    return groups;
}

std::string joined(const std::vector<std::string> &names) {
    std::string out;
    for (const std::string &n : names) out += (out.empty() ? "`" : ", `") + n + "`";
    return out;
}

void fenced_groups(std::ostringstream &card, const std::vector<PublishedFile> &files, const std::string &language,
                   const std::function<std::string(const PublishedFile &)> &key) {
    for (const auto &[value, names] : grouped(files, key)) {
        card << joined(names) << ":\n\n```" << language << "\n"
             << value << (value.empty() || value.back() != '\n' ? "\n" : "") << "```\n\n";
    }
}

} // namespace

std::vector<PublishedFile> prepare_for_publishing(const std::string &dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw UserError(dir + ": not a folder");
    std::vector<std::string> names;
    for (const fs::directory_entry &e : fs::directory_iterator(dir)) {
        if (e.is_regular_file() && e.path().extension() == ".h5") names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    if (names.empty()) throw UserError(dir + ": holds no .h5 dataset to publish");
    // Every file sound first: a publish with a damaged file writes nothing.
    std::string problems;
    for (const std::string &name : names) {
        const VerifyReport v = verify_dataset((fs::path(dir) / name).string());
        for (const std::string &p : v.problems) problems += (problems.empty() ? "" : "; ") + name + ": " + p;
    }
    if (!problems.empty()) throw UserError("publish: " + problems);
    // A virtual merge must map files of the folder, which the manifest covers: checked before
    // anything is written.
    std::map<std::string, std::vector<std::string>> shards; // virtual merge -> the files it maps
    std::map<std::string, uint64_t> bytes_before;
    for (const std::string &name : names) {
        const std::string path = (fs::path(dir) / name).string();
        bytes_before[name] = fs::file_size(path);
        for (const VirtualSource &v : virtual_sources(path)) {
            if (v.path.find('/') != std::string::npos) {
                throw UserError("publish: " + name + " is a virtual merge of " + v.path +
                                ", which is not in the folder (publish its shards with it, or a copy: "
                                "dataset merge --out)");
            }
            shards[name].push_back(v.path);
        }
    }
    // Compacted whatever they hold: dead space left by a run's flushes is invisible until h5stat.
    // That changes the bytes of a virtual merge's shards (not their records or offsets), so each
    // virtual merge is made again over them.
    for (const std::string &name : names) {
        if (!shards.count(name)) compact_dataset((fs::path(dir) / name).string());
    }
    for (const auto &[name, maps] : shards) {
        const std::string path = (fs::path(dir) / name).string(), again = path + ".remerge";
        std::vector<std::string> inputs;
        for (const std::string &shard : maps) inputs.push_back((fs::path(dir) / shard).string());
        std::error_code ec;
        fs::remove(again, ec);
        merge_virtual(inputs, again, true); // as merged before, --force or not
        fs::rename(again, path);
    }
    std::vector<PublishedFile> files;
    for (const std::string &name : names) {
        const std::string path = (fs::path(dir) / name).string();
        const std::unique_ptr<DatasetReader> reader = DatasetReader::open(path);
        PublishedFile f;
        f.name = name;
        f.bytes_before = bytes_before[name];
        f.summary = summarize(*reader, path);
        f.info = reader->info();
        if (shards.count(name)) f.virtual_shards = shards[name];
        files.push_back(std::move(f));
    }
    return files;
}

void write_dataset_card(const std::string &dir, const std::vector<PublishedFile> &files,
                        const std::vector<CardPlot> &plots) {
    std::ostringstream card;
    fs::path folder = fs::absolute(dir).lexically_normal();
    if (folder.filename().empty()) folder = folder.parent_path(); // "DIR/"
    const std::string title = folder.filename().string();
    uint64_t pipelines = 0, schedules = 0, ok = 0;
    for (const PublishedFile &f : files) {
        if (!f.virtual_shards.empty()) continue; // its shards are counted
        pipelines += f.summary.pipelines, schedules += f.summary.schedules;
        ok += f.summary.by_status[size_t(Status::Ok)];
    }
    card << "# " << (title.empty() || title == "." ? "schedforge datasets" : title) << "\n\n"
         << "Halide pipelines, schedules sampled for them, per-stage features and measured runtimes, as "
            "schedforge HDF5 datasets (schema version "
         << kSchemaVersion << ": `datasets/SCHEMA.md` of the producing commit documents every field). " << files.size()
         << " file" << (files.size() == 1 ? "" : "s") << ", " << pipelines << " pipelines, " << schedules
         << " schedules, " << ok << " of them ok (timed, output checked against compute_root). Published "
         << utc_timestamp() << " by `dataset publish` (" << common::producer() << ").\n\n";

    card << "## Files\n\n| file | pipelines | schedules | failed | runtime label: min / median / max | bytes | "
            "producer | commit | created |\n| --- | ---: | ---: | --- | --- | ---: | --- | --- | --- |\n";
    for (const PublishedFile &f : files) {
        const DatasetSummary &s = f.summary;
        card << "| `" << f.name << "` | " << s.pipelines << " | " << s.schedules << " | " << failures(s) << " | "
             << seconds(s.runtime_min) << " / " << seconds(s.runtime_median) << " / " << seconds(s.runtime_max) << " | "
             << s.file_bytes << " | " << f.info.producer << " | `" << f.info.producer_commit << "` | " << f.info.created
             << " |\n";
    }
    for (const PublishedFile &f : files) {
        if (f.virtual_shards.empty()) continue;
        card << "\n`" << f.name
             << "` is a virtual merge (HDF5 virtual datasets, read as one file by h5py and "
                "h5dump; keep it beside them) of";
        for (const std::string &shard : f.virtual_shards) card << " `" << shard << "`";
        card << "; the totals above count its records once.\n";
    }
    card << "\nSchedule features version " << files.front().info.schedule_feature_version << " ("
         << files.front().info.schedule_feature_names.size() << " per stage), pipeline features version "
         << files.front().info.pipeline_feature_version << " (" << files.front().info.pipeline_feature_names.size()
         << "); files of other versions are listed below by name.\n\n";
    for (const PublishedFile &f : files) {
        if (f.info.schedule_feature_version != files.front().info.schedule_feature_version ||
            f.info.pipeline_feature_version != files.front().info.pipeline_feature_version)
            card << "- `" << f.name << "`: schedule features version " << f.info.schedule_feature_version
                 << ", pipeline features version " << f.info.pipeline_feature_version << "\n";
    }

    for (const CardPlot &p : plots) card << "![" << p.caption << "](" << p.file << ")\n\n" << p.caption << "\n\n";

    card << "## Machines\n\nThe hardware each file was timed on (its fingerprint), the Halide target and "
            "version:\n\n";
    fenced_groups(card, files, "ini", [](const PublishedFile &f) {
        return "target = " + f.info.target + "\nhalide = " + f.info.halide_version + "\n" + f.info.hardware;
    });
    card << "## Timing protocol\n\n";
    fenced_groups(card, files, "ini", [](const PublishedFile &f) { return f.info.timing_protocol; });
    card << "## Run configs\n\nEvery resolved setting of the run, with the generator and search configs it "
            "named (a merged file: one YAML document per run):\n\n";
    fenced_groups(card, files, "yaml", [](const PublishedFile &f) { return f.info.config; });

    card << "## Reading\n\n`read_dataset.py` (h5py and NumPy only) loads every ok schedule's features and "
            "runtime label:\n\n```sh\npython3 read_dataset.py "
         << files.front().name
         << "\n```\n\nChecking a download: `sha256sum -c SHA256SUMS`, or `dataset verify --manifest SHA256SUMS` "
            "(digests, then every record's checksums).\n";
    common::write_file_atomic((fs::path(dir) / "README.md").string(), card.str());
    common::write_file_atomic((fs::path(dir) / "read_dataset.py").string(), read_dataset_example());
}

const std::string &read_dataset_example() {
    static const std::string text = R"PY(#!/usr/bin/env python3
"""Load a schedforge dataset with h5py and NumPy only: for every ok schedule, its per-stage
schedule features (stages x S), its pipeline's per-stage features (stages x P) and its runtime
label in seconds, as a cost model trains on them. The layout: datasets/SCHEMA.md.

    python3 read_dataset.py FILE.h5
"""
import sys

import h5py
import numpy as np


def load(path):
    with h5py.File(path, "r") as f:
        schedules = f["schedules"][:]  # one row per schedule; CSR offsets into the arrays
        pipelines = f["pipelines"][:]
        ok = h5py.check_enum_dtype(f["schedules"].dtype["status"])["ok"]
        schedule_features = f["schedule_features"][:]
        pipeline_features = f["pipeline_features"][:]
        rows = []
        for s in schedules[schedules["status"] == ok]:
            p = pipelines[s["pipeline_row"]]
            rows.append((int(p["id"]),
                         schedule_features[s["features_begin"]:s["features_end"]],
                         pipeline_features[p["features_begin"]:p["features_end"]],
                         float(s["runtime_min"])))
        names = [n.decode() if isinstance(n, bytes) else str(n) for n in f.attrs["schedule_feature_names"]]
        return rows, names


def main(path):
    rows, names = load(path)
    print("ok schedules", len(rows))
    print("pipelines", len({r[0] for r in rows}))
    if rows:
        runtimes = np.array([r[3] for r in rows])
        print("runtime seconds min median max", runtimes.min(), np.median(runtimes), runtimes.max())
        print("schedule features per stage", rows[0][1].shape[1], names[:3])


if __name__ == "__main__":
    main(sys.argv[1])
)PY";
    return text;
}

void write_manifest(const std::string &dir) {
    std::vector<std::string> names;
    for (const fs::directory_entry &e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (e.is_regular_file() && name != kManifest && e.path().extension() != ".tmp") names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    std::string text;
    for (const std::string &name : names)
        text += common::sha256_of_file((fs::path(dir) / name).string()) + "  " + name + "\n";
    common::write_file_atomic((fs::path(dir) / kManifest).string(), text);
}

ManifestCheck check_manifest(const std::string &manifest_path) {
    std::ifstream in(manifest_path);
    if (!in) throw UserError(manifest_path + ": cannot read the manifest");
    const fs::path dir = fs::path(manifest_path).parent_path();
    const std::string manifest_name = fs::path(manifest_path).filename().string();
    ManifestCheck check;
    std::set<std::string> listed;
    int line_number = 0;
    for (std::string line; std::getline(in, line);) {
        line_number++;
        if (line.empty()) continue;
        // sha256sum's format: 64 hex digits, two spaces (or space and '*'), the name.
        const bool hex = line.size() > 66 && std::all_of(line.begin(), line.begin() + 64, [](char c) {
                             return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                         });
        if (!hex || line[64] != ' ' || (line[65] != ' ' && line[65] != '*'))
            throw UserError(manifest_path + ":" + std::to_string(line_number) + ": not a 'DIGEST  NAME' line");
        const std::string digest = line.substr(0, 64), name = line.substr(66);
        listed.insert(name);
        check.files++;
        const fs::path path = dir / name;
        std::error_code ec;
        if (!fs::is_regular_file(path, ec)) {
            check.problems.push_back(name + ": missing");
            continue;
        }
        if (common::sha256_of_file(path.string()) != digest) {
            check.problems.push_back(name + ": changed (its SHA-256 differs from the manifest's)");
            continue;
        }
        if (path.extension() == ".h5") {
            for (const std::string &p : verify_dataset(path.string()).problems)
                check.problems.push_back(name + ": " + p);
        }
    }
    for (const fs::directory_entry &e : fs::directory_iterator(dir.empty() ? fs::path(".") : dir)) {
        const std::string name = e.path().filename().string();
        if (e.is_regular_file() && e.path().extension() == ".h5" && !listed.count(name) && name != manifest_name)
            check.problems.push_back(name + ": a dataset the manifest does not list");
    }
    return check;
}

} // namespace schedforge::datasets
