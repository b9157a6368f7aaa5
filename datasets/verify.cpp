#include "datasets/verify.h"

#include "common/errors.h"
#include "common/wire.h"
#include "datasets/layout.h"
#include "datasets/reader.h"
#include "datasets/virtual_merge.h"
#include "featurize/pipeline_features.h"
#include "featurize/schedule_features.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace schedforge::datasets {

namespace {
// verify's default time limit: far beyond what reading a sound file takes (it reads hundreds of
// MB a second), so that only a loop on damaged metadata reaches it.
constexpr double kVerifyBaseSeconds = 60, kVerifyBytesPerSecond = 10e6;
} // namespace

int protocol_rounds(const std::string &timing_protocol) {
    std::istringstream lines(timing_protocol);
    for (std::string line; std::getline(lines, line);) {
        int rounds = 1;
        if (std::sscanf(line.c_str(), "rounds = %d", &rounds) == 1) return rounds;
    }
    return 1; // files made before timing rounds
}

namespace {

// Reads a whole array in blocks of `block` rows; reports each unreadable block and hands the
// readable ones to `visit(first_row, values)`.
template<typename T>
void scan(hid_t file, const char *name, hid_t memory_type, hsize_t columns, uint64_t block,
          std::vector<std::string> &problems, const std::function<void(uint64_t, const std::vector<T> &)> &visit) {
    h5::Handle d = h5::dataset(H5Dopen2(file, name, H5P_DEFAULT), name);
    const uint64_t n = layout::rows(d.get());
    std::vector<T> values;
    for (uint64_t begin = 0; begin < n; begin += block) {
        const uint64_t end = std::min(n, begin + block);
        values.assign((end - begin) * std::max<hsize_t>(columns, 1), T());
        try {
            layout::read_rows(d.get(), memory_type, begin, end, columns, values.data());
        } catch (const h5::Error &e) {
            problems.push_back(std::string(name) + " rows " + std::to_string(begin) + ".." + std::to_string(end) +
                               ": unreadable (" + e.what() + ")");
            continue;
        }
        if (visit) visit(begin, values);
    }
}

uint64_t array_rows(hid_t file, const char *name) {
    const h5::Handle d = h5::dataset(H5Dopen2(file, name, H5P_DEFAULT), name);
    return layout::rows(d.get());
}

// Checks that [begin, end) ranges lie inside an array of `size` and follow each other.
class RangeCheck {
public:
    RangeCheck(std::string what, uint64_t size, std::vector<std::string> &problems)
        : what_(std::move(what)), size_(size), problems_(problems) {}
    bool check(const std::string &row, uint64_t begin, uint64_t end) {
        if (begin > end || end > size_) {
            problems_.push_back(row + ": " + what_ + " range [" + std::to_string(begin) + ", " + std::to_string(end) +
                                ") outside 0.." + std::to_string(size_));
            return false;
        }
        if (begin < last_end_) {
            problems_.push_back(row + ": " + what_ + " range overlaps the previous row's");
            return false;
        }
        last_end_ = end;
        return true;
    }

private:
    std::string what_;
    uint64_t size_, last_end_ = 0;
    std::vector<std::string> &problems_;
};

void check_versions(const FileInfo &info, std::vector<std::string> &p) {
    if (info.pipeline_feature_version != featurize::PipelineFeatures::version()) {
        p.push_back("pipeline feature version " + std::to_string(info.pipeline_feature_version) + "; this build has " +
                    std::to_string(featurize::PipelineFeatures::version()));
    } else if (info.pipeline_feature_names != featurize::PipelineFeatures::names()) {
        p.push_back("pipeline feature names differ from this build's (same version)");
    }
    if (info.schedule_feature_version != featurize::ScheduleFeatures::version()) {
        p.push_back("schedule feature version " + std::to_string(info.schedule_feature_version) + "; this build has " +
                    std::to_string(featurize::ScheduleFeatures::version()));
    } else if (info.schedule_feature_names != featurize::ScheduleFeatures::names()) {
        p.push_back("schedule feature names differ from this build's (same version)");
    }
}

template<typename T>
void check_finite(const char *name, hsize_t columns, std::vector<std::string> &problems, const std::vector<T> &values,
                  uint64_t first_row) {
    for (size_t i = 0; i < values.size(); i++) {
        if (std::isfinite(values[i])) continue;
        problems.push_back(std::string(name) + " row " + std::to_string(first_row + i / std::max<hsize_t>(columns, 1)) +
                           ": a value is not finite");
        return;
    }
}

// The checks themselves, in this process.
VerifyReport verify_here(const std::string &path);

// A worker's answer: 'U' a user error, 'E' another failure, 'R' a report.
std::string encode_answer(char tag, const std::string &message, const VerifyReport &r = {}) {
    common::ByteWriter w;
    w.put<char>(tag);
    w.put_string(message);
    w.put<uint64_t>(r.pipelines);
    w.put<uint64_t>(r.schedules);
    w.put<uint64_t>(r.problems.size());
    for (const std::string &p : r.problems) w.put_string(p);
    return w.bytes();
}

} // namespace

