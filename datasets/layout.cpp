#include "datasets/layout.h"

#include "common/errors.h"

#include <algorithm>
#include <cstddef>
#include <ctime>
#include <filesystem>

namespace schedforge::datasets {

namespace h5 {

void quiet_errors() {
    static const bool done = [] {
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
        return true;
    }();
    (void)done;
}

std::string last_error_message() {
    std::string message;
    H5Ewalk2(
        H5E_DEFAULT, H5E_WALK_UPWARD,
        [](unsigned, const H5E_error2_t *e, void *data) -> herr_t {
            auto *m = static_cast<std::string *>(data);
            if (m->empty() && e->desc) *m = e->desc;
            return 0;
        },
        &message);
    return message;
}

void fail(const std::string &what) {
    const std::string reason = last_error_message();
    H5Eclear2(H5E_DEFAULT);
    throw Error(reason.empty() ? what : what + ": " + reason);
}

} // namespace h5

namespace layout {

namespace {

h5::Handle status_type() {
    h5::Handle t = h5::type(H5Tenum_create(H5T_NATIVE_UINT8), "status enum");
    for (int s = 0; s < kNumStatuses; s++) {
        const uint8_t v = uint8_t(s);
        h5::check_status(H5Tenum_insert(t.get(), status_name(Status(s)), &v), "status enum");
    }
    return t;
}

h5::Handle mode_type() {
    h5::Handle t = h5::type(H5Tenum_create(H5T_NATIVE_UINT8), "search mode enum");
    for (SearchMode m : {SearchMode::Beam, SearchMode::Dropout, SearchMode::Random}) {
        const uint8_t v = uint8_t(m);
        h5::check_status(H5Tenum_insert(t.get(), search_mode_name(m), &v), "search mode enum");
    }
    return t;
}

h5::Handle finish_compound(h5::Handle t, bool packed) {
    if (packed) h5::check_status(H5Tpack(t.get()), "pack compound");
    return t;
}

h5::Handle string_type() {
    h5::Handle t = h5::type(H5Tcopy(H5T_C_S1), "string type");
    h5::check_status(H5Tset_size(t.get(), H5T_VARIABLE), "string type");
    h5::check_status(H5Tset_cset(t.get(), H5T_CSET_UTF8), "string type");
    return t;
}

} // namespace

#define SCHEDFORGE_FIELD(row, field, type)                                                                             \
    h5::check_status(H5Tinsert(t.get(), #field, HOFFSET(row, field), type), "compound field " #field)

h5::Handle pipeline_row_type(bool packed) {
    h5::Handle t = h5::type(H5Tcreate(H5T_COMPOUND, sizeof(PipelineRow)), "pipeline row type");
    const h5::Handle status = status_type();
    SCHEDFORGE_FIELD(PipelineRow, id, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(PipelineRow, seed, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(PipelineRow, generator_version, H5T_NATIVE_UINT32);
    SCHEDFORGE_FIELD(PipelineRow, num_stages, H5T_NATIVE_UINT32);
    SCHEDFORGE_FIELD(PipelineRow, spec_begin, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(PipelineRow, spec_end, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(PipelineRow, stages_begin, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(PipelineRow, stages_end, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(PipelineRow, features_begin, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(PipelineRow, features_end, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(PipelineRow, reference_status, status.get());
    SCHEDFORGE_FIELD(PipelineRow, reference_runtime, H5T_NATIVE_DOUBLE);
    return finish_compound(std::move(t), packed);
}

h5::Handle schedule_row_type(bool packed, int schema_version) {
    h5::Handle t = h5::type(H5Tcreate(H5T_COMPOUND, sizeof(ScheduleRow)), "schedule row type");
    const h5::Handle status = status_type(), mode = mode_type();
    SCHEDFORGE_FIELD(ScheduleRow, pipeline_row, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(ScheduleRow, sample, H5T_NATIVE_UINT32);
    SCHEDFORGE_FIELD(ScheduleRow, seed, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(ScheduleRow, mode, mode.get());
    SCHEDFORGE_FIELD(ScheduleRow, beam_size, H5T_NATIVE_INT32);
    SCHEDFORGE_FIELD(ScheduleRow, passes, H5T_NATIVE_INT32);
    SCHEDFORGE_FIELD(ScheduleRow, dropout, H5T_NATIVE_DOUBLE);
    SCHEDFORGE_FIELD(ScheduleRow, status, status.get());
    SCHEDFORGE_FIELD(ScheduleRow, predicted_cost, H5T_NATIVE_DOUBLE);
    SCHEDFORGE_FIELD(ScheduleRow, runtime_min, H5T_NATIVE_DOUBLE);
    SCHEDFORGE_FIELD(ScheduleRow, runtime_median, H5T_NATIVE_DOUBLE);
    SCHEDFORGE_FIELD(ScheduleRow, search_seconds, H5T_NATIVE_DOUBLE);
    SCHEDFORGE_FIELD(ScheduleRow, compile_seconds, H5T_NATIVE_DOUBLE);
    SCHEDFORGE_FIELD(ScheduleRow, benchmark_seconds, H5T_NATIVE_DOUBLE);
    SCHEDFORGE_FIELD(ScheduleRow, threads, H5T_NATIVE_INT32);
    SCHEDFORGE_FIELD(ScheduleRow, features_begin, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(ScheduleRow, features_end, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(ScheduleRow, timings_begin, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(ScheduleRow, timings_end, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(ScheduleRow, source_begin, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(ScheduleRow, source_end, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(ScheduleRow, message_begin, H5T_NATIVE_UINT64);
    SCHEDFORGE_FIELD(ScheduleRow, message_end, H5T_NATIVE_UINT64);
    if (schema_version >= 3) {
        SCHEDFORGE_FIELD(ScheduleRow, nest_begin, H5T_NATIVE_UINT64);
        SCHEDFORGE_FIELD(ScheduleRow, nest_end, H5T_NATIVE_UINT64);
    }
    return finish_compound(std::move(t), packed);
}

#undef SCHEDFORGE_FIELD

h5::Handle create_array(hid_t file, const char *name, hid_t type, hsize_t columns, hsize_t chunk_rows) {
    const int rank = columns ? 2 : 1;
    const hsize_t dims[2] = {0, columns}, max_dims[2] = {H5S_UNLIMITED, columns};
    const hsize_t chunk[2] = {chunk_rows, std::max<hsize_t>(columns, 1)};
    const h5::Handle space = h5::space(H5Screate_simple(rank, dims, max_dims), name);
    const h5::Handle props = h5::plist(H5Pcreate(H5P_DATASET_CREATE), name);
    h5::check_status(H5Pset_chunk(props.get(), rank, chunk), name);
    // Shuffle groups the bytes of equal significance (floats compress far better), then gzip;
    // the checksum is taken last, over the stored bytes, so any on-disk corruption shows.
    h5::check_status(H5Pset_shuffle(props.get()), name);
    h5::check_status(H5Pset_deflate(props.get(), 4), name);
    h5::check_status(H5Pset_fletcher32(props.get()), name);
    return h5::dataset(H5Dcreate2(file, name, type, space.get(), H5P_DEFAULT, props.get(), H5P_DEFAULT), name);
}

constexpr unsigned kMetadataReadAttempts = 28;

h5::Handle open_for_reading(const std::string &path) {
    h5::quiet_errors();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw UserError(path + ": no such file");
    if (H5Fis_hdf5(path.c_str()) <= 0) throw UserError(path + ": not an HDF5 file");
    // A SWMR reader retries a metadata read whose checksum fails (the writer may be midway through
    // a flush), sleeping twice as long each time: HDF5's 100 attempts keep a reader of a damaged
    // file asleep for minutes. 28 wait about a quarter of a second in all, ample for a flush.
    const h5::Handle fapl = h5::plist(H5Pcreate(H5P_FILE_ACCESS), "file access");
    h5::check_status(H5Pset_metadata_read_attempts(fapl.get(), kMetadataReadAttempts), "file access");
    hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl.get());
    if (id < 0) id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT); // an older-format file
    if (id < 0) {
        const std::string reason = h5::last_error_message();
        H5Eclear2(H5E_DEFAULT);
        throw UserError(path + ": cannot open (" + reason + ")");
    }
    return h5::Handle(id, H5Fclose);
}

h5::Handle open_array(hid_t file, const std::string &path, const char *name) {
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) {
        throw UserError(path + ": not a schedforge dataset (no '" + name + "' dataset)");
    }
    return h5::dataset(H5Dopen2(file, name, H5P_DEFAULT), name);
}

uint64_t rows(hid_t dataset) {
    const h5::Handle space = h5::space(H5Dget_space(dataset), "dataset space");
    hsize_t dims[2] = {0, 0};
    h5::check_status(H5Sget_simple_extent_dims(space.get(), dims, nullptr), "dataset extent");
    return dims[0];
}

void resize(hid_t dataset, uint64_t count, hsize_t columns) {
    const hsize_t dims[2] = {count, columns};
    h5::check_status(H5Dset_extent(dataset, dims), "resize dataset");
}

std::pair<uint64_t, uint64_t> append(hid_t dataset, hid_t memory_type, const void *data, uint64_t count,
                                     hsize_t columns) {
    const uint64_t old_rows = rows(dataset);
    if (count == 0) return {old_rows, old_rows};
    resize(dataset, old_rows + count, columns);
    const int rank = columns ? 2 : 1;
    const h5::Handle file_space = h5::space(H5Dget_space(dataset), "append");
    const hsize_t start[2] = {old_rows, 0}, size[2] = {count, columns};
    h5::check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, size, nullptr), "append");
    const h5::Handle memory_space = h5::space(H5Screate_simple(rank, size, nullptr), "append");
    h5::check_status(H5Dwrite(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, data),
                     "append rows");
    return {old_rows, old_rows + count};
}

void read_rows(hid_t dataset, hid_t memory_type, uint64_t begin, uint64_t end, hsize_t columns, void *out) {
    if (end <= begin) return;
    const int rank = columns ? 2 : 1;
    const h5::Handle file_space = h5::space(H5Dget_space(dataset), "read");
    const hsize_t start[2] = {begin, 0}, size[2] = {end - begin, columns};
    h5::check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, size, nullptr), "read");
    const h5::Handle memory_space = h5::space(H5Screate_simple(rank, size, nullptr), "read");
    h5::check_status(H5Dread(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, out),
                     "read rows");
}

namespace {

void write_raw_attribute(hid_t object, const char *name, hid_t type, hid_t space, const void *data) {
    const h5::Handle a = h5::attribute(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), name);
    h5::check_status(H5Awrite(a.get(), type, data), name);
}

h5::Handle open_attribute(hid_t object, const char *name) {
    if (!has_attribute(object, name)) throw h5::Error(std::string("missing attribute '") + name + "'");
    return h5::attribute(H5Aopen(object, name, H5P_DEFAULT), name);
}

} // namespace

void write_attribute(hid_t object, const char *name, const std::string &value) {
    const h5::Handle t = string_type();
    const h5::Handle space = h5::space(H5Screate(H5S_SCALAR), name);
    const char *p = value.c_str();
    write_raw_attribute(object, name, t.get(), space.get(), &p);
}

void write_attribute(hid_t object, const char *name, int64_t value) {
    const h5::Handle space = h5::space(H5Screate(H5S_SCALAR), name);
    write_raw_attribute(object, name, H5T_NATIVE_INT64, space.get(), &value);
}

void write_attribute(hid_t object, const char *name, const std::vector<std::string> &values) {
    const h5::Handle t = string_type();
    const hsize_t n = values.size();
    const h5::Handle space = h5::space(H5Screate_simple(1, &n, nullptr), name);
    std::vector<const char *> pointers;
    for (const std::string &v : values) pointers.push_back(v.c_str());
    write_raw_attribute(object, name, t.get(), space.get(), pointers.data());
}

bool has_attribute(hid_t object, const char *name) { return H5Aexists(object, name) > 0; }

std::vector<std::string> read_strings_attribute(hid_t object, const char *name) {
    const h5::Handle a = open_attribute(object, name);
    const h5::Handle space = h5::space(H5Aget_space(a.get()), name);
    const hssize_t n = H5Sget_simple_extent_npoints(space.get());
    if (n < 0) h5::fail(name);
    const h5::Handle t = string_type();
    std::vector<char *> pointers(size_t(n), nullptr);
    h5::check_status(H5Aread(a.get(), t.get(), pointers.data()), name);
    std::vector<std::string> values;
    for (char *p : pointers) {
        values.emplace_back(p ? p : "");
        H5free_memory(p);
    }
    return values;
}

std::string read_string_attribute(hid_t object, const char *name) {
    std::vector<std::string> v = read_strings_attribute(object, name);
    if (v.size() != 1) throw h5::Error(std::string("attribute '") + name + "' is not a single string");
    return v[0];
}

int64_t read_int_attribute(hid_t object, const char *name) {
    const h5::Handle a = open_attribute(object, name);
    int64_t value = 0;
    h5::check_status(H5Aread(a.get(), H5T_NATIVE_INT64, &value), name);
    return value;
}

void write_file_info(hid_t file, const FileInfo &info) {
    write_attribute(file, "schema_version", int64_t(info.schema_version));
    write_attribute(file, "pipeline_feature_version", int64_t(info.pipeline_feature_version));
    write_attribute(file, "pipeline_feature_names", info.pipeline_feature_names);
    write_attribute(file, "schedule_feature_version", int64_t(info.schedule_feature_version));
    write_attribute(file, "schedule_feature_names", info.schedule_feature_names);
    write_attribute(file, "producer", info.producer);
    write_attribute(file, "producer_commit", info.producer_commit);
    write_attribute(file, "halide_version", info.halide_version);
    write_attribute(file, "target", info.target);
    write_attribute(file, "hardware", info.hardware);
    write_attribute(file, "timing_protocol", info.timing_protocol);
    write_attribute(file, "config", info.config);
    write_attribute(file, "created", info.created);
}

FileInfo read_file_info(hid_t file) {
    FileInfo info;
    info.schema_version = int(read_int_attribute(file, "schema_version"));
    if (!readable_schema_version(info.schema_version)) return info; // the caller reports the mismatch
    info.pipeline_feature_version = int(read_int_attribute(file, "pipeline_feature_version"));
    info.pipeline_feature_names = read_strings_attribute(file, "pipeline_feature_names");
    info.schedule_feature_version = int(read_int_attribute(file, "schedule_feature_version"));
    info.schedule_feature_names = read_strings_attribute(file, "schedule_feature_names");
    info.producer = read_string_attribute(file, "producer");
    info.producer_commit = read_string_attribute(file, "producer_commit");
    info.halide_version = read_string_attribute(file, "halide_version");
    info.target = read_string_attribute(file, "target");
    info.hardware = read_string_attribute(file, "hardware");
    info.timing_protocol = read_string_attribute(file, "timing_protocol");
    info.config = read_string_attribute(file, "config");
    info.created = read_string_attribute(file, "created");
    return info;
}

} // namespace layout

const char *status_name(Status s) {
    switch (s) {
    case Status::Ok: return "ok";
    case Status::CompileError: return "compile_error";
    case Status::Crash: return "crash";
    case Status::Timeout: return "timeout";
    case Status::Oom: return "oom";
    case Status::WrongOutput: return "wrong_output";
    case Status::RuntimeError: return "runtime_error";
    }
    return "?";
}

bool same_features(const FileInfo &a, const FileInfo &b) {
    return a.pipeline_feature_version == b.pipeline_feature_version &&
           a.pipeline_feature_names == b.pipeline_feature_names &&
           a.schedule_feature_version == b.schedule_feature_version &&
           a.schedule_feature_names == b.schedule_feature_names;
}

std::string utc_timestamp() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char text[32];
    std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

const char *search_mode_name(SearchMode m) {
    switch (m) {
    case SearchMode::Beam: return "beam";
    case SearchMode::Dropout: return "dropout";
    case SearchMode::Random: return "random";
    }
    return "unknown";
}

} // namespace schedforge::datasets
