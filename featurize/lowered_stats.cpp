// LoweredStats: captures Halide's lowered Stmt before parallel loops become closures and
// interprets its control flow on integers. See lowered_stats.h for what is measured and how.
#include "featurize/lowered_stats.h"

#include "featurize/schedule_features.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace schedforge::featurize {

namespace {

using namespace Halide;
using namespace Halide::Internal;

// ---- values ----

// One lane of a value: an integer (wrapped to its type's bits) or a float.
struct Val {
    bool is_float = false;
    int64_t i = 0;
    double f = 0;
    double as_double() const { return is_float ? f : double(i); }
    bool truth() const { return is_float ? f != 0 : i != 0; }
};

Val int_val(int64_t i) { return Val{false, i, 0}; }
Val float_val(double f) { return Val{true, 0, f}; }

// Why an expression cannot be evaluated; thrown inside the evaluator, caught at its entry points.
struct NotComputable {
    std::string why;
};

int64_t wrap(const Type &t, int64_t v) {
    if (t.is_bool()) return v != 0;
    if (t.bits() >= 64) return v;
    if (t.is_uint()) return int64_t(uint64_t(v) & ((uint64_t(1) << t.bits()) - 1));
    const int shift = 64 - t.bits();
    return int64_t(uint64_t(v) << shift) >> shift; // sign-extend
}

Val cast_to(const Type &t, const Val &v) {
    if (t.is_float()) {
        const double d = v.as_double();
        return float_val(t.bits() == 32 ? double(float(d)) : d);
    }
    if (v.is_float) {
        if (!std::isfinite(v.f)) throw NotComputable{"a non-finite float is cast to an integer"};
        return int_val(wrap(t, int64_t(std::trunc(v.f))));
    }
    return int_val(wrap(t, v.i));
}

// Halide's integer division and modulo: Euclidean (the remainder is never negative), x / 0 == 0.
int64_t div_euclid(int64_t a, int64_t b) {
    if (b == 0) return 0;
    int64_t q = a / b;
    if (a % b < 0) q += b > 0 ? -1 : 1;
    return q;
}

int64_t mod_euclid(int64_t a, int64_t b) {
    if (b == 0) return 0;
    const int64_t r = a % b;
    return r < 0 ? r + (b > 0 ? b : -b) : r;
}

// ---- scopes ----

// Let/LetStmt/loop bindings. A binding may be unknown (its value could not be, or need not be,
// computed); reading it then fails with the recorded reason.
class LetScope {
public:
    struct Binding {
        bool known = false;
        Val value;
        std::string why;
    };
    void push(const std::string &name, Binding b) { bindings_[name].push_back(std::move(b)); }
    void pop(const std::string &name) {
        auto it = bindings_.find(name);
        it->second.pop_back();
        if (it->second.empty()) bindings_.erase(it);
    }
    const Binding *find(const std::string &name) const {
        auto it = bindings_.find(name);
        return it == bindings_.end() ? nullptr : &it->second.back();
    }

private:
    std::unordered_map<std::string, std::vector<Binding>> bindings_;
};

class ScopedBinding {
public:
    ScopedBinding(LetScope &scope, const std::string &name, LetScope::Binding b) : scope_(scope), name_(name) {
        scope_.push(name_, std::move(b));
    }
    ~ScopedBinding() { scope_.pop(name_); }
    ScopedBinding(const ScopedBinding &) = delete;
    ScopedBinding &operator=(const ScopedBinding &) = delete;

private:
    LetScope &scope_;
    std::string name_;
};

// "<buffer>.<field>.<d>", the symbol a buffer query (_halide_buffer_get_min(f.buffer, d)...) reads.
std::string buffer_symbol(const Variable *buffer, const std::string &field, int64_t dim) {
    std::string name = buffer->name;
    const std::string suffix = ".buffer";
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        name.resize(name.size() - suffix.size());
    }
    return name + "." + field + "." + std::to_string(dim);
}

// ---- the evaluator ----

// Evaluates one lane of an expression. Vector expressions (store predicates) are evaluated lane
// by lane: a Ramp's lane i is base + i * stride, a Broadcast's every lane is its value.
class Evaluator {
public:
    Evaluator(LetScope &scope, const std::map<std::string, double> &symbols) : scope_(scope), symbols_(symbols) {}

    // The value, or nullopt with `why` set.
    std::optional<Val> try_eval(const Expr &e, std::string &why, int lane = 0) {
        try {
            return eval(e, lane);
        } catch (const NotComputable &n) {
            why = n.why;
            return std::nullopt;
        }
    }

private:
    LetScope &scope_;
    const std::map<std::string, double> &symbols_;

    Val symbol(const std::string &name, const Type &t) {
        auto it = symbols_.find(name);
        if (it == symbols_.end()) throw NotComputable{"'" + name + "' has no binding"};
        return t.is_float() ? float_val(it->second) : int_val(wrap(t, int64_t(std::llround(it->second))));
    }

    // A field ("min", "extent", "stride") of a Buffer baked into the pipeline.
    static std::optional<Val> image_field(const Buffer<> &b, const std::string &field, int64_t d) {
        if (!b.defined() || d < 0 || d >= b.dimensions()) return std::nullopt;
        const auto dim = b.dim(int(d));
        return int_val(field == "min" ? dim.min() : field == "extent" ? dim.extent() : dim.stride());
    }

