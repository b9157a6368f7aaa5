#include "spec.h"

#include "common/rng.h"

#include <cassert>
#include <cstdio>
#include <numeric>
#include <sstream>

namespace schedforge::gen {

namespace {

struct TypeInfo {
    const char *name;
    const char *short_name;
    int bits;
};
constexpr TypeInfo kTypes[kNumScalarTypes] = {
    {"bool", "b", 1},  {"uint8", "u8", 8},   {"uint16", "u16", 16}, {"uint32", "u32", 32},
    {"int8", "i8", 8}, {"int16", "i16", 16}, {"int32", "i32", 32},  {"float32", "f32", 32},
};

constexpr const char *kKindNames[kNumStageKinds] = {
    "input",           "boundary", "pointwise", "stencil",    "conv",      "channel_mix", "pool",
    "activation",      "pad",      "upsample",  "downsample", "matmul",    "scan",        "histogram",
    "histogram_apply", "lut",      "lut_apply", "gather",     "transpose", "concat",      "slice",
};

constexpr const char *kExprOpNames[] = {
    "load", "const", "add", "sub", "mul",    "div",  "min", "max", "absd", "lt",  "le",   "eq",
    "ne",   "and",   "or",  "not", "select", "cast", "exp", "log", "sqrt", "sin", "tanh", "abs",
};
static_assert(sizeof(kExprOpNames) / sizeof(kExprOpNames[0]) == size_t(ExprOp::Abs) + 1);

} // namespace

const char *type_name(ScalarType t) { return kTypes[int(t)].name; }
const char *type_short_name(ScalarType t) { return kTypes[int(t)].short_name; }
int type_bits(ScalarType t) { return kTypes[int(t)].bits; }
bool is_float(ScalarType t) { return t == ScalarType::Float32; }
bool is_signed_int(ScalarType t) { return t == ScalarType::Int8 || t == ScalarType::Int16 || t == ScalarType::Int32; }
bool is_unsigned_int(ScalarType t) {
    return t == ScalarType::UInt8 || t == ScalarType::UInt16 || t == ScalarType::UInt32;
}

bool parse_type_name(std::string_view name, ScalarType *out) {
    for (int i = 0; i < kNumScalarTypes; i++) {
        if (name == kTypes[i].name) {
            *out = ScalarType(i);
            return true;
        }
    }
    return false;
}

const char *kind_name(StageKind k) { return kKindNames[int(k)]; }

bool parse_kind_name(std::string_view name, StageKind *out) {
    for (int i = 0; i < kNumStageKinds; i++) {
        if (name == kKindNames[i]) {
            *out = StageKind(i);
            return true;
        }
    }
    return false;
}

bool is_vocabulary_kind(StageKind k) {
    switch (k) {
    case StageKind::Input:
    case StageKind::Boundary:
    case StageKind::HistogramApply:
    case StageKind::LutApply: return false;
    default: return true;
    }
}

std::vector<StageKind> vocabulary_kinds() {
    std::vector<StageKind> kinds;
    for (int i = 0; i < kNumStageKinds; i++) {
        if (is_vocabulary_kind(StageKind(i))) kinds.push_back(StageKind(i));
    }
    return kinds;
}

const char *expr_op_name(ExprOp op) { return kExprOpNames[int(op)]; }

Ratio Ratio::make(int64_t num, int64_t den) {
    assert(num > 0 && den > 0 && "Ratio must be positive");
    const int64_t g = std::gcd(num, den);
    return Ratio{num / g, den / g};
}

int64_t Node::elements() const {
    int64_t n = 1;
    for (int64_t e : extents) n *= e;
    return n;
}

const std::string &Node::param(const std::string &key) const {
    auto it = params.find(key);
    assert(it != params.end() && "missing stage parameter");
    return it->second;
}

int64_t Node::param_int(const std::string &key) const { return std::stoll(param(key)); }

std::vector<int64_t> Node::param_ints(const std::string &key) const {
    std::vector<int64_t> values;
    std::stringstream in(param(key));
    std::string item;
    while (std::getline(in, item, ',')) values.push_back(std::stoll(item));
    return values;
}

int PipelineSpec::num_stages() const {
    int n = 0;
    for (const Node &node : nodes) n += node.kind != StageKind::Input;
    return n;
}

std::vector<int> PipelineSpec::input_nodes() const {
    std::vector<int> inputs;
    for (size_t i = 0; i < nodes.size(); i++) {
        if (nodes[i].kind == StageKind::Input) inputs.push_back(int(i));
    }
    return inputs;
}

std::string expr_to_text(const std::vector<ExprNode> &expr) {
    std::vector<std::string> text(expr.size());
    for (size_t i = 0; i < expr.size(); i++) {
        const ExprNode &e = expr[i];
        std::string s = std::string("(") + expr_op_name(e.op) + ":" + type_short_name(e.type);
        if (e.op == ExprOp::Load || e.op == ExprOp::Const || e.op == ExprOp::Div) {
            s += " " + std::to_string(e.value);
        }
        for (int a : e.args) s += " " + text[size_t(a)];
        text[i] = s + ")";
    }
    return expr.empty() ? std::string() : text.back();
}

std::string format_id(uint64_t id) {
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)id);
    return buf;
}

std::string PipelineSpec::to_text() const {
    std::ostringstream out;
    out << "schedforge-pipeline generator_version=" << generator_version << " seed=" << seed
        << " flavour=" << (dnn ? "dnn" : "imaging") << " dims=" << dims << "\n";
    for (size_t i = 0; i < nodes.size(); i++) {
        const Node &n = nodes[i];
        out << "n" << i << " " << kind_name(n.kind) << " " << type_name(n.type) << " [";
        for (size_t d = 0; d < n.extents.size(); d++) out << (d ? " " : "") << n.extents[d];
        out << "]";
        if (n.image) {
            out << " res=" << n.res_x.num << "/" << n.res_x.den << "," << n.res_y.num << "/" << n.res_y.den;
        } else {
            out << " aux";
        }
        if (!n.producers.empty()) {
            out << " <-";
            for (int p : n.producers) out << " n" << p;
        }
        for (const auto &[key, value] : n.params) out << " " << key << "=" << value;
        if (!n.expr.empty()) out << " expr=" << expr_to_text(n.expr);
        out << "\n";
    }
    out << "output n" << output << "\n";
    return out.str();
}

uint64_t PipelineSpec::id() const {
    const std::string text = to_text();
    return common::mix64(common::fnv1a64(text.data(), text.size()));
}

} // namespace schedforge::gen
