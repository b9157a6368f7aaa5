#include "datagen/records.h"

#include "common/wire.h"
#include "datasets/reader.h"
#include "featurize/function_dag.h"
#include "featurize/pipeline_features.h"
#include "featurize/schedule_features.h"

#include <limits>

namespace schedforge::datagen {

namespace sf = featurize;
namespace ds = datasets;

namespace {

enum class PayloadKind : uint8_t { Pipeline = 1, Schedule = 2 };

const char *kind_name(PayloadKind k) { return k == PayloadKind::Pipeline ? "pipeline" : "schedule"; }

common::ByteWriter start(PayloadKind kind) {
    common::ByteWriter w;
    w.put<uint8_t>(uint8_t(kind));
    w.put<uint8_t>(kPayloadVersion);
    return w;
}

// Reads the kind and version; "" when they are `kind`'s and this build's.
std::string check_header(common::ByteReader &in, PayloadKind kind, size_t bytes) {
    const auto k = in.get<uint8_t>();
    const auto version = in.get<uint8_t>();
    if (!in.ok())
        return std::string("a ") + kind_name(kind) + " record of " + std::to_string(bytes) + " bytes, cut short";
    if (k != uint8_t(kind)) {
        return std::string("a ") + kind_name(kind) + " record expected, got kind " + std::to_string(int(k));
    }
    if (version != kPayloadVersion) {
        return std::string("a ") + kind_name(kind) + " record of version " + std::to_string(int(version)) +
               ", this build reads version " + std::to_string(int(kPayloadVersion));
    }
    return "";
}

// "" when the record was read whole; else why not.
std::string check_end(const common::ByteReader &in, PayloadKind kind, size_t bytes) {
    if (in.ok() && in.at_end()) return "";
    return std::string("a ") + kind_name(kind) + " record of " + std::to_string(bytes) + " bytes, " +
           (in.ok() ? "with bytes left over" : "cut short");
}

} // namespace

PipelinePayload pipeline_payload(const sf::FunctionDAG &dag) {
    PipelinePayload p;
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        for (const sf::Stage &stage : dag.nodes[n].stages) {
            p.stages.push_back(sf::stable_name(stage.name)); // the same in every process
            for (double v : sf::compute_pipeline_features(dag, int(n), stage.index).values())
                p.features.push_back(float(v));
        }
    }
    return p;
}

std::string encode(const PipelinePayload &p) {
    common::ByteWriter w = start(PayloadKind::Pipeline);
    w.put<uint64_t>(p.stages.size());
    for (const std::string &name : p.stages) w.put_string(name);
    w.put_vector(p.features);
    return w.bytes();
}

std::string decode(const std::string &bytes, PipelinePayload &p) {
    common::ByteReader in(bytes);
    if (std::string why = check_header(in, PayloadKind::Pipeline, bytes.size()); !why.empty()) return why;
    PipelinePayload d;
    const auto stages = in.get<uint64_t>();
    for (uint64_t i = 0; i < stages && in.ok(); i++) d.stages.push_back(in.get_string());
    d.features = in.get_vector<float>();
    if (std::string why = check_end(in, PayloadKind::Pipeline, bytes.size()); !why.empty()) return why;
    p = std::move(d);
    return "";
}

std::string encode(const SchedulePayload &p) {
    common::ByteWriter w = start(PayloadKind::Schedule);
    w.put_string(p.source);
    w.put_string(p.nest);
    w.put<double>(p.cost);
    w.put_vector(p.features);
    w.put_vector(p.terms);
    return w.bytes();
}

std::string decode(const std::string &bytes, SchedulePayload &p) {
    common::ByteReader in(bytes);
    if (std::string why = check_header(in, PayloadKind::Schedule, bytes.size()); !why.empty()) return why;
    SchedulePayload d;
    d.source = in.get_string();
    d.nest = in.get_string();
    d.cost = in.get<double>();
    d.features = in.get_vector<float>();
    d.terms = in.get_vector<double>();
    if (std::string why = check_end(in, PayloadKind::Schedule, bytes.size()); !why.empty()) return why;
    p = std::move(d);
    return "";
}

std::vector<float> flattened(const std::vector<featurize::StageFeatures> &features) {
    std::vector<float> out;
    for (const featurize::StageFeatures &f : features) {
        for (double v : f.features.values()) out.push_back(float(v));
    }
    return out;
}

ds::Status dataset_status(runner::JobStatus s) {
    switch (s) {
    case runner::JobStatus::Ok: return ds::Status::Ok;
    case runner::JobStatus::CompileError: return ds::Status::CompileError;
    case runner::JobStatus::RuntimeError: return ds::Status::RuntimeError;
    case runner::JobStatus::Crash: return ds::Status::Crash;
    case runner::JobStatus::Timeout: return ds::Status::Timeout;
    case runner::JobStatus::OutOfMemory: return ds::Status::Oom;
    case runner::JobStatus::WrongOutput: return ds::Status::WrongOutput;
    case runner::JobStatus::LaunchFailure: return ds::Status::RuntimeError; // no GPU datasets yet: the message says
    case runner::JobStatus::Cancelled: break;
    }
    return ds::Status::Crash;
}

void record_times(const runner::JobResult &r, ds::ScheduleRecord &s) {
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    s.search_seconds = r.prepare_seconds;
    s.compile_seconds = r.compile_seconds;
    s.benchmark_seconds = r.benchmark_seconds;
    s.threads = r.timing.threads;
    s.timings = r.timing.samples;
    const bool ok = s.status == ds::Status::Ok;
    s.runtime_min = ok ? r.timing.label_seconds : kNaN;
    s.runtime_median = ok ? r.timing.median_seconds : kNaN;
}

HeldRecords held_records(const ds::DatasetReader &reader) {
    HeldRecords h;
    const std::vector<ds::PipelineRecord> pipelines = reader.pipeline_summaries();
    for (uint64_t r = 0; r < pipelines.size(); r++) h.pipeline_rows[pipelines[r].id] = r;
    for (const ds::ScheduleRecord &s : reader.schedule_summaries())
        h.samples.insert({pipelines[s.pipeline_row].id, s.sample});
    return h;
}

} // namespace schedforge::datagen