// HDF5 trusts what it reads from a file's global heap (variable-length strings, which carry no
// checksum): damaged there, it copies from wherever the damage points and crashes, or loops. So
// the checks run in a child process with a time limit, and a child killed by a signal or by the
// limit is a report like any other: a damaged file gets an answer, never a crash or a hang.
VerifyReport verify_dataset(const std::string &path, double time_limit_seconds) {
    if (!(time_limit_seconds > 0)) {
        std::error_code ec;
        const auto bytes = std::filesystem::file_size(path, ec);
        time_limit_seconds = kVerifyBaseSeconds + (ec ? 0 : double(bytes) / kVerifyBytesPerSecond);
    }
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("verify: pipe failed");
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("verify: fork failed");
    if (pid == 0) {
        ::close(fds[0]);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        ::alarm(unsigned(std::ceil(time_limit_seconds)));
        std::string answer;
        try {
            answer = encode_answer('R', "", verify_here(path));
        } catch (const UserError &e) {
            answer = encode_answer('U', e.what());
        } catch (const std::exception &e) {
            answer = encode_answer('E', e.what());
        }
        common::write_all(fds[1], answer.data(), answer.size());
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string bytes;
    char buf[1 << 16];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) != 0;) {
        if (n > 0)
            bytes.append(buf, size_t(n));
        else if (errno != EINTR)
            break;
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    VerifyReport report;
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        report.problems.push_back(sig == SIGALRM
                                      ? "no answer within " + std::to_string(int(std::ceil(time_limit_seconds))) +
                                            " s (HDF5 looping on damaged metadata?)"
                                      : std::string("reading it crashed the HDF5 library (") + strsignal(sig) +
                                            "): the file's metadata is damaged");
        return report;
    }
    common::ByteReader in(bytes);
    const char tag = in.get<char>();
    const std::string message = in.get_string();
    report.pipelines = in.get<uint64_t>();
    report.schedules = in.get<uint64_t>();
    const uint64_t problems = in.get<uint64_t>();
    for (uint64_t i = 0; i < problems && in.ok(); i++) report.problems.push_back(in.get_string());
    if (!in.ok()) throw std::runtime_error("verify: the checking process gave no answer");
    if (tag == 'U') throw UserError(message);
    if (tag == 'E') throw std::runtime_error(message);
    return report;
}

