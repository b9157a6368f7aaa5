#include "datasets/writer.h"

#include "common/errors.h"
#include "datasets/layout.h"

#include <algorithm>
#include <atomic>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <pthread.h>
#include <unistd.h>

namespace schedforge::datasets {

namespace {

namespace fs = std::filesystem;

// Rows per chunk: tables and 1-D arrays in chunks of about 64 KiB, features in chunks of about
// 256 KiB (a few hundred stages), so that appending one record rewrites little.
constexpr hsize_t kTableChunk = 512;
constexpr hsize_t kTextChunk = 1 << 16;
constexpr hsize_t kTimingChunk = 1 << 13;
hsize_t feature_chunk(size_t columns) {
    return std::max<hsize_t>(16, (hsize_t(1) << 18) / (4 * std::max<size_t>(columns, 1)));
}

h5::Handle latest_format_access() {
    h5::Handle fapl = h5::plist(H5Pcreate(H5P_FILE_ACCESS), "file access");
    // SWMR needs the newest on-disk structures.
    h5::check_status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), "file access");
    return fapl;
}

std::string join_lines(const std::vector<std::string> &lines) {
    std::string s;
    for (const std::string &l : lines) s += l + "\n";
    return s;
}

// The descriptors of this process's write locks (plus one; 0 is a free slot), closed in every
// forked child. An OFD lock lasts while any descriptor of its open file does, and fork() copies
// them all: a benchmark worker or timing round still running when its writer is killed (its
// death signal takes a moment) would keep the file locked, and --resume would be refused.
constexpr size_t kLockSlots = 16;
std::atomic<int> lock_fds[kLockSlots];

void close_locks_in_child() {
    for (std::atomic<int> &slot : lock_fds) {
        if (const int fd = slot.exchange(0); fd > 0) ::close(fd - 1);
    }
}

void remember_lock(int fd) {
    static const int registered = ::pthread_atfork(nullptr, nullptr, close_locks_in_child);
    (void)registered;
    for (std::atomic<int> &slot : lock_fds) {
        int free = 0;
        if (slot.compare_exchange_strong(free, fd + 1)) return;
    }
    // More locks than slots (no process holds that many): forked children inherit this one.
}

void forget_lock(int fd) {
    for (std::atomic<int> &slot : lock_fds) {
        int mine = fd + 1;
        if (slot.compare_exchange_strong(mine, 0)) return;
    }
}

} // namespace

WriteLock::WriteLock(const std::string &path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    if (fd_ < 0 || ::fcntl(fd_, F_OFD_SETLK, &lock) != 0) {
        if (fd_ >= 0) ::close(fd_);
        throw UserError(path + ": another process is writing this dataset");
    }
    remember_lock(fd_);
}

WriteLock::~WriteLock() {
    forget_lock(fd_);
    ::close(fd_);
}

struct DatasetWriter::Impl {
    std::string path;
    FileInfo info;
    h5::Handle file;
    h5::Handle pipelines, pipeline_features, pipeline_text;
    h5::Handle schedules, schedule_features, schedule_text, timings;
    h5::Handle pipeline_row_type = layout::pipeline_row_type(false);
    h5::Handle schedule_row_type = layout::schedule_row_type(false);
    uint64_t num_pipelines = 0, num_schedules = 0;
    bool durable = true;           // flush every record (WriteMode::Durable)
    std::optional<WriteLock> lock; // held for the writer's lifetime: one writer per file

    hsize_t pipeline_columns() const { return info.pipeline_feature_names.size(); }
    hsize_t schedule_columns() const { return info.schedule_feature_names.size(); }

    void open_datasets() {
        const hid_t f = file.get();
        pipelines = h5::dataset(H5Dopen2(f, layout::kPipelines, H5P_DEFAULT), layout::kPipelines);
        pipeline_features = h5::dataset(H5Dopen2(f, layout::kPipelineFeatures, H5P_DEFAULT), layout::kPipelineFeatures);
        pipeline_text = h5::dataset(H5Dopen2(f, layout::kPipelineText, H5P_DEFAULT), layout::kPipelineText);
        schedules = h5::dataset(H5Dopen2(f, layout::kSchedules, H5P_DEFAULT), layout::kSchedules);
        schedule_features = h5::dataset(H5Dopen2(f, layout::kScheduleFeatures, H5P_DEFAULT), layout::kScheduleFeatures);
        schedule_text = h5::dataset(H5Dopen2(f, layout::kScheduleText, H5P_DEFAULT), layout::kScheduleText);
        timings = h5::dataset(H5Dopen2(f, layout::kTimings, H5P_DEFAULT), layout::kTimings);
    }

    void flush() { h5::check_status(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "flush"); }
    // After a record's part: Durable files make each part visible before the next.
    void flush_record_part() {
        if (durable) flush();
    }

