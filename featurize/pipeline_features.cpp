// Per-stage pipeline features: an IRVisitor counts the operations of a stage's definition and
// collects its loads in the order FunctionDAG lists call sites (values, then LHS arguments, then
// the predicate; each call before its arguments), so the k-th call to a producer here is the
// k-th Jacobian FunctionDAG recorded for it. Each load and the store are then classified by
// comparing their Jacobians with the written point's. See pipeline_features.h for the rules.
#include "featurize/pipeline_features.h"

#include "featurize/function_dag.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <iterator>
#include <map>
#include <sstream>
#include <utility>

namespace schedforge::featurize {

namespace {

using namespace Halide;
using namespace Halide::Internal;
using OpType = PipelineFeatures::OpType;
using ScalarType = PipelineFeatures::ScalarType;
using AccessClass = PipelineFeatures::AccessClass;
using AccessKind = PipelineFeatures::AccessKind;

// Spelled in names(), in enum order.
const char *const kOpNames[] = {"const",     "cast",        "variable", "param", "add",       "sub",        "mod",
                                "mul",       "div",         "min",      "max",   "eq",        "ne",         "lt",
                                "le",        "and",         "or",       "not",   "select",    "image_call", "func_call",
                                "self_call", "extern_call", "bitwise",  "shift", "intrinsic", "let"};
const char *const kTypeNames[] = {"bool", "uint8", "uint16", "uint32", "uint64", "float32", "float64"};
const char *const kClassNames[] = {"pointwise", "transpose",  "broadcast", "slice", "stencil",
                                   "reduce",    "downsample", "upsample",  "gather"};
const char *const kKindNames[] = {"func", "self", "image", "store"};
static_assert(std::size(kOpNames) == PipelineFeatures::kNumOps);
static_assert(std::size(kTypeNames) == PipelineFeatures::kNumTypes);
static_assert(std::size(kClassNames) == PipelineFeatures::kNumAccessClasses);
static_assert(std::size(kKindNames) == PipelineFeatures::kNumAccessKinds);

ScalarType scalar_type(const Type &t) {
    if (t.is_bool()) return ScalarType::Bool;
    if (t.is_float()) return t.bits() > 32 ? ScalarType::Float64 : ScalarType::Float32;
    if (t.is_handle()) return ScalarType::UInt64;
    switch (t.bits()) {
    case 8: return ScalarType::UInt8;
    case 16: return ScalarType::UInt16;
    case 32: return ScalarType::UInt32;
    default: return ScalarType::UInt64;
    }
}

// Counts the operations of a definition into op_histogram and collects its loads.
class OpCounter : public IRVisitor {
public:
    OpCounter(PipelineFeatures &features, std::string self) : features_(features), self_(std::move(self)) {}
    std::vector<const Call *> loads; // calls to Funcs and images, in FunctionDAG's call-site order

private:
    using IRVisitor::visit;

    void count(OpType op, const Type &t) { features_.ops(op, scalar_type(t))++; }
    template<typename Node>
    void by_result(OpType op, const Node *node) {
        count(op, node->type);
        IRVisitor::visit(node);
    }
    template<typename Node>
    void by_operands(OpType op, const Node *node) {
        count(op, node->a.type());
        IRVisitor::visit(node);
    }

    void visit(const IntImm *op) override { count(OpType::Const, op->type); }
    void visit(const UIntImm *op) override { count(OpType::Const, op->type); }
    void visit(const FloatImm *op) override { count(OpType::Const, op->type); }
    void visit(const StringImm *op) override { count(OpType::Const, op->type); }
    void visit(const Variable *op) override {
        const bool is_param = op->param.defined() || op->image.defined();
        count(is_param ? OpType::Param : OpType::Variable, op->type);
    }
    void visit(const Cast *op) override { by_result(OpType::Cast, op); }
    void visit(const Add *op) override { by_result(OpType::Add, op); }
    void visit(const Sub *op) override { by_result(OpType::Sub, op); }
    void visit(const Mul *op) override { by_result(OpType::Mul, op); }
    void visit(const Div *op) override { by_result(OpType::Div, op); }
    void visit(const Mod *op) override { by_result(OpType::Mod, op); }
    void visit(const Min *op) override { by_result(OpType::Min, op); }
    void visit(const Max *op) override { by_result(OpType::Max, op); }
    void visit(const EQ *op) override { by_operands(OpType::EQ, op); }
    void visit(const NE *op) override { by_operands(OpType::NE, op); }
    void visit(const LT *op) override { by_operands(OpType::LT, op); }
    void visit(const LE *op) override { by_operands(OpType::LE, op); }
    void visit(const GT *op) override { by_operands(OpType::LT, op); }
    void visit(const GE *op) override { by_operands(OpType::LE, op); }
    void visit(const And *op) override { by_result(OpType::And, op); }
    void visit(const Or *op) override { by_result(OpType::Or, op); }
    void visit(const Not *op) override { by_result(OpType::Not, op); }
    void visit(const Select *op) override { by_result(OpType::Select, op); }
    void visit(const Let *op) override {
        count(OpType::Let, op->value.type());
        IRVisitor::visit(op);
    }
    void visit(const Call *op) override {
        count(call_op(*op), op->type);
        if (op->call_type == Call::Halide || op->call_type == Call::Image) loads.push_back(op);
        IRVisitor::visit(op);
    }

