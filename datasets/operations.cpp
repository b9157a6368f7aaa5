#include "datasets/operations.h"

#include "common/errors.h"
#include "common/statistics.h"
#include "datasets/reader.h"
#include "datasets/virtual_merge.h"
#include "datasets/writer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace schedforge::datasets {

namespace {

namespace fs = std::filesystem;

void require_absent(const std::string &path) {
    std::error_code ec;
    if (fs::exists(path, ec)) throw UserError(path + ": already exists (remove it or choose another name)");
}

// Copies pipelines and their schedules between files, renumbering rows and skipping
// (pipeline id, sample) pairs already copied.
class RecordCopier {
public:
    explicit RecordCopier(DatasetWriter &out) : out_(out) {}

    void copy(const DatasetReader &in, const std::function<bool(const PipelineRecord &)> &keep) {
        const std::vector<PipelineRecord> pipelines = in.pipeline_summaries();
        std::vector<bool> kept(pipelines.size(), false);
        for (uint64_t r = 0; r < pipelines.size(); r++) {
            if (!keep(pipelines[r])) continue;
            kept[r] = true;
            if (!rows_.count(pipelines[r].id)) {
                rows_[pipelines[r].id] = out_.add_pipeline(in.pipeline(r));
                pipelines_++;
            }
        }
        const std::vector<ScheduleRecord> schedules = in.schedule_summaries();
        for (uint64_t i = 0; i < schedules.size(); i++) {
            const uint64_t row = schedules[i].pipeline_row;
            if (row >= pipelines.size() || !kept[row]) continue;
            if (!seen_.insert({pipelines[row].id, schedules[i].sample}).second) {
                duplicates_++;
                continue;
            }
            ScheduleRecord s = in.schedule(i);
            s.pipeline_row = rows_.at(pipelines[row].id);
            out_.add_schedule(s);
            schedules_++;
        }
    }
    uint64_t pipelines() const { return pipelines_; }
    uint64_t schedules() const { return schedules_; }
    uint64_t duplicates() const { return duplicates_; }

private:
    DatasetWriter &out_;
    std::map<uint64_t, uint64_t> rows_;
    std::set<std::pair<uint64_t, uint32_t>> seen_;
    uint64_t pipelines_ = 0, schedules_ = 0, duplicates_ = 0;
};

std::string csv_number(double v) {
    if (std::isnan(v)) return "";
    char b[32];
    std::snprintf(b, sizeof(b), "%.9g", v);
    return b;
}

std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof(b), "%016llx", (unsigned long long)v);
    return b;
}

void write_file(const std::string &path, const std::string &bytes) {
    write_via_partial(path, [&](const std::string &partial) {
        std::ofstream out(partial, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), std::streamsize(bytes.size()));
        out.flush();
        if (!out) throw std::runtime_error(partial + ": write failed (" + std::strerror(errno) + ")");
    });
}

} // namespace

void write_via_partial(const std::string &path, const std::function<void(const std::string &)> &write) {
    const std::string partial = path + ".partial";
    std::error_code ec;
    fs::remove(partial, ec);
    try {
        write(partial);
        fs::rename(partial, path);
    } catch (...) {
        fs::remove(partial, ec);
        throw;
    }
}

DatasetSummary summarize(const DatasetReader &reader, const std::string &path) {
    DatasetSummary s;
    s.pipelines = reader.num_pipelines();
    s.schedules = reader.num_schedules();
    const std::vector<PipelineRecord> pipelines = reader.pipeline_summaries();
    const std::vector<ScheduleRecord> schedules = reader.schedule_summaries();
    std::vector<double> runtimes;
    std::map<uint64_t, double> beam, best; // pipeline row -> runtime
    for (const ScheduleRecord &r : schedules) {
        if (uint8_t(r.status) < kNumStatuses) s.by_status[size_t(r.status)]++;
        if (r.status != Status::Ok) continue;
        runtimes.push_back(r.runtime_min);
        if (r.sample == 0) beam[r.pipeline_row] = r.runtime_min;
        auto [it, fresh] = best.emplace(r.pipeline_row, r.runtime_min);
        if (!fresh) it->second = std::min(it->second, r.runtime_min);
    }
    if (!runtimes.empty()) {
        s.runtime_min = *std::min_element(runtimes.begin(), runtimes.end());
        s.runtime_max = *std::max_element(runtimes.begin(), runtimes.end());
        s.runtime_median = median(runtimes);
    }
    double log_root = 0, log_best = 0;
    for (const auto &[row, t] : beam) {
        const PipelineRecord &p = pipelines.at(row);
        if (p.reference_status != Status::Ok || !(t > 0) || !(p.reference_runtime > 0)) continue;
        log_root += std::log(p.reference_runtime / t);
        log_best += std::log(t / best.at(row));
        s.pipelines_compared++;
    }
    if (s.pipelines_compared) {
        s.beam_speedup_over_root = std::exp(log_root / double(s.pipelines_compared));
        s.best_speedup_over_beam = std::exp(log_best / double(s.pipelines_compared));
    }
    std::error_code ec;
    s.file_bytes = fs::file_size(path, ec);
    return s;
}