    Val variable(const Variable *op, int lane) {
        if (op->type.lanes() > 1) throw NotComputable{"vector variable '" + op->name + "' is not tracked"};
        if (const LetScope::Binding *b = scope_.find(op->name)) {
            if (!b->known) throw NotComputable{b->why};
            return b->value;
        }
        if (symbols_.count(op->name)) return symbol(op->name, op->type);
        if (op->param.defined() && !op->param.is_buffer() && op->param.estimate().defined()) {
            return cast_to(op->type, eval(op->param.estimate(), 0));
        }
        if (op->image.defined()) {
            // "<image>.min.<d>" and the like, of a Buffer baked into the pipeline.
            for (const char *field : {"min", "extent", "stride"}) {
                const std::string prefix = op->image.name() + "." + field + ".";
                if (op->name.rfind(prefix, 0) != 0) continue;
                if (auto v = image_field(op->image, field, std::stoll(op->name.substr(prefix.size())))) return *v;
            }
        }
        throw NotComputable{"'" + op->name + "' has no binding"};
    }

    // _halide_buffer_get_<field>(<name>.buffer, d): the symbol, or the baked-in Buffer's field.
    Val buffer_query(const Call *op, const std::string &field) {
        const auto *buffer = op->args[0].as<Variable>();
        const int64_t *d = as_const_int(op->args[1]);
        if (!buffer || !d) throw NotComputable{"cannot evaluate " + expr_text(Expr(op))};
        if (field == "max")
            return int_val(wrap(op->type, buffer_query(op, "min").i + buffer_query(op, "extent").i - 1));
        const std::string name = buffer_symbol(buffer, field, *d);
        if (symbols_.count(name)) return symbol(name, op->type);
        if (auto v = image_field(buffer->image, field, *d)) return *v;
        throw NotComputable{"'" + name + "' has no binding"};
    }

    template<typename Int, typename Float>
    Val arith(const Type &t, const Expr &a, const Expr &b, int lane, Int int_op, Float float_op) {
        const Val x = sub(a, lane), y = sub(b, lane);
        if (t.is_float() || x.is_float || y.is_float) return float_val(float_op(x.as_double(), y.as_double()));
        return int_val(wrap(t, int_op(x.i, y.i)));
    }

    template<typename Cmp>
    Val compare(const Expr &a, const Expr &b, int lane, Cmp cmp) {
        const Val x = sub(a, lane), y = sub(b, lane);
        if (x.is_float || y.is_float) return int_val(cmp(x.as_double(), y.as_double()) ? 1 : 0);
        return int_val(cmp(x.i, y.i) ? 1 : 0);
    }

    // A subexpression: scalars are evaluated once for every lane.
    Val sub(const Expr &e, int lane) { return eval(e, e.type().lanes() == 1 ? 0 : lane); }

    Val call(const Call *op, int lane) {
        auto arg = [&](size_t i) { return sub(op->args[i], lane); };
        if (op->is_intrinsic({Call::likely, Call::likely_if_innermost, Call::promise_clamped,
                              Call::unsafe_promise_clamped, Call::strict_float})) {
            return arg(0);
        }
        if (op->is_intrinsic(Call::return_second)) return arg(1);
        if (op->is_intrinsic(Call::if_then_else)) {
            if (arg(0).truth()) return arg(1);
            if (op->args.size() < 3) throw NotComputable{"if_then_else without an else value"};
            return arg(2);
        }
        const Type &t = op->type;
        auto ints = [&](const char *what) {
            const Val a = arg(0);
            if (a.is_float) throw NotComputable{std::string(what) + " of a float"};
            return a.i;
        };
        if (op->is_intrinsic(Call::bitwise_not)) return int_val(wrap(t, ~ints("bitwise_not")));
        if (op->is_intrinsic(Call::abs)) {
            const Val a = arg(0);
            return a.is_float ? float_val(std::fabs(a.f)) : int_val(wrap(t, a.i < 0 ? -a.i : a.i));
        }
        if (op->is_intrinsic({Call::bitwise_and, Call::bitwise_or, Call::bitwise_xor, Call::shift_left,
                              Call::shift_right, Call::absd, Call::div_round_to_zero, Call::mod_round_to_zero})) {
            const Val a = arg(0), b = arg(1);
            if (op->is_intrinsic(Call::absd)) {
                if (a.is_float || b.is_float) return float_val(std::fabs(a.as_double() - b.as_double()));
                return int_val(wrap(t, a.i > b.i ? a.i - b.i : b.i - a.i));
            }
            if (a.is_float || b.is_float) throw NotComputable{"an integer intrinsic of a float"};
            if (op->is_intrinsic(Call::bitwise_and)) return int_val(wrap(t, a.i & b.i));
            if (op->is_intrinsic(Call::bitwise_or)) return int_val(wrap(t, a.i | b.i));
            if (op->is_intrinsic(Call::bitwise_xor)) return int_val(wrap(t, a.i ^ b.i));
            if (op->is_intrinsic(Call::div_round_to_zero)) return int_val(b.i == 0 ? 0 : wrap(t, a.i / b.i));
            if (op->is_intrinsic(Call::mod_round_to_zero)) return int_val(b.i == 0 ? 0 : wrap(t, a.i % b.i));
            // Shifts by a negative amount shift the other way, as in Halide.
            const bool left = op->is_intrinsic(Call::shift_left) == (b.i >= 0);
            const int64_t n = std::min<int64_t>(b.i < 0 ? -b.i : b.i, 63);
            return int_val(wrap(t, left ? int64_t(uint64_t(a.i) << n) : a.i >> n));
        }
        if (op->name == Call::buffer_is_bounds_query) return int_val(0); // measuring a real run
        if (op->name == Call::buffer_get_min) return buffer_query(op, "min");
        if (op->name == Call::buffer_get_extent) return buffer_query(op, "extent");
        if (op->name == Call::buffer_get_stride) return buffer_query(op, "stride");
        if (op->name == Call::buffer_get_max) return buffer_query(op, "max");
        if (op->call_type == Call::PureExtern && op->args.size() == 1 && t.is_float()) {
            // Float math in bounds, e.g. from a float scale factor: floor_f32, ceil_f64...
            auto named = [&](const char *prefix) { return op->name.rfind(prefix, 0) == 0; };
            const double x = arg(0).as_double();
            if (named("floor_f")) return cast_to(t, float_val(std::floor(x)));
            if (named("ceil_f")) return cast_to(t, float_val(std::ceil(x)));
            if (named("round_f")) return cast_to(t, float_val(std::nearbyint(x))); // to even, as Halide
            if (named("trunc_f")) return cast_to(t, float_val(std::trunc(x)));
            if (named("sqrt_f")) return cast_to(t, float_val(std::sqrt(x)));
        }
        throw NotComputable{"cannot evaluate " + expr_text(Expr(op))};
    }

