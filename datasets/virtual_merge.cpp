#include "datasets/virtual_merge.h"

#include "common/errors.h"
#include "common/sha256.h"
#include "datasets/layout.h"
#include "datasets/reader.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <set>

namespace schedforge::datasets {

namespace {

namespace fs = std::filesystem;

// One of the five arrays a virtual merge maps: its file type, columns (0: 1-D), and where each
// shard's used part begins in the concatenation.
struct MappedArray {
    const char *name;
    hid_t file_type;
    hsize_t columns;
    std::vector<uint64_t> base; // per input, then the total
};

// How much of each of the five arrays (in MappedArray order) `input`'s records use: the largest
// end offset pointing into it. Rows are written in order, so this is the used prefix; anything
// past it (a killed writer's last, unfinished record) is left out of the mapping.
std::array<uint64_t, 5> used_rows(const std::vector<layout::PipelineRow> &p,
                                  const std::vector<layout::ScheduleRow> &s) {
    std::array<uint64_t, 5> end{};
    for (const layout::PipelineRow &r : p) {
        end[0] = std::max(end[0], r.features_end);
        end[1] = std::max({end[1], r.spec_end, r.stages_end});
    }
    for (const layout::ScheduleRow &r : s) {
        end[2] = std::max(end[2], r.features_end);
        end[3] = std::max({end[3], r.source_end, r.message_end, r.nest_end});
        end[4] = std::max(end[4], r.timings_end);
    }
    return end;
}

// Creates the virtual dataset `array` in `out` over the inputs' used parts (an ordinary empty
// array when they use none: a virtual dataset needs at least one mapping).
void create_mapping(hid_t out, const MappedArray &array, const std::vector<std::string> &source_names) {
    const uint64_t total = array.base.back();
    if (total == 0) {
        layout::create_array(out, array.name, array.file_type, array.columns, 1024);
        return;
    }
    const int rank = array.columns ? 2 : 1;
    const hsize_t dims[2] = {total, array.columns};
    const h5::Handle space = h5::space(H5Screate_simple(rank, dims, nullptr), array.name);
    const h5::Handle dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE), array.name);
    for (size_t i = 0; i < source_names.size(); i++) {
        const uint64_t used = array.base[i + 1] - array.base[i];
        if (used == 0) continue;
        const hsize_t start[2] = {array.base[i], 0}, count[2] = {used, array.columns}, origin[2] = {0, 0};
        h5::check_status(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr), "map");
        const h5::Handle source = h5::space(H5Screate_simple(rank, count, nullptr), array.name);
        h5::check_status(H5Sselect_hyperslab(source.get(), H5S_SELECT_SET, origin, nullptr, count, nullptr), "map");
        h5::check_status(H5Pset_virtual(dcpl.get(), space.get(), source_names[i].c_str(), array.name, source.get()),
                         "map a shard");
    }
    h5::check_status(H5Sselect_all(space.get()), "map");
    h5::dataset(H5Dcreate2(out, array.name, array.file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                array.name);
}

} // namespace

