#include "datasets/reader.h"

#include "common/errors.h"
#include "datasets/layout.h"
#include "datasets/virtual_merge.h"

#include <sstream>

namespace schedforge::datasets {

struct DatasetReader::Impl {
    std::string path;
    FileInfo info;
    h5::Handle file;
    h5::Handle pipeline_features, pipeline_text, schedule_features, schedule_text, timings;
    std::vector<layout::PipelineRow> pipelines;
    std::vector<layout::ScheduleRow> schedules;

    std::string text(hid_t dataset, uint64_t begin, uint64_t end) const {
        std::string s(end > begin ? end - begin : 0, '\0');
        layout::read_rows(dataset, H5T_NATIVE_UINT8, begin, end, 0, s.data());
        return s;
    }

    std::vector<float> features(hid_t dataset, uint64_t begin, uint64_t end, size_t columns) const {
        std::vector<float> f(end > begin ? (end - begin) * columns : 0);
        layout::read_rows(dataset, H5T_NATIVE_FLOAT, begin, end, columns, f.data());
        return f;
    }
};

DatasetReader::DatasetReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DatasetReader::~DatasetReader() = default;

std::unique_ptr<DatasetReader> DatasetReader::open(const std::string &path) {
    auto m = std::make_unique<Impl>();
    m->path = path;
    m->file = layout::open_for_reading(path);
    const hid_t f = m->file.get();
    if (!layout::has_attribute(f, "schema_version")) {
        throw UserError(path + ": not a schedforge dataset (no schema_version attribute)");
    }
    try {
        m->info = layout::read_file_info(f);
    } catch (const h5::Error &e) {
        throw UserError(path + ": damaged attributes (" + e.what() + ")");
    }
    if (!readable_schema_version(m->info.schema_version)) {
        throw UserError(path + ": schema version " + std::to_string(m->info.schema_version) +
                        "; this build reads versions " + std::to_string(kOldestReadableSchemaVersion) + " to " +
                        std::to_string(kSchemaVersion));
    }
    // A virtual merge's missing shard would read as zeros: refused here (verify compares digests).
    if (layout::has_attribute(f, layout::kVirtualSources)) { // only then open it again to read them
        const std::vector<std::string> shards = check_virtual_sources(path, virtual_sources(path), false);
        if (!shards.empty()) throw UserError(path + ": " + shards.front());
    }
    const h5::Handle pipelines = layout::open_array(f, path, layout::kPipelines);
    const h5::Handle schedules = layout::open_array(f, path, layout::kSchedules);
    m->pipeline_features = layout::open_array(f, path, layout::kPipelineFeatures);
    m->pipeline_text = layout::open_array(f, path, layout::kPipelineText);
    m->schedule_features = layout::open_array(f, path, layout::kScheduleFeatures);
    m->schedule_text = layout::open_array(f, path, layout::kScheduleText);
    m->timings = layout::open_array(f, path, layout::kTimings);
    try {
        const h5::Handle ptype = layout::pipeline_row_type(false),
                         stype = layout::schedule_row_type(false, m->info.schema_version);
        m->pipelines.resize(layout::rows(pipelines.get()));
        layout::read_rows(pipelines.get(), ptype.get(), 0, m->pipelines.size(), 0, m->pipelines.data());
        m->schedules.assign(layout::rows(schedules.get()), layout::ScheduleRow{}); // older files: no nests
        layout::read_rows(schedules.get(), stype.get(), 0, m->schedules.size(), 0, m->schedules.data());
    } catch (const h5::Error &e) {
        throw UserError(path + ": cannot read its tables (" + e.what() + ")");
    }
    return std::unique_ptr<DatasetReader>(new DatasetReader(std::move(m)));
}

const FileInfo &DatasetReader::info() const { return impl_->info; }
uint64_t DatasetReader::num_pipelines() const { return impl_->pipelines.size(); }
uint64_t DatasetReader::num_schedules() const { return impl_->schedules.size(); }

namespace {

#define SCHEDFORGE_COPY_FROM_ROW(field) out.field = r.field;

PipelineRecord summary(const layout::PipelineRow &r) {
    PipelineRecord out;
    SCHEDFORGE_PIPELINE_SHARED_FIELDS(SCHEDFORGE_COPY_FROM_ROW)
    out.reference_status = Status(r.reference_status);
    return out;
}

ScheduleRecord summary(const layout::ScheduleRow &r) {
    ScheduleRecord out;
    SCHEDFORGE_SCHEDULE_SHARED_FIELDS(SCHEDFORGE_COPY_FROM_ROW)
    out.mode = SearchMode(r.mode);
    out.status = Status(r.status);
    return out;
}

#undef SCHEDFORGE_COPY_FROM_ROW

std::vector<std::string> split_lines(const std::string &text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

} // namespace

PipelineRecord DatasetReader::pipeline(uint64_t row) const {
    const Impl &m = *impl_;
    const layout::PipelineRow &r = m.pipelines.at(row);
    PipelineRecord p = summary(r);
    p.spec = m.text(m.pipeline_text.get(), r.spec_begin, r.spec_end);
    p.stages = split_lines(m.text(m.pipeline_text.get(), r.stages_begin, r.stages_end));
    p.features =
        m.features(m.pipeline_features.get(), r.features_begin, r.features_end, m.info.pipeline_feature_names.size());
    return p;
}

ScheduleRecord DatasetReader::schedule(uint64_t row) const {
    const Impl &m = *impl_;
    const layout::ScheduleRow &r = m.schedules.at(row);
    ScheduleRecord s = summary(r);
    s.source = m.text(m.schedule_text.get(), r.source_begin, r.source_end);
    s.message = m.text(m.schedule_text.get(), r.message_begin, r.message_end);
    s.nest = m.text(m.schedule_text.get(), r.nest_begin, r.nest_end);
    s.features =
        m.features(m.schedule_features.get(), r.features_begin, r.features_end, m.info.schedule_feature_names.size());
    s.timings.resize(r.timings_end > r.timings_begin ? r.timings_end - r.timings_begin : 0);
    layout::read_rows(m.timings.get(), H5T_NATIVE_DOUBLE, r.timings_begin, r.timings_end, 0, s.timings.data());
    return s;
}

std::vector<PipelineRecord> DatasetReader::pipeline_summaries() const {
    std::vector<PipelineRecord> out;
    for (const layout::PipelineRow &r : impl_->pipelines) out.push_back(summary(r));
    return out;
}

std::vector<ScheduleRecord> DatasetReader::schedule_summaries() const {
    std::vector<ScheduleRecord> out;
    for (const layout::ScheduleRow &r : impl_->schedules) out.push_back(summary(r));
    return out;
}

} // namespace schedforge::datasets