    Val eval(const Expr &e, int lane) {
        switch (e->node_type) {
        case IRNodeType::IntImm: return int_val(e.as<IntImm>()->value);
        case IRNodeType::UIntImm: return int_val(int64_t(e.as<UIntImm>()->value));
        case IRNodeType::FloatImm: return float_val(e.as<FloatImm>()->value);
        case IRNodeType::Variable: return variable(e.as<Variable>(), lane);
        case IRNodeType::Cast: {
            const auto *op = e.as<Cast>();
            return cast_to(op->type, sub(op->value, lane));
        }
        case IRNodeType::Broadcast: {
            const auto *op = e.as<Broadcast>();
            return eval(op->value, lane % op->value.type().lanes());
        }
        case IRNodeType::Ramp: {
            const auto *op = e.as<Ramp>();
            const int inner = op->base.type().lanes();
            const Val base = eval(op->base, lane % inner), stride = eval(op->stride, lane % inner);
            const int64_t k = lane / inner;
            if (base.is_float || stride.is_float) return float_val(base.as_double() + double(k) * stride.as_double());
            return int_val(wrap(op->type, base.i + k * stride.i));
        }
        case IRNodeType::Add: {
            const auto *op = e.as<Add>();
            return arith(op->type, op->a, op->b, lane, std::plus<int64_t>(), std::plus<double>());
        }
        case IRNodeType::Sub: {
            const auto *op = e.as<Sub>();
            return arith(op->type, op->a, op->b, lane, std::minus<int64_t>(), std::minus<double>());
        }
        case IRNodeType::Mul: {
            const auto *op = e.as<Mul>();
            return arith(op->type, op->a, op->b, lane, std::multiplies<int64_t>(), std::multiplies<double>());
        }
        case IRNodeType::Div: {
            const auto *op = e.as<Div>();
            return arith(op->type, op->a, op->b, lane, div_euclid, [](double a, double b) { return a / b; });
        }
        case IRNodeType::Mod: {
            const auto *op = e.as<Mod>();
            return arith(op->type, op->a, op->b, lane, mod_euclid,
                         [](double a, double b) { return a - b * std::floor(a / b); });
        }
        case IRNodeType::Min: {
            const auto *op = e.as<Min>();
            return arith(
                op->type, op->a, op->b, lane, [](int64_t a, int64_t b) { return std::min(a, b); },
                [](double a, double b) { return std::min(a, b); });
        }
        case IRNodeType::Max: {
            const auto *op = e.as<Max>();
            return arith(
                op->type, op->a, op->b, lane, [](int64_t a, int64_t b) { return std::max(a, b); },
                [](double a, double b) { return std::max(a, b); });
        }
        case IRNodeType::EQ: return compare(e.as<EQ>()->a, e.as<EQ>()->b, lane, std::equal_to<>());
        case IRNodeType::NE: return compare(e.as<NE>()->a, e.as<NE>()->b, lane, std::not_equal_to<>());
        case IRNodeType::LT: return compare(e.as<LT>()->a, e.as<LT>()->b, lane, std::less<>());
        case IRNodeType::LE: return compare(e.as<LE>()->a, e.as<LE>()->b, lane, std::less_equal<>());
        case IRNodeType::GT: return compare(e.as<GT>()->a, e.as<GT>()->b, lane, std::greater<>());
        case IRNodeType::GE: return compare(e.as<GE>()->a, e.as<GE>()->b, lane, std::greater_equal<>());
        case IRNodeType::And: {
            const auto *op = e.as<And>();
            return int_val(sub(op->a, lane).truth() && sub(op->b, lane).truth() ? 1 : 0);
        }
        case IRNodeType::Or: {
            const auto *op = e.as<Or>();
            return int_val(sub(op->a, lane).truth() || sub(op->b, lane).truth() ? 1 : 0);
        }
        case IRNodeType::Not: return int_val(sub(e.as<Not>()->a, lane).truth() ? 0 : 1);
        case IRNodeType::Select: {
            const auto *op = e.as<Select>();
            return sub(op->condition, lane).truth() ? sub(op->true_value, lane) : sub(op->false_value, lane);
        }
        case IRNodeType::Let: {
            const auto *op = e.as<Let>();
            if (op->value.type().lanes() > 1) throw NotComputable{"vector let '" + op->name + "' is not tracked"};
            ScopedBinding bind(scope_, op->name, {true, eval(op->value, 0), ""});
            return sub(op->body, lane);
        }
        case IRNodeType::Call: return call(e.as<Call>(), lane);
        case IRNodeType::Load: throw NotComputable{"it reads memory (" + expr_text(e) + ")"};
        default: throw NotComputable{"cannot evaluate " + expr_text(e)};
        }
    }
};