FileInfo merged_file_info(const std::vector<std::unique_ptr<DatasetReader>> &readers,
                          const std::vector<std::string> &inputs, bool force) {
    const FileInfo &first = readers.at(0)->info();
    FileInfo info = first;
    std::vector<std::string> configs{first.config};
    for (size_t i = 1; i < readers.size(); i++) {
        const FileInfo &o = readers[i]->info();
        auto mismatch = [&](const char *what, bool forcible) {
            throw UserError("merge: " + inputs[i] + " differs from " + inputs[0] + " in " + what +
                            (forcible ? " (--force merges anyway)" : ""));
        };
        if (o.pipeline_feature_version != first.pipeline_feature_version ||
            o.pipeline_feature_names != first.pipeline_feature_names) {
            mismatch("pipeline features", false); // never forced: the arrays would not line up
        }
        if (o.schedule_feature_version != first.schedule_feature_version ||
            o.schedule_feature_names != first.schedule_feature_names) {
            mismatch("schedule features", false);
        }
        if (!force) {
            if (o.hardware != first.hardware) mismatch("hardware", true);
            if (o.target != first.target) mismatch("target", true);
            if (o.halide_version != first.halide_version) mismatch("Halide version", true);
        }
        if (std::find(configs.begin(), configs.end(), o.config) == configs.end()) configs.push_back(o.config);
    }
    info.created = utc_timestamp();
    info.config.clear();
    for (const std::string &c : configs) info.config += (info.config.empty() ? "" : "---\n") + c; // YAML documents
    return info;
}

MergeReport merge_datasets(const std::vector<std::string> &inputs, const std::string &out, bool force) {
    if (inputs.empty()) throw UserError("merge: no input files");
    require_absent(out);
    std::vector<std::unique_ptr<DatasetReader>> readers;
    for (const std::string &path : inputs) readers.push_back(DatasetReader::open(path));
    const FileInfo info = merged_file_info(readers, inputs, force);
    MergeReport report;
    write_via_partial(out, [&](const std::string &partial) {
        auto writer = DatasetWriter::create(partial, info, WriteMode::Bulk);
        RecordCopier copier(*writer);
        for (const auto &r : readers) copier.copy(*r, [](const PipelineRecord &) { return true; });
        writer->close();
        report = {copier.pipelines(), copier.schedules(), copier.duplicates()};
    });
    return report;
}

CompactReport compact_dataset(const std::string &path) {
    if (!virtual_sources(path).empty()) {
        throw UserError(path + ": a virtual merge holds only its tables and is compact (dataset merge --out writes "
                               "a standalone copy)");
    }
    CompactReport report;
    std::error_code ec;
    report.bytes_before = fs::file_size(path, ec);
    {
        const WriteLock lock(path); // no writer may append while the copy is made and renamed over it
        write_via_partial(path, [&](const std::string &partial) {
            const std::unique_ptr<DatasetReader> reader = DatasetReader::open(path);
            auto writer = DatasetWriter::create(partial, reader->info(), WriteMode::Bulk);
            RecordCopier copier(*writer);
            copier.copy(*reader, [](const PipelineRecord &) { return true; });
            writer->close();
            if (copier.duplicates()) throw UserError(path + ": holds a (pipeline, sample) pair twice; not compacted");
            report.pipelines = copier.pipelines();
            report.schedules = copier.schedules();
        });
    }
    report.bytes_after = fs::file_size(path, ec);
    return report;
}

int split_part(uint64_t id, const std::array<double, 3> &fractions) {
    // SplitMix64's finalizer spreads ids (themselves hashes, but cheap to make sure) over [0, 1).
    uint64_t z = id + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    const double u = double(z >> 11) * 0x1.0p-53;
    const double total = fractions[0] + fractions[1] + fractions[2];
    if (u < fractions[0] / total) return 0;
    if (u < (fractions[0] + fractions[1]) / total) return 1;
    return 2;
}

SplitReport split_dataset(const std::string &input, const std::string &out_dir,
                          const std::array<double, 3> &fractions) {
    for (double f : fractions) {
        if (!(f >= 0)) throw UserError("split: fractions must not be negative");
    }
    if (!(fractions[0] + fractions[1] + fractions[2] > 0)) throw UserError("split: the fractions add up to 0");
    const std::unique_ptr<DatasetReader> reader = DatasetReader::open(input);
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (!fs::is_directory(out_dir, ec)) throw UserError(out_dir + ": cannot create the output folder");
    static const char *names[3] = {"train.h5", "validation.h5", "test.h5"};
    for (const char *n : names) require_absent(out_dir + "/" + n);
    FileInfo info = reader->info();
    info.created = utc_timestamp();
    SplitReport report;
    for (int part = 0; part < 3; part++) {
        write_via_partial(out_dir + "/" + names[part], [&](const std::string &partial) {
            auto writer = DatasetWriter::create(partial, info, WriteMode::Bulk);
            RecordCopier copier(*writer);
            copier.copy(*reader, [&](const PipelineRecord &p) { return split_part(p.id, fractions) == part; });
            writer->close();
            report.pipelines[size_t(part)] = copier.pipelines();
            report.schedules[size_t(part)] = copier.schedules();
        });
    }
    return report;
}