    OpType call_op(const Call &op) const {
        switch (op.call_type) {
        case Call::Image: return OpType::ImageCall;
        case Call::Halide: return op.name == self_ ? OpType::SelfCall : OpType::FuncCall;
        case Call::Extern:
        case Call::ExternCPlusPlus:
        case Call::PureExtern: return OpType::ExternCall;
        case Call::Intrinsic:
        case Call::PureIntrinsic: break;
        }
        if (op.is_intrinsic({Call::bitwise_and, Call::bitwise_or, Call::bitwise_xor, Call::bitwise_not})) {
            return OpType::Bitwise;
        }
        if (op.is_intrinsic({Call::shift_left, Call::shift_right})) return OpType::Shift;
        // A same-size reinterpret is a cast that keeps the bits (the generator's wrapping int32
        // arithmetic writes its result so): counted as one, by its result type.
        if (op.is_intrinsic(Call::reinterpret)) return OpType::Cast;
        return OpType::Intrinsic;
    }

    PipelineFeatures &features_;
    const std::string self_; // the Func the stage defines
};

bool is_zero(const JacobianEntry &e) { return e && e->num == 0; }

// d(arg) / d(loop) for coordinates written on a definition's LHS, by forward difference: exact
// for the affine arguments Halide allows there, unknown for data-dependent ones (a scatter).
Jacobian jacobian_of(const std::vector<Expr> &args, const std::vector<Loop> &loops) {
    Jacobian j;
    for (const Expr &arg : args) {
        std::vector<JacobianEntry> row;
        for (const Loop &l : loops) {
            if (!expr_uses_var(arg, l.var)) {
                row.push_back(Rational{0, 1});
                continue;
            }
            const Expr step = simplify(substitute(l.var, Variable::make(Int(32), l.var) + 1, arg) - arg);
            const int64_t *c = as_const_int(step);
            row.push_back(c ? JacobianEntry(Rational{*c, 1}) : std::nullopt);
        }
        j.entries.push_back(std::move(row));
    }
    return j;
}

// What an access is compared with: the point the stage writes.
struct WrittenPoint {
    Jacobian jacobian;      // per moving written dimension
    std::vector<Expr> args; // their coordinates
    // Per loop: the slope of the first written coordinate that moves along it with a known slope
    // (an output loop); none for reduction loops.
    std::vector<JacobianEntry> output_slope;
};

// Coordinates fixed for the whole stage (f(x, 0) = ...) are left out: a load that moves as the
// rest of the written point does reads one point per point written. A data-dependent slope
// (a scatter) makes no output loop: the stage revisits its points along it, as a reduction.
WrittenPoint written_point(const std::vector<Expr> &args, const std::vector<Loop> &loops) {
    WrittenPoint w;
    w.output_slope.assign(loops.size(), std::nullopt);
    const Jacobian j = jacobian_of(args, loops);
    for (size_t d = 0; d < args.size(); d++) {
        const std::vector<JacobianEntry> &row = j.entries[d];
        if (std::all_of(row.begin(), row.end(), is_zero)) continue;
        w.jacobian.entries.push_back(row);
        w.args.push_back(args[d]);
        for (size_t l = 0; l < loops.size(); l++) {
            if (row[l] && row[l]->num != 0 && !w.output_slope[l]) w.output_slope[l] = row[l];
        }
    }
    return w;
}

// Whether two output loops are followed by producer dimensions in the opposite order to the
// written point's dimensions, as in f(x, y) = g(y, x).
bool is_permuted(const Jacobian &j, const WrittenPoint &w) {
    auto first_dim_along = [](const Jacobian &m, size_t loop) {
        for (size_t d = 0; d < m.entries.size(); d++) {
            if (!is_zero(m.entries[d][loop])) return int(d);
        }
        return -1;
    };
    std::vector<std::pair<int, int>> dims; // (producer dimension, written dimension) per output loop
    for (size_t l = 0; l < w.output_slope.size(); l++) {
        const int p = first_dim_along(j, l), s = first_dim_along(w.jacobian, l);
        if (w.output_slope[l] && p >= 0 && s >= 0) dims.emplace_back(p, s);
    }
    for (size_t a = 0; a < dims.size(); a++) {
        for (size_t b = a + 1; b < dims.size(); b++) {
            if ((dims[a].first < dims[b].first && dims[a].second > dims[b].second) ||
                (dims[a].first > dims[b].first && dims[a].second < dims[b].second)) {
                return true;
            }
        }
    }
    return false;
}

using AccessClasses = std::array<bool, PipelineFeatures::kNumAccessClasses>;

// The classes of an access with Jacobian `j` and coordinates `args` (rules at AccessClass).
// `is_tap`: another call to the same producer has the same Jacobian and other constant parts.
AccessClasses classify(const Jacobian &j, const std::vector<Expr> &args, const WrittenPoint &w, bool is_tap) {
    AccessClasses c{};
    auto mark = [&](AccessClass k) { c[size_t(k)] = true; };
    for (const auto &row : j.entries) {
        for (const JacobianEntry &e : row) {
            if (!e) {
                mark(AccessClass::Gather);
                return c;
            }
        }
    }
    const bool follows_written = j.entries == w.jacobian.entries;
    bool shifted = false;
    for (size_t d = 0; follows_written && d < args.size(); d++) {
        shifted |= !is_const_zero(simplify(args[d] - w.args[d]));
    }
    if (follows_written && !shifted && !is_tap) {
        mark(AccessClass::Pointwise);
        return c;
    }
    if (is_tap || shifted) mark(AccessClass::Stencil);
    bool rearranged = is_permuted(j, w);
    for (const auto &row : j.entries) {
        int output_loops = 0, reduction_loops = 0;
        for (size_t l = 0; l < row.size(); l++) {
            if (is_zero(row[l])) continue;
            const JacobianEntry &written_slope = w.output_slope[l];
            (written_slope ? output_loops : reduction_loops)++;
            // Steps per step of the written point along the loop (per iteration of a reduction loop).
            const double relative = row[l]->value() / (written_slope ? written_slope->value() : 1.0);
            rearranged |= written_slope && relative < 0; // mirrored: g(-x)
            if (std::abs(relative) > 1) mark(AccessClass::Downsample);
            if (std::abs(relative) < 1) mark(AccessClass::Upsample);
        }
        if (output_loops == 0 && reduction_loops == 0) mark(AccessClass::Slice);
        if (output_loops > 0 && reduction_loops > 0) mark(AccessClass::Stencil);
        if (output_loops == 0 && reduction_loops > 0) mark(AccessClass::Reduce);
        rearranged |= output_loops > 1; // skewed: g(x + y)
    }
    for (size_t l = 0; l < w.output_slope.size(); l++) {
        if (!w.output_slope[l]) continue;
        int dims = 0;
        for (const auto &row : j.entries) dims += !is_zero(row[l]);
        if (dims == 0) mark(AccessClass::Broadcast);
        rearranged |= dims > 1; // diagonal: g(x, x)
    }
    if (rearranged) mark(AccessClass::Transpose);
    return c;
}

// The Jacobian FunctionDAG recorded for the `site`-th call to `producer` in `stage`; null for a
// call that simplification removes (an index clamped to a one-point range), which reads nothing.
const Jacobian *site_jacobian(const FunctionDAG &dag, const Stage &stage, const std::string &producer, size_t site) {
    const std::vector<Jacobian> *sites = nullptr;
    if (producer == dag.nodes[size_t(stage.node)].name) sites = &stage.self_calls;
    for (int ei : stage.incoming_edges) {
        const Edge &e = dag.edges[size_t(ei)];
        if (dag.nodes[size_t(e.producer)].name == producer) sites = &e.jacobians;
    }
    return sites && site < sites->size() ? &(*sites)[site] : nullptr;
}

// Whether two calls read the same point, comparing their simplified coordinates.
bool same_point(const std::vector<Expr> &a, const std::vector<Expr> &b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const Expr &x, const Expr &y) {
               return equal(simplify(x), simplify(y));
           });
}