// ---- which variables decide counts ----

void expr_vars(const Expr &e, std::set<std::string> &out) {
    if (!e.defined()) return;
    class Collect : public IRGraphVisitor {
    public:
        explicit Collect(std::set<std::string> &o) : out(o) {}
        std::set<std::string> &out;
        using IRGraphVisitor::visit;
        void visit(const Variable *op) override { out.insert(op->name); }
    } c(out);
    e.accept(&c);
}

// The free variables of a Stmt that decide what the measurement counts in it: loop bounds, if
// conditions, allocation sizes and conditions, store predicates, and the lets they read. A loop
// whose variable is not among its body's control variables is measured once and multiplied.
class ControlVars {
public:
    const std::set<std::string> &of(const Stmt &s) {
        auto it = memo_.find(s.get());
        if (it != memo_.end()) return it->second;
        std::set<std::string> r = compute(s);
        return memo_.emplace(s.get(), std::move(r)).first->second;
    }

private:
    std::unordered_map<const IRNode *, std::set<std::string>> memo_;

    void add(std::set<std::string> &r, const Stmt &s) {
        if (!s.defined()) return;
        const std::set<std::string> &c = of(s);
        r.insert(c.begin(), c.end());
    }

    std::set<std::string> compute(const Stmt &s) {
        std::set<std::string> r;
        switch (s->node_type) {
        case IRNodeType::LetStmt: {
            const auto *op = s.as<LetStmt>();
            add(r, op->body);
            if (r.erase(op->name)) expr_vars(op->value, r);
            break;
        }
        case IRNodeType::For: {
            const auto *op = s.as<For>();
            add(r, op->body);
            r.erase(op->name);
            expr_vars(op->min, r);
            expr_vars(op->extent, r);
            break;
        }
        case IRNodeType::IfThenElse: {
            const auto *op = s.as<IfThenElse>();
            expr_vars(op->condition, r);
            add(r, op->then_case);
            add(r, op->else_case);
            break;
        }
        case IRNodeType::Allocate: {
            const auto *op = s.as<Allocate>();
            for (const Expr &e : op->extents) expr_vars(e, r);
            expr_vars(op->condition, r);
            add(r, op->body);
            break;
        }
        case IRNodeType::Store: {
            const auto *op = s.as<Store>();
            if (!is_const_one(op->predicate)) expr_vars(op->predicate, r);
            break;
        }
        case IRNodeType::Block: add(r, s.as<Block>()->first), add(r, s.as<Block>()->rest); break;
        case IRNodeType::Fork: add(r, s.as<Fork>()->first), add(r, s.as<Fork>()->rest); break;
        case IRNodeType::ProducerConsumer: add(r, s.as<ProducerConsumer>()->body); break;
        case IRNodeType::Acquire: add(r, s.as<Acquire>()->body); break;
        case IRNodeType::Atomic: add(r, s.as<Atomic>()->body); break;
        case IRNodeType::Prefetch: add(r, s.as<Prefetch>()->body); break;
        case IRNodeType::Realize: add(r, s.as<Realize>()->body); break;
        default: break; // AssertStmt, Evaluate, Free, Provide: nothing counted depends on them
        }
        return r;
    }
};

// ---- the walk ----

std::string stage_name(const std::string &func, int index) {
    return index == 0 ? func : func + ".update(" + std::to_string(index - 1) + ")";
}

class Walker {
public:
    Walker(const FunctionDAG &dag, const std::map<std::string, double> &symbols, const LoweredStatsOptions &options,
           LoweredStats &result)
        : dag_(dag), options_(options), result_(result), eval_(scope_, symbols), funcs_(dag.nodes.size()) {
        for (size_t ni = 0; ni < dag.nodes.size(); ni++) {
            const Node &n = dag.nodes[ni];
            if (n.is_input) continue;
            FuncState &fs = funcs_[ni];
            LoweredFuncStats &f = result_.funcs[n.name];
            f.name = n.name;
            f.is_output = n.is_output;
            fs.stats = &f;
            fs.component_bytes.assign(n.types.size(), 0);
            for (const Stage &st : n.stages) {
                LoweredStageStats &s = result_.stages[stage_name(n.name, st.index)];
                s.func = n.name;
                s.index = st.index;
                fs.stages.push_back(&s);
                fs.stage_points.emplace_back(n.types.size(), 0);
                fs.stage_vectors.emplace_back(n.types.size(), 0);
                fs.stage_scalars.emplace_back(n.types.size(), 0);
            }
            buffers_[n.name] = {int(ni), 0};
            if (n.types.size() > 1) {
                for (size_t c = 0; c < n.types.size(); c++)
                    buffers_[n.name + "." + std::to_string(c)] = {int(ni), int(c)};
            }
        }
    }