std::string npy_bytes(const std::string &descr, const std::vector<uint64_t> &shape, const void *data, size_t bytes) {
    std::string dims; // "(n,)" for 1-D, "(r, c)" otherwise, as NumPy writes them
    for (size_t i = 0; i < shape.size(); i++) dims += (i ? ", " : "") + std::to_string(shape[i]);
    if (shape.size() == 1) dims += ",";
    std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
    const size_t unpadded = 10 + header.size() + 1; // magic, version, length, header, newline
    header += std::string((64 - unpadded % 64) % 64, ' ') + "\n";
    std::string out = "\x93NUMPY";
    out += char(1);
    out += char(0);
    const uint16_t length = uint16_t(header.size());
    out += char(length & 0xff);
    out += char(length >> 8);
    out += header;
    out.append(static_cast<const char *>(data), bytes);
    return out;
}

void export_dataset(const std::string &input, const std::string &out_dir, const std::string &format) {
    if (format != "csv" && format != "npy") throw UserError("export: format must be csv or npy, not '" + format + "'");
    const std::unique_ptr<DatasetReader> reader = DatasetReader::open(input);
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (!fs::is_directory(out_dir, ec)) throw UserError(out_dir + ": cannot create the output folder");
    const std::vector<PipelineRecord> pipelines = reader->pipeline_summaries();
    const std::vector<ScheduleRecord> schedules = reader->schedule_summaries();
    if (format == "csv") {
        std::ostringstream p, s;
        p << "row,id,seed,generator_version,reference_status,reference_runtime_s\n";
        for (size_t r = 0; r < pipelines.size(); r++) {
            const PipelineRecord &x = pipelines[r];
            p << r << "," << hex(x.id) << "," << x.seed << "," << x.generator_version << ","
              << status_name(x.reference_status) << "," << csv_number(x.reference_runtime) << "\n";
        }
        s << "row,pipeline_row,pipeline_id,sample,seed,mode,beam_size,passes,dropout,status,predicted_cost,"
             "runtime_min_s,runtime_median_s,search_s,compile_s,benchmark_s,threads\n";
        for (size_t r = 0; r < schedules.size(); r++) {
            const ScheduleRecord &x = schedules[r];
            s << r << "," << x.pipeline_row << "," << hex(pipelines.at(x.pipeline_row).id) << "," << x.sample << ","
              << x.seed << "," << search_mode_name(x.mode) << "," << x.beam_size << "," << x.passes << ","
              << csv_number(x.dropout) << "," << status_name(x.status) << "," << csv_number(x.predicted_cost) << ","
              << csv_number(x.runtime_min) << "," << csv_number(x.runtime_median) << "," << csv_number(x.search_seconds)
              << "," << csv_number(x.compile_seconds) << "," << csv_number(x.benchmark_seconds) << "," << x.threads
              << "\n";
        }
        write_file(out_dir + "/pipelines.csv", p.str());
        write_file(out_dir + "/schedules.csv", s.str());
        return;
    }
    const uint64_t pcols = reader->info().pipeline_feature_names.size();
    const uint64_t scols = reader->info().schedule_feature_names.size();
    std::vector<float> pf, sf;
    for (uint64_t r = 0; r < pipelines.size(); r++) {
        const std::vector<float> f = reader->pipeline(r).features;
        pf.insert(pf.end(), f.begin(), f.end());
    }
    std::vector<uint64_t> offsets{0}, rows;
    std::vector<double> runtimes;
    std::vector<uint8_t> status;
    for (uint64_t r = 0; r < schedules.size(); r++) {
        const std::vector<float> f = reader->schedule(r).features;
        sf.insert(sf.end(), f.begin(), f.end());
        offsets.push_back(offsets.back() + (scols ? f.size() / scols : 0));
        runtimes.push_back(schedules[r].runtime_min);
        status.push_back(uint8_t(schedules[r].status));
        rows.push_back(schedules[r].pipeline_row);
    }
    auto save = [&](const char *name, const std::string &descr, std::vector<uint64_t> shape, const void *data,
                    size_t bytes) { write_file(out_dir + "/" + name, npy_bytes(descr, shape, data, bytes)); };
    save("pipeline_features.npy", "<f4", {pcols ? pf.size() / pcols : 0, pcols}, pf.data(), pf.size() * 4);
    save("schedule_features.npy", "<f4", {scols ? sf.size() / scols : 0, scols}, sf.data(), sf.size() * 4);
    save("schedule_feature_offsets.npy", "<u8", {offsets.size()}, offsets.data(), offsets.size() * 8);
    save("runtime_min.npy", "<f8", {runtimes.size()}, runtimes.data(), runtimes.size() * 8);
    save("status.npy", "|u1", {status.size()}, status.data(), status.size());
    save("pipeline_row.npy", "<u8", {rows.size()}, rows.data(), rows.size() * 8);
}

} // namespace schedforge::datasets