namespace {

VerifyReport verify_here(const std::string &path) {
    VerifyReport report;
    auto &problems = report.problems;
    const h5::Handle file = layout::open_for_reading(path); // a missing or non-HDF5 file: UserError
    // A virtual merge's shards first: a missing one is also why the reader refuses the file.
    std::unique_ptr<DatasetReader> reader;
    try {
        problems = check_virtual_sources(path, virtual_sources(path), true);
        if (!problems.empty()) return report;
        reader = DatasetReader::open(path); // reads the attributes and both tables
    } catch (const UserError &e) {
        problems.push_back(e.what());
        return report;
    }
    const FileInfo &info = reader->info();
    check_versions(info, problems);
    // With timing rounds the label is the median of the rounds' minima, whose boundaries the file
    // does not keep: it is checked to lie among the samples, not recomputed.
    const int rounds = protocol_rounds(info.timing_protocol);
    report.pipelines = reader->num_pipelines();
    report.schedules = reader->num_schedules();
    const hid_t f = file.get();
    const hsize_t pcols = info.pipeline_feature_names.size(), scols = info.schedule_feature_names.size();

    // Every byte of the arrays, block by block.
    using FloatVisit = std::function<void(uint64_t, const std::vector<float> &)>;
    scan<float>(f, layout::kPipelineFeatures, H5T_NATIVE_FLOAT, pcols, 4096, problems,
                FloatVisit([&](uint64_t first, const std::vector<float> &v) {
                    check_finite(layout::kPipelineFeatures, pcols, problems, v, first);
                }));
    scan<float>(f, layout::kScheduleFeatures, H5T_NATIVE_FLOAT, scols, 4096, problems,
                FloatVisit([&](uint64_t first, const std::vector<float> &v) {
                    check_finite(layout::kScheduleFeatures, scols, problems, v, first);
                }));
    std::string pipeline_text; // kept: stage names are counted below
    scan<uint8_t>(f, layout::kPipelineText, H5T_NATIVE_UINT8, 0, 1 << 20, problems,
                  std::function<void(uint64_t, const std::vector<uint8_t> &)>(
                      [&](uint64_t, const std::vector<uint8_t> &v) { pipeline_text.append(v.begin(), v.end()); }));
    scan<uint8_t>(f, layout::kScheduleText, H5T_NATIVE_UINT8, 0, 1 << 20, problems, {});
    std::vector<double> timings;
    scan<double>(
        f, layout::kTimings, H5T_NATIVE_DOUBLE, 0, 1 << 16, problems,
        std::function<void(uint64_t, const std::vector<double> &)>(
            [&](uint64_t, const std::vector<double> &v) { timings.insert(timings.end(), v.begin(), v.end()); }));

    // Pipelines: ranges inside their arrays, one feature row and one stage name per stage.
    // (The tables are read raw: the record view cannot show an inverted range.)
    const std::vector<layout::PipelineRow> pipelines =
        layout::read_table<layout::PipelineRow>(f, layout::kPipelines, layout::pipeline_row_type(false).get());
    {
        RangeCheck features("pipeline_features", array_rows(f, layout::kPipelineFeatures), problems);
        RangeCheck text("pipeline_text", array_rows(f, layout::kPipelineText), problems);
        for (size_t i = 0; i < pipelines.size(); i++) {
            const layout::PipelineRow &p = pipelines[i];
            const std::string row = "pipelines row " + std::to_string(i);
            if (features.check(row, p.features_begin, p.features_end) &&
                p.features_end - p.features_begin != p.num_stages) {
                problems.push_back(row + ": " + std::to_string(p.features_end - p.features_begin) +
                                   " feature rows for " + std::to_string(p.num_stages) + " stages");
            }
            text.check(row, p.spec_begin, p.spec_end);
            if (text.check(row, p.stages_begin, p.stages_end) && p.stages_end <= pipeline_text.size()) {
                const auto names = std::count(pipeline_text.begin() + long(p.stages_begin),
                                              pipeline_text.begin() + long(p.stages_end), '\n');
                if (uint64_t(names) != p.num_stages) {
                    problems.push_back(row + ": " + std::to_string(names) + " stage names for " +
                                       std::to_string(p.num_stages) + " stages");
                }
            }
            if (p.reference_status >= kNumStatuses) problems.push_back(row + ": unknown reference status");
        }
    }

    // Schedules.
    {
        const std::vector<layout::ScheduleRow> rows = layout::read_table<layout::ScheduleRow>(
            f, layout::kSchedules, layout::schedule_row_type(false, info.schema_version).get());
        RangeCheck features("schedule_features", array_rows(f, layout::kScheduleFeatures), problems);
        RangeCheck text("schedule_text", array_rows(f, layout::kScheduleText), problems);
        RangeCheck timing("timings", array_rows(f, layout::kTimings), problems);
        std::set<std::pair<uint64_t, uint32_t>> seen;
        for (size_t i = 0; i < rows.size(); i++) {
            const layout::ScheduleRow &r = rows[i];
            const std::string row = "schedules row " + std::to_string(i);
            if (r.pipeline_row >= pipelines.size()) {
                problems.push_back(row + ": pipeline row " + std::to_string(r.pipeline_row) + " does not exist");
                continue;
            }
            if (!seen.insert({pipelines[r.pipeline_row].id, r.sample}).second) {
                problems.push_back(row + ": sample " + std::to_string(r.sample) + " of pipeline row " +
                                   std::to_string(r.pipeline_row) + " appears twice");
            }
            if (r.status >= kNumStatuses) problems.push_back(row + ": unknown status code " + std::to_string(r.status));
            if (r.mode > uint8_t(SearchMode::Random)) problems.push_back(row + ": unknown search mode");
            const uint64_t stages = r.features_end - r.features_begin;
            if (features.check(row, r.features_begin, r.features_end) && stages != 0 &&
                stages != pipelines[r.pipeline_row].num_stages) {
                problems.push_back(row + ": " + std::to_string(stages) + " feature rows for a pipeline of " +
                                   std::to_string(pipelines[r.pipeline_row].num_stages) + " stages");
            }
            text.check(row, r.source_begin, r.source_end);
            text.check(row, r.message_begin, r.message_end);
            if (info.schema_version >= 3) text.check(row, r.nest_begin, r.nest_end);
            if (!timing.check(row, r.timings_begin, r.timings_end)) continue;
            const bool ok = Status(r.status) == Status::Ok;
            if (ok) {
                if (r.timings_end == r.timings_begin) {
                    problems.push_back(row + ": status ok without timing samples");
                } else if (r.timings_end <= timings.size()) {
                    const auto [fastest, slowest] = std::minmax_element(timings.begin() + long(r.timings_begin),
                                                                        timings.begin() + long(r.timings_end));
                    if (!std::isfinite(r.runtime_min)) {
                        problems.push_back(row + ": status ok without a runtime");
                    } else if (rounds <= 1 && r.runtime_min != *fastest) {
                        problems.push_back(row + ": runtime_min is not the fastest timing sample");
                    } else if (r.runtime_min < *fastest || r.runtime_min > *slowest) {
                        problems.push_back(row + ": runtime_min lies outside its timing samples");
                    }
                }
            } else if (!std::isnan(r.runtime_min)) {
                problems.push_back(row + ": a failed sample with a runtime");
            }
        }
    }
    return report;
}

} // namespace

} // namespace schedforge::datasets