    void run(const Stmt &s) {
        walk(s, Ctx{});
        finish();
    }

private:
    // How the statement being walked executes.
    struct Ctx {
        int64_t mult = 1;                // executions per walk (product of multiplied trip counts)
        int64_t walks = 1;               // times it is walked (product of exactly iterated trip counts)
        int64_t outer_parallelism = 1;   // product of the enclosing parallel loops' extents
        const std::string *unknown = {}; // set: counts here are unknown, for this reason
    };
    struct ParallelLoop {
        int node, stage;
        int64_t extent;
    };
    struct FuncState {
        LoweredFuncStats *stats = nullptr;
        std::vector<LoweredStageStats *> stages;
        std::vector<std::vector<int64_t>> stage_points;                 // per stage, per Tuple element
        std::vector<std::vector<int64_t>> stage_vectors, stage_scalars; // likewise (LoweredStageStats)
        std::vector<int64_t> component_bytes;                           // largest allocation per Tuple element
        std::vector<int> loop_stages;                                   // stages of the enclosing loops of this Func
        int last_stage = -1;                                            // in the current production, see store()
        bool last_store_loopless = false;
    };

    const FunctionDAG &dag_;
    const LoweredStatsOptions &options_;
    LoweredStats &result_;
    LetScope scope_;
    Evaluator eval_;
    ControlVars control_;
    std::vector<FuncState> funcs_;
    std::unordered_map<std::string, std::pair<int, int>> buffers_;     // buffer -> (node, Tuple element)
    std::unordered_map<std::string, std::pair<int, int>> loop_owners_; // loop -> (node, stage) or (-1, -1)
    std::vector<ParallelLoop> parallel_;
    std::vector<std::unique_ptr<std::string>> reasons_; // what Ctx::unknown points to
    std::set<std::string> approximated_;

    const std::string *reason(std::string why) {
        reasons_.push_back(std::make_unique<std::string>(std::move(why)));
        return reasons_.back().get();
    }

    static void mark(UnknownMeasures &u, const std::string &measure, const std::string &why) {
        u.emplace(measure, why);
    }

    // "f.s1.r$x" -> (node of f, 1): the longest Func name followed by ".s<digits>.".
    std::pair<int, int> loop_owner(const std::string &loop) {
        auto it = loop_owners_.find(loop);
        if (it != loop_owners_.end()) return it->second;
        std::pair<int, int> owner{-1, -1};
        size_t best = 0;
        for (size_t ni = 0; ni < dag_.nodes.size(); ni++) {
            const Node &n = dag_.nodes[ni];
            if (n.is_input || n.name.size() <= best) continue;
            const std::string prefix = n.name + ".s";
            if (loop.rfind(prefix, 0) != 0) continue;
            size_t p = prefix.size(), q = p;
            while (q < loop.size() && std::isdigit(static_cast<unsigned char>(loop[q]))) q++;
            if (q == p || q >= loop.size() || loop[q] != '.') continue;
            const int stage = std::stoi(loop.substr(p, q - p));
            if (stage >= int(n.stages.size())) continue;
            owner = {int(ni), stage};
            best = n.name.size();
        }
        loop_owners_.emplace(loop, owner);
        return owner;
    }

    const std::pair<int, int> *buffer_owner(const std::string &name) const {
        auto it = buffers_.find(name);
        return it == buffers_.end() ? nullptr : &it->second;
    }

    void walk(const Stmt &s, const Ctx &c) {
        if (!s.defined()) return;
        switch (s->node_type) {
        case IRNodeType::LetStmt: return let_stmt(s.as<LetStmt>(), c);
        case IRNodeType::For: return for_loop(s.as<For>(), c);
        case IRNodeType::ProducerConsumer: return producer_consumer(s.as<ProducerConsumer>(), c);
        case IRNodeType::Allocate: return allocate(s.as<Allocate>(), c);
        case IRNodeType::Store: return store(s.as<Store>(), c);
        case IRNodeType::IfThenElse: return if_then_else(s.as<IfThenElse>(), c);
        case IRNodeType::Block: walk(s.as<Block>()->first, c), walk(s.as<Block>()->rest, c); return;
        case IRNodeType::Fork: walk(s.as<Fork>()->first, c), walk(s.as<Fork>()->rest, c); return;
        case IRNodeType::Acquire: return walk(s.as<Acquire>()->body, c);
        case IRNodeType::Atomic: return walk(s.as<Atomic>()->body, c);
        case IRNodeType::Prefetch: return walk(s.as<Prefetch>()->body, c);
        case IRNodeType::Realize: return walk(s.as<Realize>()->body, c);
        default: return; // AssertStmt, Evaluate, Free, Provide
        }
    }

    void let_stmt(const LetStmt *op, const Ctx &c) {
        LetScope::Binding b;
        // Only values that decide counts are evaluated: the rest (addresses, loaded values) may
        // well not be computable, and need not be.
        if (c.unknown) {
            b.why = *c.unknown;
        } else if (control_.of(op->body).count(op->name) == 0) {
            b.why = "'" + op->name + "' was not evaluated";
        } else if (op->value.type().lanes() > 1) {
            b.why = "vector let '" + op->name + "' is not tracked";
        } else if (std::optional<Val> v = eval_.try_eval(op->value, b.why)) {
            b.known = true;
            b.value = *v;
        } else {
            b.why = "'" + op->name + "' = " + expr_text(op->value) + ": " + b.why;
        }
        ScopedBinding bind(scope_, op->name, std::move(b));
        walk(op->body, c);
    }