void count_access(PipelineFeatures &f, const AccessClasses &classes, AccessKind kind, const Type &t) {
    for (int c = 0; c < PipelineFeatures::kNumAccessClasses; c++) {
        if (classes[size_t(c)]) f.accesses(AccessClass(c), kind, scalar_type(t))++;
    }
}

} // namespace

const std::vector<std::string> &PipelineFeatures::names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const char *op : kOpNames) {
            for (const char *t : kTypeNames) n.push_back(std::string("op.") + op + "." + t);
        }
        for (const char *c : kClassNames) {
            for (const char *k : kKindNames) {
                for (const char *t : kTypeNames) n.push_back(std::string("access.") + c + "." + k + "." + t);
            }
        }
        assert(n.size() == size_t(num_features()) && "names() lists every feature");
        return n;
    }();
    return names;
}

std::array<double, PipelineFeatures::kNumFeatures> PipelineFeatures::values() const {
    std::array<double, kNumFeatures> v{};
    size_t i = 0;
    for (const auto &per_op : op_histogram) {
        for (int64_t x : per_op) v[i++] = double(x);
    }
    for (const auto &per_class : access_histogram) {
        for (const auto &per_kind : per_class) {
            for (int64_t x : per_kind) v[i++] = double(x);
        }
    }
    return v;
}

