#include "harvest/records.h"

#include "common/wire.h"
#include "datasets/reader.h"
#include "featurize/function_dag.h"
#include "featurize/pipeline_features.h"
#include "featurize/schedule_features.h"

#include <limits>

namespace schedforge::harvest {

namespace sf = featurize;
namespace ds = datasets;
namespace ss = sampler;

std::string pipeline_payload(const sf::FunctionDAG &dag) {
    std::vector<std::string> names;
    std::vector<float> features;
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        for (const sf::Stage &stage : dag.nodes[n].stages) {
            names.push_back(stage.name);
            for (double v : sf::compute_pipeline_features(dag, int(n), stage.index).values())
                features.push_back(float(v));
        }
    }
    common::ByteWriter w;
    w.put<uint64_t>(names.size());
    for (const std::string &name : names) w.put_string(name);
    w.put_vector(features);
    return w.bytes();
}

bool read_pipeline_payload(const std::string &payload, ds::PipelineRecord &rec) {
    common::ByteReader in(payload);
    const auto stages = in.get<uint64_t>();
    for (uint64_t i = 0; i < stages && in.ok(); i++) rec.stages.push_back(in.get_string());
    rec.features = in.get_vector<float>();
    if (in.ok()) return true;
    rec.stages.clear(), rec.features.clear();
    return false;
}

std::string encode(const SchedulePayload &p) {
    common::ByteWriter w;
    w.put_string(p.source);
    w.put_string(p.nest);
    w.put<double>(p.cost);
    w.put_vector(p.features);
    w.put_vector(p.terms);
    return w.bytes();
}

bool decode(const std::string &payload, SchedulePayload &p) {
    common::ByteReader in(payload);
    SchedulePayload d;
    d.source = in.get_string();
    d.nest = in.get_string();
    d.cost = in.get<double>();
    d.features = in.get_vector<float>();
    d.terms = in.get_vector<double>();
    if (!in.ok()) return false;
    p = std::move(d);
    return true;
}

std::vector<float> flattened(const std::vector<featurize::StageFeatures> &features) {
    std::vector<float> out;
    for (const featurize::StageFeatures &f : features) {
        for (double v : f.features.values()) out.push_back(float(v));
    }
    return out;
}

ds::Status dataset_status(ss::JobStatus s) {
    switch (s) {
    case ss::JobStatus::Ok: return ds::Status::Ok;
    case ss::JobStatus::CompileError: return ds::Status::CompileError;
    case ss::JobStatus::RuntimeError: return ds::Status::RuntimeError;
    case ss::JobStatus::Crash: return ds::Status::Crash;
    case ss::JobStatus::Timeout: return ds::Status::Timeout;
    case ss::JobStatus::OutOfMemory: return ds::Status::Oom;
    case ss::JobStatus::WrongOutput: return ds::Status::WrongOutput;
    case ss::JobStatus::Cancelled: break;
    }
    return ds::Status::Crash;
}

void record_times(const ss::JobResult &r, ds::ScheduleRecord &s) {
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

} // namespace schedforge::harvest