    // Halide renames a loop "<name>.rebased" when it shifts its min to zero: key it by the
    // schedule's name.
    static std::string loop_key(const std::string &name) {
        const std::string suffix = ".rebased";
        if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
            return name.substr(0, name.size() - suffix.size());
        }
        return name;
    }

    void for_loop(const For *op, const Ctx &c) {
        LoweredLoopStats &ls = result_.loops[loop_key(op->name)];
        ls.type = op->for_type;
        const auto [node, stage] = loop_owner(op->name);
        FuncState *fs = node >= 0 ? &funcs_[size_t(node)] : nullptr;
        if (fs) {
            fs->loop_stages.push_back(stage);
            fs->last_stage = stage;
            fs->last_store_loopless = false;
        }
        std::string why;
        std::optional<Val> mn, extent;
        if (c.unknown) {
            why = *c.unknown;
        } else if (!(mn = eval_.try_eval(op->min, why)) || !(extent = eval_.try_eval(op->extent, why))) {
            why = "the bounds of loop " + op->name + " (" + expr_text(op->min) + ", " + expr_text(op->extent) +
                  "): " + why;
        }
        if (mn && extent) {
            const int64_t n = extent->i;
            ls.instances += c.mult;
            if (n > 0) ls.iterations += c.mult * n;
            ls.max_extent = std::max(ls.max_extent, n);
            if (n > 0) iterate(op, c, mn->i, n, node, stage);
        } else {
            // Walk the body once to mark what it would have counted as unknown.
            if (ls.unknown.empty()) ls.unknown = why;
            Ctx u = c;
            u.unknown = c.unknown ? c.unknown : reason(why);
            if (op->for_type == ForType::Parallel && node >= 0) {
                mark(funcs_[size_t(node)].stages[size_t(stage)]->unknown, "inner_parallelism", *u.unknown);
            }
            ScopedBinding bind(scope_, op->name, {false, {}, *u.unknown});
            walk(op->body, u);
        }
        if (fs) fs->loop_stages.pop_back();
    }

    void iterate(const For *op, const Ctx &c, int64_t mn, int64_t n, int node, int stage) {
        Ctx inner = c;
        const bool parallel = op->for_type == ForType::Parallel;
        if (parallel) {
            inner.outer_parallelism *= n;
            if (node >= 0) {
                // This stage's parallel loops nested in one production multiply.
                int64_t p = n;
                for (const ParallelLoop &l : parallel_) {
                    if (l.node == node && l.stage == stage) p *= l.extent;
                }
                LoweredStageStats &st = *funcs_[size_t(node)].stages[size_t(stage)];
                st.inner_parallelism = std::max(st.inner_parallelism, p);
            }
            parallel_.push_back({node, stage, n});
        }
        const bool varies = control_.of(op->body).count(op->name) > 0;
        if (varies && c.walks <= options_.max_exact_iterations / n) {
            inner.walks = c.walks * n;
            for (int64_t i = 0; i < n; i++) {
                ScopedBinding bind(scope_, op->name, {true, int_val(mn + i), ""});
                walk(op->body, inner);
            }
        } else {
            if (varies) approximated_.insert(op->name);
            inner.mult = c.mult * n;
            ScopedBinding bind(scope_, op->name, {true, int_val(mn), ""});
            walk(op->body, inner);
        }
        if (parallel) parallel_.pop_back();
    }

    void producer_consumer(const ProducerConsumer *op, const Ctx &c) {
        const std::pair<int, int> *owner = op->is_producer ? buffer_owner(op->name) : nullptr;
        if (owner && owner->second == 0 && op->name == dag_.nodes[size_t(owner->first)].name) {
            FuncState &fs = funcs_[size_t(owner->first)];
            if (c.unknown) {
                mark(fs.stats->unknown, "num_productions", *c.unknown);
                mark(fs.stats->unknown, "outer_parallelism", *c.unknown);
            } else {
                fs.stats->num_productions += c.mult;
                fs.stats->outer_parallelism = std::max(fs.stats->outer_parallelism, c.outer_parallelism);
            }
            for (LoweredStageStats *st : fs.stages) st->inner_parallelism = std::max<int64_t>(st->inner_parallelism, 1);
            fs.last_stage = -1;
            fs.last_store_loopless = false;
        }
        walk(op->body, c);
    }

    // As Halide 14's code generator decides: the stack takes a size known at compile time up to
    // its limit (smaller run-time sizes were already bounded by a constant in lowering).
    static bool on_heap(const Allocate *op) {
        if (op->memory_type != MemoryType::Auto && op->memory_type != MemoryType::Heap) return false;
        if (op->memory_type == MemoryType::Heap) return true;
        int64_t bytes = op->type.bytes();
        for (const Expr &e : op->extents) {
            const int64_t *k = as_const_int(e);
            if (!k) return true;
            bytes *= *k;
        }
        return bytes > int64_t(kStackAllocationBytes);
    }

    void allocate(const Allocate *op, const Ctx &c) {
        if (const std::pair<int, int> *owner = buffer_owner(op->name)) {
            FuncState &fs = funcs_[size_t(owner->first)];
            LoweredFuncStats &f = *fs.stats;
            std::string why;
            std::optional<Val> cond = int_val(1);
            if (c.unknown) {
                why = *c.unknown;
                cond.reset();
            } else if (op->condition.defined() && !is_const_one(op->condition) &&
                       !(cond = eval_.try_eval(op->condition, why))) {
                why = "the condition of allocation " + op->name + ": " + why;
            }
            if (!cond) {
                mark(f.unknown, "num_realizations", why);
                mark(f.unknown, "heap_realizations", why);
                mark(f.unknown, "bytes_at_realization", why);
            } else if (cond->truth()) {
                // Tuple elements are allocated side by side: one realization per element 0.
                if (owner->second == 0) f.num_realizations += c.mult;
                if (owner->second == 0 && on_heap(op)) f.heap_realizations += c.mult;
                int64_t bytes = op->type.bytes();
                for (const Expr &e : op->extents) {
                    std::optional<Val> v = eval_.try_eval(e, why);
                    if (!v) {
                        mark(f.unknown, "bytes_at_realization", "the size of allocation " + op->name + ": " + why);
                        bytes = 0;
                        break;
                    }
                    bytes *= v->i;
                }
                int64_t &b = fs.component_bytes[size_t(owner->second)];
                b = std::max(b, bytes);
            }
        }
        walk(op->body, c);
    }

    // Which stage a store to `fs`'s buffer belongs to; see the limitations in lowered_stats.h.
    int store_stage(FuncState &fs) {
        if (!fs.loop_stages.empty()) {
            fs.last_stage = fs.loop_stages.back();
            fs.last_store_loopless = false;
            return fs.last_stage;
        }
        if (fs.last_stage < 0) {
            fs.last_stage = 0; // the first store of a production is the pure definition's
        } else if (!fs.last_store_loopless) {
            fs.last_stage = std::min<int>(fs.last_stage + 1, int(fs.stages.size()) - 1);
        }
        fs.last_store_loopless = true;
        return fs.last_stage;
    }

    void store(const Store *op, const Ctx &c) {
        const std::pair<int, int> *owner = buffer_owner(op->name);
        if (!owner) return;
        FuncState &fs = funcs_[size_t(owner->first)];
        if (fs.stages.empty()) return;
        const int stage = store_stage(fs);
        LoweredStageStats &st = *fs.stages[size_t(stage)];
        const int lanes = op->value.type().lanes();
        st.vector_size = std::max(st.vector_size, lanes);
        auto unknown = [&](const std::string &why) {
            for (const char *m : {"points_computed_total", "num_vectors", "num_scalars"}) mark(st.unknown, m, why);
        };
        if (c.unknown) return unknown(*c.unknown);
        int64_t active = lanes;
        const bool predicated = op->predicate.defined() && !is_const_one(op->predicate);
        if (predicated) {
            active = 0;
            for (int l = 0; l < lanes; l++) {
                std::string why;
                std::optional<Val> p = eval_.try_eval(op->predicate, why, l);
                if (!p) return unknown("the predicate of a store to " + op->name + ": " + why);
                active += p->truth() ? 1 : 0;
            }
        }
        const size_t si = size_t(stage), e = size_t(owner->second);
        fs.stage_points[si][e] += c.mult * active;
        // A predicated vector runs every lane, whichever are on.
        if (lanes > 1 && !predicated) {
            fs.stage_vectors[si][e] += c.mult;
        } else {
            fs.stage_scalars[si][e] += c.mult * lanes;
        }
    }

    void if_then_else(const IfThenElse *op, const Ctx &c) {
        if (c.unknown) {
            walk(op->then_case, c);
            walk(op->else_case, c);
            return;
        }
        std::string why;
        if (std::optional<Val> cond = eval_.try_eval(op->condition, why)) {
            walk(cond->truth() ? op->then_case : op->else_case, c);
            return;
        }
        Ctx u = c;
        u.unknown = reason("the condition " + expr_text(op->condition) + ": " + why);
        walk(op->then_case, u);
        walk(op->else_case, u);
    }

    void finish() {
        for (size_t ni = 0; ni < dag_.nodes.size(); ni++) {
            const Node &n = dag_.nodes[ni];
            FuncState &fs = funcs_[ni];
            if (!fs.stats) continue;
            LoweredFuncStats &f = *fs.stats;
            if (n.is_output) {
                // Allocated once by the caller, at the size of the estimated output region.
                f.num_realizations = 1;
                int64_t points = 1;
                for (const Span &s : n.region_at_root) points *= s.extent();
                f.bytes_at_realization = points * n.bytes_per_point();
            } else {
                f.bytes_at_realization = 0;
                for (int64_t b : fs.component_bytes) f.bytes_at_realization += b;
            }
            auto most = [](const std::vector<int64_t> &v) { return *std::max_element(v.begin(), v.end()); };
            for (size_t si = 0; si < fs.stages.size(); si++) {
                fs.stages[si]->points_computed_total = most(fs.stage_points[si]);
                fs.stages[si]->num_vectors = most(fs.stage_vectors[si]);
                fs.stages[si]->num_scalars = most(fs.stage_scalars[si]);
            }
        }
        result_.approximated_loops.assign(approximated_.begin(), approximated_.end());
    }
};

