#include "generator/spec_codec.h"

#include "common/wire.h"

namespace schedforge::gen {

namespace {

void put_ratio(common::ByteWriter &w, const Ratio &r) {
    w.put<int64_t>(r.num);
    w.put<int64_t>(r.den);
}

Ratio get_ratio(common::ByteReader &r) {
    Ratio x;
    x.num = r.get<int64_t>();
    x.den = r.get<int64_t>();
    return x;
}

// Every enum within its table and every node index within the pipeline, so that the text (and
// so the id) can be computed at all.
bool in_range(const PipelineSpec &spec) {
    const int count = int(spec.nodes.size());
    if (spec.output < 0 || spec.output >= count) return false;
    for (int i = 0; i < count; i++) {
        const Node &n = spec.nodes[size_t(i)];
        if (int(n.kind) >= kNumStageKinds || int(n.type) >= kNumScalarTypes) return false;
        for (int p : n.producers) {
            if (p < 0 || p >= i) return false;
        }
        for (size_t k = 0; k < n.expr.size(); k++) {
            const ExprNode &e = n.expr[k];
            if (int(e.op) > int(ExprOp::Abs) || int(e.type) >= kNumScalarTypes) return false;
            for (int a : e.args) {
                if (a < 0 || size_t(a) >= k) return false; // children precede parents
            }
        }
    }
    return true;
}

} // namespace

std::string encode_spec(const PipelineSpec &spec) {
    common::ByteWriter w;
    w.put<uint64_t>(spec.id());
    w.put<uint32_t>(spec.generator_version);
    w.put<uint64_t>(spec.seed);
    w.put<uint8_t>(spec.dnn ? 1 : 0);
    w.put<int32_t>(spec.dims);
    w.put<int32_t>(spec.output);
    w.put<uint64_t>(spec.nodes.size());
    for (const Node &n : spec.nodes) {
        w.put<uint8_t>(uint8_t(n.kind));
        w.put<uint8_t>(uint8_t(n.type));
        w.put_vector(n.extents);
        w.put<uint8_t>(n.image ? 1 : 0);
        put_ratio(w, n.res_x);
        put_ratio(w, n.res_y);
        w.put_vector(n.producers);
        w.put<uint64_t>(n.params.size());
        for (const auto &[k, v] : n.params) w.put_string(k), w.put_string(v);
        w.put<uint64_t>(n.expr.size());
        for (const ExprNode &e : n.expr) {
            w.put<uint8_t>(uint8_t(e.op));
            w.put<uint8_t>(uint8_t(e.type));
            w.put<int64_t>(e.value);
            w.put_vector(e.args);
        }
    }
    return w.bytes();
}

bool decode_spec(const std::string &bytes, PipelineSpec *out) {
    common::ByteReader r(bytes);
    PipelineSpec spec;
    const auto id = r.get<uint64_t>();
    spec.generator_version = r.get<uint32_t>();
    spec.seed = r.get<uint64_t>();
    spec.dnn = r.get<uint8_t>() != 0;
    spec.dims = r.get<int32_t>();
    spec.output = r.get<int32_t>();
    const auto nodes = r.get<uint64_t>();
    for (uint64_t i = 0; i < nodes && r.ok(); i++) {
        Node n;
        n.kind = StageKind(r.get<uint8_t>());
        n.type = ScalarType(r.get<uint8_t>());
        n.extents = r.get_vector<int64_t>();
        n.image = r.get<uint8_t>() != 0;
        n.res_x = get_ratio(r);
        n.res_y = get_ratio(r);
        n.producers = r.get_vector<int>();
        const auto params = r.get<uint64_t>();
        for (uint64_t k = 0; k < params && r.ok(); k++) {
            std::string key = r.get_string();
            n.params[key] = r.get_string();
        }
        const auto exprs = r.get<uint64_t>();
        for (uint64_t k = 0; k < exprs && r.ok(); k++) {
            ExprNode e;
            e.op = ExprOp(r.get<uint8_t>());
            e.type = ScalarType(r.get<uint8_t>());
            e.value = r.get<int64_t>();
            e.args = r.get_vector<int>();
            n.expr.push_back(std::move(e));
        }
        spec.nodes.push_back(std::move(n));
    }
    // Enums in range first (the text names them by table); then the id covers every field.
    if (!r.ok() || !r.at_end() || !in_range(spec) || spec.id() != id) return false;
    *out = std::move(spec);
    return true;
}

} // namespace schedforge::gen