    // SWMR from here on; then a write lock of our own, since HDF5 drops its lock for SWMR.
    void start_swmr() {
        h5::check_status(H5Fstart_swmr_write(file.get()), "start SWMR writing");
        lock.emplace(path);
    }

    static std::pair<uint64_t, uint64_t> append_text(hid_t dataset, const std::string &text) {
        return layout::append(dataset, H5T_NATIVE_UINT8, text.data(), text.size(), 0);
    }
};

DatasetWriter::DatasetWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

DatasetWriter::~DatasetWriter() {
    try {
        close();
    } catch (...) {
    }
}

std::unique_ptr<DatasetWriter> DatasetWriter::create(const std::string &path, const FileInfo &info, WriteMode mode) {
    h5::quiet_errors();
    std::error_code ec;
    if (fs::exists(path, ec)) throw UserError(path + ": already exists (use --resume to continue it)");
    const fs::path parent = fs::absolute(path).parent_path();
    if (!fs::is_directory(parent, ec)) throw UserError(path + ": folder " + parent.string() + " does not exist");
    if (::access(parent.c_str(), W_OK) != 0) throw UserError(path + ": folder " + parent.string() + " is not writable");

    auto impl = std::make_unique<Impl>();
    impl->path = path;
    impl->info = info;
    impl->durable = mode == WriteMode::Durable;
    impl->info.schema_version = kSchemaVersion; // e.g. a merge of older files: written in this layout
    const h5::Handle fapl = latest_format_access();
    impl->file = h5::file(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()), "create dataset file");
    try {
        const hid_t f = impl->file.get();
        layout::write_file_info(f, impl->info);
        const h5::Handle prow = layout::pipeline_row_type(true), srow = layout::schedule_row_type(true);
        layout::create_array(f, layout::kPipelines, prow.get(), 0, kTableChunk);
        layout::create_array(f, layout::kPipelineFeatures, H5T_IEEE_F32LE, impl->pipeline_columns(),
                             feature_chunk(impl->pipeline_columns()));
        layout::create_array(f, layout::kPipelineText, H5T_STD_U8LE, 0, kTextChunk);
        layout::create_array(f, layout::kSchedules, srow.get(), 0, kTableChunk);
        layout::create_array(f, layout::kScheduleFeatures, H5T_IEEE_F32LE, impl->schedule_columns(),
                             feature_chunk(impl->schedule_columns()));
        layout::create_array(f, layout::kScheduleText, H5T_STD_U8LE, 0, kTextChunk);
        layout::create_array(f, layout::kTimings, H5T_IEEE_F64LE, 0, kTimingChunk);
        impl->open_datasets();
        if (impl->durable) {
            impl->flush();
            impl->start_swmr();
        }
    } catch (...) {
        impl.reset();
        fs::remove(path, ec); // nothing half-made stays behind
        throw;
    }
    return std::unique_ptr<DatasetWriter>(new DatasetWriter(std::move(impl)));
}

std::unique_ptr<DatasetWriter> DatasetWriter::reopen(const std::string &path) {
    h5::quiet_errors();
    std::error_code ec;
    if (!fs::exists(path, ec)) throw UserError(path + ": no such file to resume");
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    const h5::Handle fapl = latest_format_access();
    // A killed SWMR writer leaves the file marked as open for writing; clear that mark.
    hbool_t clear = 1;
    h5::check_status(H5Pset(fapl.get(), "clear_status_flags", &clear), "file access");
    try {
        impl->file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()), "open");
        impl->info = layout::read_file_info(impl->file.get());
    } catch (const h5::Error &e) {
        const std::string why = e.what();
        if (why.find("lock") != std::string::npos) {
            throw UserError(path + ": another process has it open (a reader or a writer); close it first");
        }
        throw UserError(path + ": cannot open as a dataset for appending (" + why + ")");
    }
    if (impl->info.schema_version != kSchemaVersion) {
        throw UserError(path + ": schema version " + std::to_string(impl->info.schema_version) +
                        ", this build appends to version " + std::to_string(kSchemaVersion) +
                        " only; start a new file");
    }
    impl->open_datasets();

    // Trim what no row refers to: a record whose row was never written.
    impl->num_pipelines = layout::rows(impl->pipelines.get());
    impl->num_schedules = layout::rows(impl->schedules.get());
    std::vector<layout::PipelineRow> prows(impl->num_pipelines);
    layout::read_rows(impl->pipelines.get(), impl->pipeline_row_type.get(), 0, prows.size(), 0, prows.data());
    std::vector<layout::ScheduleRow> srows(impl->num_schedules);
    layout::read_rows(impl->schedules.get(), impl->schedule_row_type.get(), 0, srows.size(), 0, srows.data());
    uint64_t pipeline_features = 0, pipeline_text = 0, schedule_features = 0, schedule_text = 0, timings = 0;
    for (const layout::PipelineRow &r : prows) {
        pipeline_features = std::max(pipeline_features, r.features_end);
        pipeline_text = std::max({pipeline_text, r.spec_end, r.stages_end});
    }
    for (const layout::ScheduleRow &r : srows) {
        schedule_features = std::max(schedule_features, r.features_end);
        schedule_text = std::max({schedule_text, r.source_end, r.message_end, r.nest_end});
        timings = std::max(timings, r.timings_end);
    }
    layout::resize(impl->pipeline_features.get(), pipeline_features, impl->pipeline_columns());
    layout::resize(impl->pipeline_text.get(), pipeline_text, 0);
    layout::resize(impl->schedule_features.get(), schedule_features, impl->schedule_columns());
    layout::resize(impl->schedule_text.get(), schedule_text, 0);
    layout::resize(impl->timings.get(), timings, 0);
    impl->flush();
    impl->start_swmr();
    return std::unique_ptr<DatasetWriter>(new DatasetWriter(std::move(impl)));
}