// Captures the Stmt a custom lowering pass is given (see lowered_stats.h for why there).
class CaptureStmt : public IRMutator {
public:
    Stmt captured;
    using IRMutator::mutate;
    Stmt mutate(const Stmt &s) override {
        if (!captured.defined()) captured = s;
        return s;
    }
};

std::optional<double> constant(const Expr &e) {
    if (!e.defined()) return std::nullopt;
    const Expr s = simplify(e);
    if (const int64_t *i = as_const_int(s)) return double(*i);
    if (const uint64_t *u = as_const_uint(s)) return double(*u);
    if (const double *f = as_const_float(s)) return *f;
    return std::nullopt;
}

void bind_buffer(std::map<std::string, double> &symbols, const std::string &name,
                 const std::vector<std::pair<int64_t, int64_t>> &min_extent) {
    int64_t stride = 1;
    for (size_t d = 0; d < min_extent.size(); d++) {
        const std::string dim = "." + std::to_string(d);
        symbols[name + ".min" + dim] = double(min_extent[d].first);
        symbols[name + ".extent" + dim] = double(min_extent[d].second);
        symbols[name + ".stride" + dim] = double(stride);
        stride *= min_extent[d].second;
    }
}

std::vector<std::pair<int64_t, int64_t>> min_extents(const Region &region) {
    std::vector<std::pair<int64_t, int64_t>> r;
    for (const Span &s : region) r.emplace_back(s.min, s.extent());
    return r;
}

} // namespace