MergeReport merge_virtual(const std::vector<std::string> &inputs, const std::string &out, bool force) {
    if (inputs.empty()) throw UserError("merge: no input files");
    std::error_code ec;
    if (fs::exists(out, ec)) throw UserError(out + ": already exists (remove it or choose another name)");
    const fs::path folder = fs::absolute(out).parent_path();
    if (!fs::is_directory(folder, ec)) throw UserError(out + ": folder " + folder.string() + " does not exist");

    std::vector<std::unique_ptr<DatasetReader>> readers;
    std::vector<VirtualSource> sources;
    for (const std::string &path : inputs) {
        readers.push_back(DatasetReader::open(path));
        if (readers.back()->info().schema_version != kSchemaVersion) {
            throw UserError("merge --virtual: " + path + " has schema version " +
                            std::to_string(readers.back()->info().schema_version) + ", not " +
                            std::to_string(kSchemaVersion) + " (dataset merge --out copies older files)");
        }
        if (!virtual_sources(path).empty()) {
            throw UserError("merge --virtual: " + path + " is itself a virtual merge (merge its shards instead)");
        }
        VirtualSource s;
        s.path = fs::absolute(path).lexically_normal().lexically_relative(folder).string();
        s.bytes = fs::file_size(path);
        s.sha256 = common::sha256_of_file(path);
        for (const VirtualSource &o : sources) {
            if (o.path == s.path) throw UserError("merge --virtual: " + path + " is given twice");
        }
        sources.push_back(std::move(s));
    }
    const FileInfo info = merged_file_info(readers, inputs, force);
    readers.clear(); // the tables are read raw below: the rows carry the offsets to rebase

    const h5::Handle ptype = layout::pipeline_row_type(false), stype = layout::schedule_row_type(false);
    std::vector<MappedArray> arrays = {
        // the order used_rows() reports them in
        {layout::kPipelineFeatures, H5T_IEEE_F32LE, info.pipeline_feature_names.size(), {0}},
        {layout::kPipelineText, H5T_STD_U8LE, 0, {0}},
        {layout::kScheduleFeatures, H5T_IEEE_F32LE, info.schedule_feature_names.size(), {0}},
        {layout::kScheduleText, H5T_STD_U8LE, 0, {0}},
        {layout::kTimings, H5T_IEEE_F64LE, 0, {0}},
    };
    std::vector<layout::PipelineRow> pipelines;
    std::vector<layout::ScheduleRow> schedules;
    std::map<uint64_t, uint64_t> pipeline_rows; // id -> merged row
    std::set<std::pair<uint64_t, uint32_t>> seen;
    MergeReport report;
    for (size_t i = 0; i < inputs.size(); i++) {
        const h5::Handle file = layout::open_for_reading(inputs[i]);
        const auto p = layout::read_table<layout::PipelineRow>(file.get(), layout::kPipelines, ptype.get());
        const auto s = layout::read_table<layout::ScheduleRow>(file.get(), layout::kSchedules, stype.get());
        const uint64_t pf = arrays[0].base[i], pt = arrays[1].base[i], sf = arrays[2].base[i], st = arrays[3].base[i],
                       tm = arrays[4].base[i];
        const std::array<uint64_t, 5> used_by_input = used_rows(p, s);
        for (size_t k = 0; k < arrays.size(); k++) {
            MappedArray &a = arrays[k];
            const uint64_t used = used_by_input[k];
            const h5::Handle d = layout::open_array(file.get(), inputs[i], a.name);
            if (used > layout::rows(d.get())) {
                throw UserError("merge --virtual: " + inputs[i] + ": its records point past the end of " + a.name +
                                " (dataset verify names them)");
            }
            a.base.push_back(a.base.back() + used);
        }
        for (layout::PipelineRow r : p) {
            if (pipeline_rows.count(r.id)) continue;
            pipeline_rows[r.id] = pipelines.size();
            r.features_begin += pf, r.features_end += pf;
            r.spec_begin += pt, r.spec_end += pt, r.stages_begin += pt, r.stages_end += pt;
            pipelines.push_back(r);
        }
        for (layout::ScheduleRow r : s) {
            if (r.pipeline_row >= p.size()) {
                throw UserError("merge --virtual: " + inputs[i] + ": a schedule names pipeline row " +
                                std::to_string(r.pipeline_row) + ", which does not exist (dataset verify)");
            }
            const uint64_t id = p[r.pipeline_row].id;
            if (!seen.insert({id, r.sample}).second) {
                report.duplicates_skipped++;
                continue;
            }
            r.pipeline_row = pipeline_rows.at(id);
            r.features_begin += sf, r.features_end += sf;
            r.source_begin += st, r.source_end += st, r.message_begin += st, r.message_end += st;
            r.nest_begin += st, r.nest_end += st;
            r.timings_begin += tm, r.timings_end += tm;
            schedules.push_back(r);
        }
    }

    std::vector<std::string> source_lines, source_names;
    for (const VirtualSource &s : sources) {
        source_lines.push_back(s.sha256 + " " + std::to_string(s.bytes) + " " + s.path);
        source_names.push_back(s.path);
    }
    write_via_partial(out, [&](const std::string &partial) {
        h5::quiet_errors();
        const h5::Handle fapl = h5::plist(H5Pcreate(H5P_FILE_ACCESS), "file access");
        h5::check_status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), "file access");
        h5::Handle file =
            h5::file(H5Fcreate(partial.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()), "create dataset file");
        const hid_t f = file.get();
        layout::write_file_info(f, info);
        layout::write_attribute(f, layout::kVirtualSources, source_lines);
        const h5::Handle prow = layout::pipeline_row_type(true), srow = layout::schedule_row_type(true);
        const h5::Handle ptable = layout::create_array(f, layout::kPipelines, prow.get(), 0, 512);
        layout::append(ptable.get(), ptype.get(), pipelines.data(), pipelines.size(), 0);
        const h5::Handle stable = layout::create_array(f, layout::kSchedules, srow.get(), 0, 512);
        layout::append(stable.get(), stype.get(), schedules.data(), schedules.size(), 0);
        for (const MappedArray &a : arrays) create_mapping(f, a, source_names);
        file.close("close the merged file");
    });
    report.pipelines = pipelines.size();
    report.schedules = schedules.size();
    return report;
}

std::vector<VirtualSource> virtual_sources(const std::string &path) {
    const h5::Handle file = layout::open_for_reading(path);
    if (!layout::has_attribute(file.get(), layout::kVirtualSources)) return {};
    std::vector<VirtualSource> sources;
    try {
        for (const std::string &line : layout::read_strings_attribute(file.get(), layout::kVirtualSources)) {
            const size_t a = line.find(' '), b = a == std::string::npos ? a : line.find(' ', a + 1);
            if (b == std::string::npos) throw UserError("a line without digest, size and path");
            VirtualSource s;
            s.sha256 = line.substr(0, a);
            s.bytes = std::stoull(line.substr(a + 1, b - a - 1));
            s.path = line.substr(b + 1);
            sources.push_back(std::move(s));
        }
    } catch (const std::exception &e) {
        throw UserError(path + ": damaged virtual_sources attribute (" + e.what() + ")");
    }
    return sources;
}

std::vector<std::string> check_virtual_sources(const std::string &path, const std::vector<VirtualSource> &sources,
                                               bool digests) {
    const fs::path folder = fs::absolute(path).parent_path();
    std::vector<std::string> problems;
    for (const VirtualSource &s : sources) {
        const fs::path shard = folder / s.path;
        std::error_code ec;
        const uint64_t bytes = fs::file_size(shard, ec);
        if (ec) {
            problems.push_back("shard " + s.path + " is missing (the virtual merge reads it)");
        } else if (bytes != s.bytes || (digests && common::sha256_of_file(shard.string()) != s.sha256)) {
            problems.push_back("shard " + s.path + " changed since the virtual merge (merge again)");
        }
    }
    return problems;
}

} // namespace schedforge::datasets