std::string PipelineFeatures::describe() const {
    std::ostringstream o;
    const auto v = values();
    for (size_t i = 0; i < v.size(); i++) {
        if (v[i] != 0) o << names()[i] << " " << v[i] << "\n";
    }
    return o.str();
}

PipelineFeatures compute_pipeline_features(const FunctionDAG &dag, int node_index, int stage_index) {
    const Node &node = dag.nodes.at(size_t(node_index));
    assert(!node.is_input && "inputs have no stages");
    const Stage &stage = node.stages.at(size_t(stage_index));
    const Definition &def = stage.definition;
    PipelineFeatures f;
    if (node.is_extern) return f; // a C function: nothing Halide can count

    OpCounter counter(f, node.name);
    for (const Expr &e : def.values()) e.accept(&counter);
    for (const Expr &e : def.args()) e.accept(&counter);
    if (def.predicate().defined() && !is_const_one(def.predicate())) def.predicate().accept(&counter);

    std::vector<const Jacobian *> jacobians; // per load
    std::map<std::string, size_t> next_site;
    for (const Call *call : counter.loads) {
        jacobians.push_back(site_jacobian(dag, stage, call->name, next_site[call->name]++));
    }
    const WrittenPoint written = written_point(def.args(), stage.loops);
    for (size_t i = 0; i < counter.loads.size(); i++) {
        const Call *call = counter.loads[i];
        if (!jacobians[i]) continue; // simplified away: no load
        bool is_tap = false;
        for (size_t k = 0; k < counter.loads.size(); k++) {
            is_tap |= jacobians[k] && counter.loads[k]->name == call->name &&
                      jacobians[k]->entries == jacobians[i]->entries && !same_point(counter.loads[k]->args, call->args);
        }
        const AccessKind kind = call->call_type == Call::Image ? AccessKind::LoadImage
                                : call->name == node.name      ? AccessKind::LoadSelf
                                                               : AccessKind::LoadFunc;
        count_access(f, classify(*jacobians[i], call->args, written, is_tap), kind, call->type);
    }

    // The store, compared with the Func's pure variables in order (a pure definition's LHS).
    std::vector<Expr> pure_vars;
    for (const std::string &v : node.func.args()) pure_vars.push_back(Variable::make(Int(32), v));
    const AccessClasses store = classify(jacobian_of(def.args(), stage.loops), def.args(),
                                         written_point(pure_vars, stage.loops), /*is_tap=*/false);
    for (const Expr &v : def.values()) count_access(f, store, AccessKind::Store, v.type());
    return f;
}

} // namespace schedforge::featurize