const LoweredFuncStats &LoweredStats::func(const std::string &name) const {
    auto it = funcs.find(name);
    if (it == funcs.end()) throw std::out_of_range("LoweredStats: no Func '" + name + "'");
    return it->second;
}

const LoweredStageStats &LoweredStats::stage(const std::string &func, int index) const {
    auto it = stages.find(stage_name(func, index));
    if (it == stages.end()) throw std::out_of_range("LoweredStats: no stage " + stage_name(func, index));
    return it->second;
}

std::string LoweredStats::describe() const {
    std::ostringstream o;
    auto unknowns = [&](const UnknownMeasures &u) {
        for (const auto &[measure, why] : u) o << "    unknown " << measure << ": " << why << "\n";
    };
    for (const auto &[name, f] : funcs) {
        o << "func " << name << (f.is_output ? " (output)" : "") << " realizations " << f.num_realizations << " (heap "
          << f.heap_realizations << ") productions " << f.num_productions << " outer_parallelism "
          << f.outer_parallelism << " bytes " << f.bytes_at_realization << "\n";
        unknowns(f.unknown);
    }
    for (const auto &[name, s] : stages) {
        o << "stage " << name << " points " << s.points_computed_total << " inner_parallelism " << s.inner_parallelism
          << " vector_size " << s.vector_size << "\n";
        unknowns(s.unknown);
    }
    for (const auto &[name, l] : loops) {
        o << "loop " << name << (l.type == ForType::Parallel ? " (parallel)" : "") << " instances " << l.instances
          << " iterations " << l.iterations << " max_extent " << l.max_extent << "\n";
        if (!l.unknown.empty()) o << "    unknown: " << l.unknown << "\n";
    }
    for (const std::string &l : approximated_loops) o << "approximated loop " << l << "\n";
    return o.str();
}

std::map<std::string, double> estimate_symbols(const Pipeline &pipeline, const FunctionDAG &dag) {
    std::map<std::string, double> symbols;
    Pipeline p = pipeline; // a handle: infer_arguments is not const
    for (const Argument &arg : p.infer_arguments()) {
        if (!arg.is_buffer()) {
            if (std::optional<double> v = constant(arg.argument_estimates.scalar_estimate)) symbols[arg.name] = *v;
            continue;
        }
        // The estimates first, as FunctionDAG substitutes them for the input's min and extent.
        const Halide::Region &est = arg.argument_estimates.buffer_estimates;
        std::vector<std::pair<int64_t, int64_t>> dims;
        for (const Range &r : est) {
            std::optional<double> mn = constant(r.min), extent = constant(r.extent);
            if (!mn || !extent) break;
            dims.emplace_back(int64_t(*mn), int64_t(*extent));
        }
        if (dims.size() != size_t(arg.dimensions) || est.empty()) {
            const int ni = dag.node_index(arg.name);
            if (ni < 0) continue;
            dims = min_extents(dag.nodes[size_t(ni)].region_at_root);
        }
        bind_buffer(symbols, arg.name, dims);
    }
    for (const Node &n : dag.nodes) {
        if (!n.is_output) continue;
        const auto dims = min_extents(n.region_at_root);
        if (n.types.size() == 1) {
            bind_buffer(symbols, n.name, dims);
        } else {
            for (size_t c = 0; c < n.types.size(); c++) bind_buffer(symbols, n.name + "." + std::to_string(c), dims);
        }
    }
    return symbols;
}

LoweredStats measure_stmt(const Stmt &stmt, const FunctionDAG &dag, const std::map<std::string, double> &symbols,
                          const LoweredStatsOptions &options) {
    LoweredStats result;
    std::ostringstream o;
    o << stmt;
    result.stmt = o.str();
    Walker(dag, symbols, options, result).run(stmt);
    return result;
}

LoweredStats measure_lowered(const Pipeline &pipeline, const FunctionDAG &dag, const Target &target,
                             const LoweredStatsOptions &options) {
    for (const Func &out : pipeline.outputs()) {
        const int ni = dag.node_index(out.name());
        if (ni < 0 || !dag.nodes[size_t(ni)].is_output) {
            throw std::invalid_argument("measure_lowered: output '" + out.name() + "' is not an output of the DAG");
        }
    }
    CaptureStmt capture; // outlives the Pipeline that refers to it
    {
        Pipeline fresh(pipeline.outputs());
        fresh.add_custom_lowering_pass(&capture, [] {});
        fresh.compile_to_module(fresh.infer_arguments(), "lowered_stats", target);
    }
    if (!capture.captured.defined()) throw std::logic_error("measure_lowered: Halide ran no custom lowering pass");
    return measure_stmt(capture.captured, dag, estimate_symbols(pipeline, dag), options);
}

} // namespace schedforge::featurize