uint64_t DatasetWriter::add_pipeline(const PipelineRecord &p) {
    Impl &m = *impl_;
    const size_t columns = m.pipeline_columns();
    if (p.features.size() != p.stages.size() * columns) {
        throw std::invalid_argument("add_pipeline: features are not stages x " + std::to_string(columns));
    }
    layout::PipelineRow row{};
#define SCHEDFORGE_COPY_TO_ROW(field) row.field = p.field;
    SCHEDFORGE_PIPELINE_SHARED_FIELDS(SCHEDFORGE_COPY_TO_ROW)
#undef SCHEDFORGE_COPY_TO_ROW
    row.num_stages = uint32_t(p.stages.size());
    std::tie(row.spec_begin, row.spec_end) = m.append_text(m.pipeline_text.get(), p.spec);
    std::tie(row.stages_begin, row.stages_end) = m.append_text(m.pipeline_text.get(), join_lines(p.stages));
    std::tie(row.features_begin, row.features_end) =
        layout::append(m.pipeline_features.get(), H5T_NATIVE_FLOAT, p.features.data(), p.stages.size(), columns);
    row.reference_status = uint8_t(p.reference_status);
    m.flush_record_part();
    layout::append(m.pipelines.get(), m.pipeline_row_type.get(), &row, 1, 0);
    m.flush_record_part();
    return m.num_pipelines++;
}

void DatasetWriter::add_schedule(const ScheduleRecord &s) {
    Impl &m = *impl_;
    const size_t columns = m.schedule_columns();
    if (s.pipeline_row >= m.num_pipelines) throw std::invalid_argument("add_schedule: no such pipeline row");
    if (columns == 0 ? !s.features.empty() : s.features.size() % columns != 0) {
        throw std::invalid_argument("add_schedule: features are not a whole number of rows");
    }
    const uint64_t feature_rows = columns ? s.features.size() / columns : 0;
    layout::ScheduleRow row{};
#define SCHEDFORGE_COPY_TO_ROW(field) row.field = s.field;
    SCHEDFORGE_SCHEDULE_SHARED_FIELDS(SCHEDFORGE_COPY_TO_ROW)
#undef SCHEDFORGE_COPY_TO_ROW
    row.mode = uint8_t(s.mode);
    row.status = uint8_t(s.status);
    std::tie(row.features_begin, row.features_end) =
        layout::append(m.schedule_features.get(), H5T_NATIVE_FLOAT, s.features.data(), feature_rows, columns);
    std::tie(row.timings_begin, row.timings_end) =
        layout::append(m.timings.get(), H5T_NATIVE_DOUBLE, s.timings.data(), s.timings.size(), 0);
    std::tie(row.source_begin, row.source_end) = m.append_text(m.schedule_text.get(), s.source);
    std::tie(row.message_begin, row.message_end) = m.append_text(m.schedule_text.get(), s.message);
    std::tie(row.nest_begin, row.nest_end) = m.append_text(m.schedule_text.get(), s.nest);
    m.flush_record_part();
    layout::append(m.schedules.get(), m.schedule_row_type.get(), &row, 1, 0);
    m.flush_record_part();
    m.num_schedules++;
}

uint64_t DatasetWriter::num_pipelines() const { return impl_->num_pipelines; }
uint64_t DatasetWriter::num_schedules() const { return impl_->num_schedules; }
const FileInfo &DatasetWriter::info() const { return impl_->info; }

void DatasetWriter::close() {
    if (!impl_ || !impl_->file.valid()) return;
    Impl &m = *impl_;
    for (h5::Handle *d : {&m.pipelines, &m.pipeline_features, &m.pipeline_text, &m.schedules, &m.schedule_features,
                          &m.schedule_text, &m.timings}) {
        d->close("close dataset");
    }
    m.file.close("close dataset file");
    m.lock.reset();
}

} // namespace schedforge::datasets
