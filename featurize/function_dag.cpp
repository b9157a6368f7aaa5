// FunctionDAG construction. Regions come from Halide's own bounds inference (boxes_required)
// run once per consumer stage over symbolic loop bounds; the search later evaluates them for
// concrete bounds without touching Halide. See function_dag.h.
#include "featurize/function_dag.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

namespace schedforge::featurize {

namespace {

using namespace Halide;
using namespace Halide::Internal;

// ---- estimates ----

// Replaces parameter-derived variables (buffer mins and extents, scalar params) with their
// estimates, so regions and reduction bounds depend on loop bounds alone.
class SubstituteEstimates : public IRMutator {
public:
    bool substituted = false; // some run-time value was replaced by its estimate

private:
    using IRMutator::visit;

    Expr visit(const Variable *op) override {
        if (op->param.defined()) {
            substituted = true;
            return from_param(op, op->param);
        }
        if (op->image.defined()) {
            substituted = true;
            return from_buffer(op->name, op->image);
        }
        return op;
    }

    // "<name>.min.<d>" / "<name>.extent.<d>" -> (is_min, d); false for anything else (strides...).
    static bool parse_buffer_var(const std::string &var, const std::string &buffer, bool &is_min, int &dim) {
        for (const char *field : {".min.", ".extent."}) {
            const std::string prefix = buffer + field;
            if (var.rfind(prefix, 0) == 0) {
                is_min = std::string(field) == ".min.";
                dim = std::stoi(var.substr(prefix.size()));
                return true;
            }
        }
        return false;
    }

    Expr from_param(const Variable *op, const Parameter &p) {
        const std::string &var = op->name;
        if (!p.is_buffer()) {
            if (!p.estimate().defined()) throw UnsupportedPipeline("parameter '" + p.name() + "' has no estimate");
            return cast(op->type, p.estimate()); // the param's own type: a float scale stays a float
        }
        bool is_min = false;
        int dim = 0;
        if (!parse_buffer_var(var, p.name(), is_min, dim)) {
            throw UnsupportedPipeline("the pipeline depends on '" + var + "', which has no estimate");
        }
        const Expr e = is_min ? p.min_constraint_estimate(dim) : p.extent_constraint_estimate(dim);
        if (!e.defined())
            throw UnsupportedPipeline("input '" + p.name() + "' has no estimate for dimension " + std::to_string(dim));
        return e;
    }

    Expr from_buffer(const std::string &var, const Buffer<> &b) {
        bool is_min = false;
        int dim = 0;
        if (!parse_buffer_var(var, b.name(), is_min, dim)) {
            throw UnsupportedPipeline("the pipeline depends on '" + var + "'");
        }
        return is_min ? b.dim(dim).min() : b.dim(dim).extent();
    }
};

Expr with_estimates(const Expr &e) { return e.defined() ? simplify(SubstituteEstimates().mutate(e)) : e; }

// The same, saying whether `e` read a value known only at run time (a parameter, a buffer's field).
Expr with_estimates(const Expr &e, bool &read_run_time) {
    SubstituteEstimates estimates;
    const Expr out = e.defined() ? simplify(estimates.mutate(e)) : e;
    read_run_time = estimates.substituted;
    return out;
}

int64_t const_int(const Expr &e, const std::string &what) {
    const Expr s = simplify(e);
    if (const int64_t *v = as_const_int(s)) return *v;
    if (const uint64_t *u = as_const_uint(s)) return int64_t(*u);
    throw UnsupportedPipeline(what + " is not a constant under the estimates: " + expr_text(s));
}

// ---- symbolic bounds ----

struct Affine {
    std::vector<int64_t> coeffs;
    int64_t constant = 0;
};

int symbol_index(const std::vector<std::string> &symbols, const std::string &name) {
    for (size_t i = 0; i < symbols.size(); i++) {
        if (symbols[i] == name) return int(i);
    }
    return -1;
}

std::optional<Affine> affine_of(const Expr &e, const std::vector<std::string> &symbols) {
    Affine a;
    a.coeffs.assign(symbols.size(), 0);
    if (const int64_t *v = as_const_int(e)) {
        a.constant = *v;
        return a;
    }
    if (const auto *var = e.as<Variable>()) {
        const int i = symbol_index(symbols, var->name);
        if (i < 0) return std::nullopt;
        a.coeffs[size_t(i)] = 1;
        return a;
    }
    auto combine = [&](const Expr &x, const Expr &y, int64_t sign) -> std::optional<Affine> {
        auto ax = affine_of(x, symbols), ay = affine_of(y, symbols);
        if (!ax || !ay) return std::nullopt;
        for (size_t i = 0; i < symbols.size(); i++) ax->coeffs[i] += sign * ay->coeffs[i];
        ax->constant += sign * ay->constant;
        return ax;
    };
    if (const auto *add = e.as<Add>()) return combine(add->a, add->b, 1);
    if (const auto *sub = e.as<Sub>()) return combine(sub->a, sub->b, -1);
    if (const auto *mul = e.as<Mul>()) {
        for (auto [k, x] : {std::pair(mul->a, mul->b), std::pair(mul->b, mul->a)}) {
            if (const int64_t *c = as_const_int(k)) {
                auto ax = affine_of(x, symbols);
                if (!ax) return std::nullopt;
                for (int64_t &co : ax->coeffs) co *= *c;
                ax->constant *= *c;
                return ax;
            }
        }
    }
    if (const auto *c = e.as<Cast>()) {
        if (c->type.is_int() && c->type.bits() >= 32 && c->value.type().is_int()) return affine_of(c->value, symbols);
    }
    return std::nullopt;
}

int64_t floor_div(int64_t a, int64_t b) {
    if (b == 0) return 0; // Halide defines x / 0 as 0
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

int64_t floor_mod(int64_t a, int64_t b) { return b == 0 ? 0 : a - floor_div(a, b) * b; }

// Let-bound values in scope, innermost last. Doubles hold both the integer and the float lets
// (bounds stay far below 2^53).
using LetValues = std::vector<std::pair<std::string, double>>;

const double *let_value(const LetValues &lets, const std::string &name) {
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
        if (it->first == name) return &it->second;
    }
    return nullptr;
}

int64_t eval_expr(const Expr &e, const std::vector<std::string> &symbols, const std::vector<int64_t> &values,
                  LetValues &lets);

// A floating-point subexpression of an integer bound (a float parameter scaling an index).
double eval_float(const Expr &e, const std::vector<std::string> &symbols, const std::vector<int64_t> &values,
                  LetValues &lets) {
    if (!e.type().is_float()) return double(eval_expr(e, symbols, values, lets));
    auto ev = [&](const Expr &x) { return eval_float(x, symbols, values, lets); };
    if (const double *v = as_const_float(e)) return *v;
    if (const auto *var = e.as<Variable>()) {
        if (const double *v = let_value(lets, var->name)) return *v;
    }
    if (const auto *op = e.as<Let>()) {
        lets.emplace_back(op->name, ev(op->value));
        const double r = ev(op->body);
        lets.pop_back();
        return r;
    }
    if (const auto *op = e.as<Cast>()) return ev(op->value);
    if (const auto *op = e.as<Add>()) return ev(op->a) + ev(op->b);
    if (const auto *op = e.as<Sub>()) return ev(op->a) - ev(op->b);
    if (const auto *op = e.as<Mul>()) return ev(op->a) * ev(op->b);
    if (const auto *op = e.as<Div>()) return ev(op->a) / ev(op->b);
    if (const auto *op = e.as<Min>()) return std::min(ev(op->a), ev(op->b));
    if (const auto *op = e.as<Max>()) return std::max(ev(op->a), ev(op->b));
    if (const auto *op = e.as<Select>()) {
        return eval_expr(op->condition, symbols, values, lets) ? ev(op->true_value) : ev(op->false_value);
    }
    if (const auto *op = e.as<Call>()) {
        // Halide's float math intrinsics, as parameters' estimates meet them (a radius of 3 sigma,
        // a level count of log2(size)): "<name>_f32" or "<name>_f64".
        static const std::map<std::string, double (*)(double)> unary = {
            {"floor", [](double a) { return std::floor(a); }},     {"ceil", [](double a) { return std::ceil(a); }},
            {"round", [](double a) { return std::nearbyint(a); }}, {"trunc", [](double a) { return std::trunc(a); }},
            {"sqrt", [](double a) { return std::sqrt(a); }},       {"exp", [](double a) { return std::exp(a); }},
            {"log", [](double a) { return std::log(a); }},         {"abs", [](double a) { return std::abs(a); }},
            {"sin", [](double a) { return std::sin(a); }},         {"cos", [](double a) { return std::cos(a); }},
            {"tan", [](double a) { return std::tan(a); }},         {"tanh", [](double a) { return std::tanh(a); }}};
        const std::string base = op->name.size() > 4 ? op->name.substr(0, op->name.size() - 4) : op->name;
        const bool float_intrinsic = op->name.size() > 4 && (op->name.compare(op->name.size() - 4, 4, "_f32") == 0 ||
                                                             op->name.compare(op->name.size() - 4, 4, "_f64") == 0);
        if (float_intrinsic && op->args.size() == 1) {
            if (auto f = unary.find(base); f != unary.end()) return f->second(ev(op->args[0]));
        }
        if (float_intrinsic && op->args.size() == 2 && base == "pow") return std::pow(ev(op->args[0]), ev(op->args[1]));
        if (op->is_intrinsic(Call::abs) && op->args.size() == 1) return std::abs(ev(op->args[0]));
    }
    throw UnsupportedPipeline("cannot evaluate region bound " + expr_text(e));
}

// Walks an integer expression over the symbols; throws on anything else.
int64_t eval_expr(const Expr &e, const std::vector<std::string> &symbols, const std::vector<int64_t> &values,
                  LetValues &lets) {
    auto ev = [&](const Expr &x) { return eval_expr(x, symbols, values, lets); };
    // Comparisons may compare floats.
    auto cmp = [&](const Expr &a, const Expr &b, auto op) -> int64_t {
        if (a.type().is_float()) return op(eval_float(a, symbols, values, lets), eval_float(b, symbols, values, lets));
        return op(ev(a), ev(b));
    };
    if (const int64_t *v = as_const_int(e)) return *v;
    if (const uint64_t *u = as_const_uint(e)) return int64_t(*u);
    if (const auto *var = e.as<Variable>()) {
        if (const double *v = let_value(lets, var->name)) return int64_t(*v);
        const int i = symbol_index(symbols, var->name);
        if (i < 0) throw UnsupportedPipeline("a region depends on '" + var->name + "'");
        return values[size_t(i)];
    }
    if (const auto *op = e.as<Add>()) return ev(op->a) + ev(op->b);
    if (const auto *op = e.as<Sub>()) return ev(op->a) - ev(op->b);
    if (const auto *op = e.as<Mul>()) return ev(op->a) * ev(op->b);
    if (const auto *op = e.as<Div>()) return floor_div(ev(op->a), ev(op->b));
    if (const auto *op = e.as<Mod>()) return floor_mod(ev(op->a), ev(op->b));
    if (const auto *op = e.as<Min>()) return std::min(ev(op->a), ev(op->b));
    if (const auto *op = e.as<Max>()) return std::max(ev(op->a), ev(op->b));
    if (const auto *op = e.as<Select>()) return ev(op->condition) ? ev(op->true_value) : ev(op->false_value);
    if (const auto *op = e.as<EQ>()) return cmp(op->a, op->b, std::equal_to<>());
    if (const auto *op = e.as<NE>()) return cmp(op->a, op->b, std::not_equal_to<>());
    if (const auto *op = e.as<LT>()) return cmp(op->a, op->b, std::less<>());
    if (const auto *op = e.as<LE>()) return cmp(op->a, op->b, std::less_equal<>());
    if (const auto *op = e.as<GT>()) return cmp(op->a, op->b, std::greater<>());
    if (const auto *op = e.as<GE>()) return cmp(op->a, op->b, std::greater_equal<>());
    if (const auto *op = e.as<And>()) return ev(op->a) && ev(op->b);
    if (const auto *op = e.as<Or>()) return ev(op->a) || ev(op->b);
    if (const auto *op = e.as<Not>()) return !ev(op->a);
    if (const auto *op = e.as<Cast>()) {
        if (op->type.is_int_or_uint() && op->value.type().is_float()) {
            return int64_t(std::trunc(eval_float(op->value, symbols, values, lets))); // Halide truncates
        }
        if (op->type.is_int_or_uint()) return ev(op->value);
    }
    if (const auto *op = e.as<Call>()) {
        // Integer intrinsics that indices use (x >> 1, x & 7, abs) and the promises that wrap
        // clamped indices.
        const std::vector<Expr> &a = op->args;
        if (op->is_intrinsic(
                {Call::likely, Call::likely_if_innermost, Call::promise_clamped, Call::unsafe_promise_clamped}))
            return ev(a[0]);
        if (op->is_intrinsic(Call::abs)) return std::abs(ev(a[0]));
        if (op->is_intrinsic(Call::shift_left)) return ev(a[0]) << ev(a[1]);
        if (op->is_intrinsic(Call::shift_right)) return ev(a[0]) >> ev(a[1]);
        if (op->is_intrinsic(Call::bitwise_and)) return ev(a[0]) & ev(a[1]);
        if (op->is_intrinsic(Call::bitwise_or)) return ev(a[0]) | ev(a[1]);
        if (op->is_intrinsic(Call::bitwise_xor)) return ev(a[0]) ^ ev(a[1]);
    }
    if (const auto *op = e.as<Let>()) {
        lets.emplace_back(op->name, op->value.type().is_float() ? eval_float(op->value, symbols, values, lets)
                                                                : double(ev(op->value)));
        const int64_t r = ev(op->body);
        lets.pop_back();
        return r;
    }
    throw UnsupportedPipeline("cannot evaluate region bound " + expr_text(e));
}

// ---- derivatives (Jacobian entries) ----

// through_clamps: min / max against a bound that does not move with `var` (a clamp), and
// likely(), take their argument's slope (Jacobian::steady_entries).
JacobianEntry derivative(const Expr &e, const std::string &var, bool through_clamps) {
    if (!expr_uses_var(e, var)) return Rational{0, 1};
    if (through_clamps) {
        Expr a, b;
        if (const auto *op = e.as<Min>()) a = op->a, b = op->b;
        if (const auto *op = e.as<Max>()) a = op->a, b = op->b;
        if (a.defined()) {
            if (!expr_uses_var(b, var)) return derivative(a, var, true);
            if (!expr_uses_var(a, var)) return derivative(b, var, true);
            return std::nullopt;
        }
        if (const auto *op = e.as<Call>(); op && op->is_intrinsic({Call::likely, Call::likely_if_innermost}))
            return derivative(op->args[0], var, true);
    }
    if (const auto *v = e.as<Variable>()) return Rational{v->name == var ? 1 : 0, 1};
    auto add = [](JacobianEntry a, JacobianEntry b, int64_t sign) -> JacobianEntry {
        if (!a || !b) return std::nullopt;
        return Rational{a->num * b->den + sign * b->num * a->den, a->den * b->den};
    };
    if (const auto *op = e.as<Add>())
        return add(derivative(op->a, var, through_clamps), derivative(op->b, var, through_clamps), 1);
    if (const auto *op = e.as<Sub>())
        return add(derivative(op->a, var, through_clamps), derivative(op->b, var, through_clamps), -1);
    if (const auto *op = e.as<Mul>()) {
        for (auto [k, x] : {std::pair(op->a, op->b), std::pair(op->b, op->a)}) {
            if (const int64_t *c = as_const_int(k)) {
                JacobianEntry d = derivative(x, var, through_clamps);
                if (d) d->num *= *c;
                return d;
            }
        }
        return std::nullopt;
    }
    if (const auto *op = e.as<Div>()) {
        // Integer division by a constant: the average slope (x / 2 moves half a step per step).
        if (const int64_t *c = as_const_int(op->b)) {
            JacobianEntry d = derivative(op->a, var, through_clamps);
            if (d && *c != 0) d->den *= *c;
            return *c != 0 ? d : std::nullopt;
        }
        return std::nullopt;
    }
    if (const auto *op = e.as<Cast>()) return derivative(op->value, var, through_clamps);
    return std::nullopt; // min/max (but clamps, through_clamps), select, calls of the loop variable
}

Rational reduced(Rational r) {
    const int64_t g = std::gcd(r.num, r.den);
    if (g > 1) r.num /= g, r.den /= g;
    if (r.den < 0) r.num = -r.num, r.den = -r.den;
    return r;
}

// Every call to a Func or an input image in a definition (values, args, predicate), in order.
class CollectCalls : public IRVisitor {
public:
    std::vector<const Call *> calls;
    void collect(const Definition &def) {
        for (const Expr &e : def.values()) e.accept(this);
        for (const Expr &e : def.args()) e.accept(this);
        if (def.predicate().defined()) def.predicate().accept(this);
    }

private:
    using IRVisitor::visit;
    void visit(const Call *op) override {
        if (op->call_type == Call::Halide || op->call_type == Call::Image) calls.push_back(op);
        IRVisitor::visit(op);
    }
};

// Every call to `name` in a definition, in call-site order, with enclosing let-bound variables
// substituted (a let variable is not a constant: its value may move with the loops), and whether
// it repeats an earlier call of the same expression: the same value at the same simplified
// coordinates, which Halide's common-subexpression elimination loads once (harris's response
// names each box sum two or three times: 72 call sites a point, 27 loads). Halide stores the
// values of a Tuple one by one and finds common subexpressions per store, so a call repeated
// in two values is loaded twice (nl_means's four sums each evaluate the weight: counted once,
// the search inlined it, and the pipeline ran 2.2x slower).
struct CallSite {
    std::vector<Expr> args;
    bool repeat = false;
};
std::vector<CallSite> call_sites_of(const Definition &def, const std::string &name) {
    std::vector<Expr> exprs = def.values(); // kept alive while the collected Call pointers are read
    exprs.insert(exprs.end(), def.args().begin(), def.args().end());
    if (def.predicate().defined()) exprs.push_back(def.predicate());
    std::vector<CallSite> found;
    for (Expr &e : exprs) {
        e = substitute_in_all_lets(e);
        CollectCalls c;
        e.accept(&c);
        std::vector<std::pair<int, std::vector<Expr>>> seen; // this expression's: value, coordinates
        for (const Call *call : c.calls) {
            if (call->name != name) continue;
            std::vector<Expr> args;
            for (const Expr &a : call->args) args.push_back(simplify(a));
            const bool repeat = std::any_of(seen.begin(), seen.end(), [&](const auto &v) {
                return v.first == call->value_index &&
                       std::equal(args.begin(), args.end(), v.second.begin(),
                                  [](const Expr &a, const Expr &b) { return equal(a, b); });
            });
            if (!repeat) seen.emplace_back(call->value_index, args);
            found.push_back({call->args, repeat});
        }
    }
    return found;
}

std::string type_text(const Type &t) {
    std::ostringstream o;
    o << t;
    return o.str();
}

} // namespace

// ---- SymbolicBound ----

SymbolicBound::SymbolicBound(const Expr &e, const std::vector<std::string> &symbols)
    : expr_(simplify(e)), symbols_(symbols) {
    if (auto a = affine_of(expr_, symbols)) {
        affine_ = true;
        coeffs_ = std::move(a->coeffs);
        constant_ = a->constant;
    } else {
        // Fail now, not in the middle of a search, if the expression cannot be evaluated.
        LetValues lets;
        eval_expr(expr_, symbols_, std::vector<int64_t>(symbols_.size(), 0), lets);
    }
    for (size_t i = 0; i < symbols_.size() && i / 2 < 64; i++) {
        const bool reads = affine_ ? coeffs_[i] != 0 : Halide::Internal::expr_uses_var(expr_, symbols_[i]);
        if (reads) loops_read_ |= uint64_t(1) << (i / 2);
    }
}

int64_t SymbolicBound::eval(const Region &loop_bounds) const {
    if (affine_) { // symbol 2i is loop i's min, 2i + 1 its max: no symbol vector to build
        int64_t r = constant_;
        for (size_t i = 0; i < loop_bounds.size(); i++) {
            r += coeffs_[2 * i] * loop_bounds[i].min + coeffs_[2 * i + 1] * loop_bounds[i].max;
        }
        return r;
    }
    std::vector<int64_t> symbols(2 * loop_bounds.size());
    for (size_t i = 0; i < loop_bounds.size(); i++) {
        symbols[2 * i] = loop_bounds[i].min;
        symbols[2 * i + 1] = loop_bounds[i].max;
    }
    LetValues lets;
    return eval_expr(expr_, symbols_, symbols, lets);
}

void eval_region(const SymbolicRegion &region, const Region &loop_bounds, Region &out) {
    out.resize(region.size());
    for (size_t d = 0; d < region.size(); d++) {
        out[d] = {region[d].first.eval(loop_bounds), region[d].second.eval(loop_bounds)};
    }
}

void Edge::required(const Region &consumer_loop_bounds, Region &out) const {
    eval_region(region, consumer_loop_bounds, out);
}

Region Edge::required(const Region &consumer_loop_bounds) const {
    Region r;
    required(consumer_loop_bounds, r);
    return r;
}

// ---- UseCondition ----

namespace {
// An expression as lowering leaves it for the skip-stages pass: common subexpressions are let
// outside every select (a Func read twice in one branch is then read unconditionally).
Expr for_use_conditions(const Expr &e) {
    return common_subexpression_elimination(with_estimates(substitute_in_all_lets(e)));
}
bool has_select(const Definition &def) {
    class Finder : public IRVisitor {
        using IRVisitor::visit;
        void visit(const Halide::Internal::Select *) override { found = true; }

    public:
        bool found = false;
    } finder;
    def.accept(&finder);
    return finder.found;
}
// The symbols of a stage's loop bounds: symbol 2i is loop i's min, 2i + 1 its max.
std::vector<std::string> loop_bound_symbols(const std::vector<Loop> &loops) {
    std::vector<std::string> symbols;
    for (const Loop &l : loops) {
        symbols.push_back("sf$" + l.var + ".min");
        symbols.push_back("sf$" + l.var + ".max");
    }
    return symbols;
}
} // namespace

struct UseCondition::Node {
    enum Kind { Always, Or, Select } kind = Always;
    SymbolicBound cond;               // Select: the condition over the loops' mins (symbol 2i)
    std::vector<size_t> cond_loops;   // Select: the loops the condition reads
    bool cond_varies = false;         // Select: reads a Func, or cannot be evaluated: never decides
    std::shared_ptr<const Node> a, b; // Or: either; Select: the true and false branch (null: no read)
};

namespace {

using UseNode = std::shared_ptr<const UseCondition::Node>;

UseNode use_always() {
    static const UseNode always = std::make_shared<UseCondition::Node>();
    return always;
}

bool is_always(const UseNode &n) { return n && n->kind == UseCondition::Node::Always; }

UseNode use_or(UseNode a, UseNode b) {
    if (!a || is_always(b)) return b;
    if (!b || is_always(a)) return a;
    auto n = std::make_shared<UseCondition::Node>();
    n->kind = UseCondition::Node::Or;
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
}

// Builds the read condition of one producer the way Halide's skip-stages pass finds its
// predicate: a call reads it; a select reads it under its condition, or in its condition.
class UseFinder : public IRVisitor {
public:
    UseFinder(const std::string &producer, const std::vector<Loop> &loops)
        : producer_(producer), loops_(loops), symbols_(loop_bound_symbols(loops)) {}
    UseNode found; // what the expressions visited so far read

private:
    using IRVisitor::visit;

    void visit(const Call *op) override {
        if ((op->call_type == Call::Halide || op->call_type == Call::Image) && op->name == producer_)
            found = use_always();
        IRVisitor::visit(op);
    }

    void visit(const Let *op) override {
        op->value.accept(this);
        lets_.emplace_back(op->name, op->value);
        op->body.accept(this);
        lets_.pop_back();
    }

    void visit(const Halide::Internal::Select *op) override {
        UseNode before = std::move(found);
        auto visit_alone = [&](const Expr &e) {
            found = nullptr;
            e.accept(this);
            return std::move(found);
        };
        UseNode in_cond = visit_alone(op->condition);
        UseNode t = visit_alone(op->true_value), f = visit_alone(op->false_value);
        UseNode sel;
        if (is_always(t) && is_always(f)) {
            sel = use_always();
        } else if (t || f) {
            auto n = std::make_shared<UseCondition::Node>();
            n->kind = UseCondition::Node::Select;
            n->a = std::move(t);
            n->b = std::move(f);
            condition(op->condition, *n);
            sel = std::move(n);
        }
        found = use_or(std::move(before), use_or(std::move(in_cond), std::move(sel)));
    }

    // The condition over the loops' mins: where it decides, every loop it reads has one iteration.
    void condition(Expr cond, UseCondition::Node &n) const {
        for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) cond = substitute(it->first, it->second, cond);
        CollectCalls calls;
        cond.accept(&calls);
        const bool reads_func = !calls.calls.empty();
        std::map<std::string, Expr> at_min;
        for (size_t l = 0; l < loops_.size(); l++) {
            if (!expr_uses_var(cond, loops_[l].var)) continue;
            n.cond_loops.push_back(l);
            at_min[loops_[l].var] = Variable::make(Int(32), symbols_[2 * l]);
        }
        try {
            if (!reads_func) n.cond = SymbolicBound(substitute(at_min, cond), symbols_);
            n.cond_varies = reads_func;
        } catch (const UnsupportedPipeline &) {
            n.cond_varies = true; // e.g. float arithmetic the evaluator does not know
        }
    }

    const std::string &producer_;
    const std::vector<Loop> &loops_;
    std::vector<std::string> symbols_;
    std::vector<std::pair<std::string, Expr>> lets_; // enclosing lets, outermost first
};

bool eval_use(const UseCondition::Node *n, const Region &loop_bounds) {
    if (!n) return false;
    switch (n->kind) {
    case UseCondition::Node::Always: return true;
    case UseCondition::Node::Or: return eval_use(n->a.get(), loop_bounds) || eval_use(n->b.get(), loop_bounds);
    case UseCondition::Node::Select: break;
    }
    const bool decides = !n->cond_varies && std::all_of(n->cond_loops.begin(), n->cond_loops.end(),
                                                        [&](size_t l) { return loop_bounds[l].extent() == 1; });
    if (!decides) return eval_use(n->a.get(), loop_bounds) || eval_use(n->b.get(), loop_bounds);
    return eval_use(n->cond.eval(loop_bounds) ? n->a.get() : n->b.get(), loop_bounds);
}

} // namespace

UseCondition UseCondition::of(const std::vector<Expr> &exprs, const std::string &producer,
                              const std::vector<Loop> &loops) {
    UseFinder finder(producer, loops);
    for (const Expr &e : exprs) {
        if (e.defined()) e.accept(&finder);
    }
    UseCondition c;
    if (finder.found && !is_always(finder.found)) c.root_ = std::move(finder.found);
    return c;
}

bool UseCondition::eval(const Region &loop_bounds) const { return !root_ || eval_use(root_.get(), loop_bounds); }

std::string expr_text(const Halide::Expr &e) {
    std::ostringstream o;
    o << e;
    return o.str();
}

int64_t region_points(const Region &r) {
    int64_t p = 1;
    for (const Span &s : r) p *= std::max<int64_t>(s.extent(), 0);
    return p;
}

void unite(Region &acc, const Region &r) {
    if (acc.empty()) {
        acc = r;
        return;
    }
    for (size_t d = 0; d < r.size(); d++) {
        acc[d].min = std::min(acc[d].min, r[d].min);
        acc[d].max = std::max(acc[d].max, r[d].max);
    }
}

Region Stage::loops_over(const Region &region) const {
    Region b(loops.size());
    for (size_t l = 0; l < loops.size(); l++) {
        b[l] = loops[l].dim >= 0 ? region[size_t(loops[l].dim)] : loop_bounds_at_root[l];
    }
    return b;
}

void Node::add_update_footprints(Region &region, bool writes) const {
    if (stages.size() < 2) return;
    Region grown = region, footprint;
    for (size_t s = 1; s < stages.size(); s++) {
        const Region loops = stages[s].loops_over(region);
        if (!stages[s].self_reads.empty()) {
            eval_region(stages[s].self_reads, loops, footprint);
            unite(grown, footprint);
        }
        if (writes) {
            eval_region(stages[s].writes, loops, footprint);
            unite(grown, footprint);
        }
    }
    region = std::move(grown);
}

double Stage::library_calls_per_point() const {
    double calls = 0;
    for (const DependentCalls &g : library_calls) calls += g.per_point;
    return calls;
}

int64_t Node::bytes_per_point() const {
    int64_t b = 0;
    for (const Type &t : types) b += t.bytes();
    return b;
}

namespace {

// Bytes a strided-read Func's innermost storage is padded to: the widest x86 vector (AVX-512),
// so that a vector load at any row's start is aligned.
constexpr int kStridedStorageAlignmentBytes = 64;

// The widest constant stride (elements) at which Halide 14 loads a vector as a wider dense one.
constexpr int64_t kDenseLoadMaxStride = 4;

// kStridedStorageAlignmentBytes in elements of the node's narrowest type.
int64_t aligned_row(const Node &node) {
    int bytes = kStridedStorageAlignmentBytes;
    for (const Type &t : node.types) bytes = std::min(bytes, std::max(1, t.bytes()));
    return kStridedStorageAlignmentBytes / bytes;
}

} // namespace

int64_t Node::storage_padding(const Region &region) const {
    if (storage_alignment > 1) return storage_alignment;
    // The stride of each outer dimension: the product of the extents inside it.
    int64_t stride = 1;
    for (size_t d = 0; d + 1 < region.size(); d++) {
        stride *= std::max<int64_t>(1, region[d].extent());
        if (stride > kDenseLoadMaxStride) break;
        if (stride >= 2 && region[d + 1].extent() > 1) return aligned_row(*this);
    }
    return 1;
}

Region Node::stored_region(Region region) const {
    const int64_t padding = storage_padding(region);
    if (padding <= 1 || region.empty()) return region;
    const int64_t extent = (region[0].extent() + padding - 1) / padding * padding;
    region[0].max = region[0].min + extent - 1;
    return region;
}

namespace {

// Whether node `n`'s innermost dimension may be read at a stride of two or more (a downsample, a
// pool): by a consumer directly, or through a consumer that may be inlined and is itself read so
// (`strided` holds the answer for every consumer: the DAG lists consumers first).
bool read_at_stride(const FunctionDAG &dag, int n, const std::vector<bool> &strided) {
    for (int e : dag.nodes[size_t(n)].outgoing_edges) {
        const Edge &edge = dag.edges[size_t(e)];
        const bool through = !dag.nodes[size_t(edge.consumer_node)].is_output && strided[size_t(edge.consumer_node)];
        for (const Jacobian &j : edge.jacobians) {
            if (j.producer_dims() == 0) continue;
            for (const JacobianEntry &entry : j.entries[0]) {
                if (!entry || entry->num == 0) continue;
                if (std::abs(entry->value()) > 1 || through) return true;
            }
        }
    }
    return false;
}

// Node::storage_alignment of a node read at a stride: 64 bytes of its narrowest type.
int64_t storage_alignment(const Node &node, bool strided) {
    if (!strided || node.is_input || node.is_output || node.is_extern || node.dimensions == 0) return 1;
    return aligned_row(node);
}

} // namespace

double library_call_cost(const std::string &name) {
    // bench-math-calls on an AMD EPYC (Zen 5, glibc 2.36, AVX-512), float32 vectorized by 16:
    // extra ns per point over a copy, relative to sin's (about 1.0-1.7 ns); rounded to halves.
    // The float64 variants call the same functions' double versions; they count alike.
    static const std::map<std::string, double> costs = {
        {"sin", 1},    {"cos", 1},    {"tan", 4.5},  {"asin", 2},    {"acos", 2},    {"atan", 2.5}, {"atan2", 4},
        {"sinh", 4.5}, {"cosh", 2.5}, {"tanh", 4.5}, {"asinh", 5.5}, {"acosh", 3.5}, {"atanh", 5}};
    const size_t suffix = name.rfind('_');
    if (suffix == std::string::npos) return 0;
    const std::string type = name.substr(suffix + 1);
    if (type != "f16" && type != "f32" && type != "f64") return 0;
    const auto it = costs.find(name.substr(0, suffix));
    return it == costs.end() ? 0 : it->second;
}

std::string stable_name(const std::string &name) {
    static const std::string kLambda = "lambda_";
    auto digit = [&](size_t i) { return i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); };
    std::string out;
    for (size_t i = 0; i < name.size(); i++) {
        const bool lambda = name.compare(i, kLambda.size(), kLambda) == 0 && (i == 0 || name[i - 1] == '.') &&
                            digit(i + kLambda.size());
        if (lambda) { // Halide's name for an anonymous Func: "lambda_" and a process-wide counter
            size_t j = i + kLambda.size();
            while (digit(j)) j++;
            if (j == name.size() || name[j] == '.' || name[j] == '$') {
                out += "lambda";
                i = j - 1;
                continue;
            }
        }
        if (name[i] == '$' && digit(i + 1)) {
            while (digit(i + 1)) i++;
            continue;
        }
        out += name[i];
    }
    return out;
}

int FunctionDAG::node_index(const std::string &name) const {
    for (size_t i = 0; i < nodes.size(); i++) {
        if (nodes[i].name == name) return int(i);
    }
    return -1;
}

namespace {

// The estimate Func::set_estimates gave `arg` among `estimates`, under the parameters'
// estimates; nullopt if there is none; UnsupportedPipeline if it is not a constant there.
std::optional<Span> estimate_of(const std::vector<Bound> &estimates, const std::string &arg, const char *what) {
    auto b = std::find_if(estimates.begin(), estimates.end(), [&](const Bound &x) { return x.var == arg; });
    if (b == estimates.end() || !b->min.defined() || !b->extent.defined()) return std::nullopt;
    const int64_t mn = const_int(with_estimates(b->min), what);
    return Span{mn, mn + const_int(with_estimates(b->extent), what) - 1};
}

// A region from estimates given per pure variable; empty unless every dimension has one that is
// a constant under the parameters' estimates.
Region estimated_region(const std::vector<Bound> &estimates, const std::vector<std::string> &args) {
    Region r;
    try {
        for (const std::string &arg : args) {
            const std::optional<Span> s = estimate_of(estimates, arg, "an estimate");
            if (!s) return {};
            r.push_back(*s);
        }
    } catch (const UnsupportedPipeline &) {
        return {};
    }
    return r;
}

// An input image's region from its estimates (or, for a Buffer, its shape); empty if unknown.
Region input_estimates(const Parameter &param, const Buffer<> &image, int dims) {
    Region r;
    for (int d = 0; d < dims; d++) {
        if (image.defined()) {
            r.push_back({image.dim(d).min(), image.dim(d).max()});
            continue;
        }
        if (!param.defined()) return {};
        const Expr mn = param.min_constraint_estimate(d), ext = param.extent_constraint_estimate(d);
        const int64_t *m = mn.defined() ? as_const_int(simplify(mn)) : nullptr;
        const int64_t *e = ext.defined() ? as_const_int(simplify(ext)) : nullptr;
        if (!m || !e) return {};
        r.push_back({*m, *m + *e - 1});
    }
    return r;
}

// A bound of an edge's region that the evaluator cannot take per tile: dimension `dim`'s min or
// max, as bounds inference gave it (undefined or infinite when unbounded).
struct PendingBound {
    int edge = -1;
    size_t dim = 0;
    bool is_max = false;
    Expr expr;
};

// Settles edge `ei`'s pending bounds as constants, now that its consumer stage's loop bounds at
// root are known: the bound there (it covers every tile of the consumer), else the producer's
// estimates, else the consumer's own extent along the same dimension.
void settle_bounds(FunctionDAG &dag, const std::vector<PendingBound> &pending, int ei, const Stage &st) {
    const std::vector<std::string> symbols = loop_bound_symbols(st.loops);
    for (const PendingBound &p : pending) {
        if (p.edge != ei) continue;
        Edge &e = dag.edges[size_t(ei)];
        const Node &producer = dag.nodes[size_t(e.producer)];
        std::optional<int64_t> v;
        if (p.expr.defined() && !p.expr.same_as(Interval::neg_inf()) && !p.expr.same_as(Interval::pos_inf())) {
            std::map<std::string, Expr> at_root;
            for (size_t l = 0; l < st.loops.size(); l++) {
                at_root[symbols[2 * l]] = Expr(int(st.loop_bounds_at_root[l].min));
                at_root[symbols[2 * l + 1]] = Expr(int(st.loop_bounds_at_root[l].max));
            }
            if (const int64_t *c = as_const_int(with_estimates(substitute(at_root, p.expr)))) v = *c;
        }
        if (!v && p.dim < producer.estimated_region.size()) {
            const Span &est = producer.estimated_region[p.dim];
            v = p.is_max ? est.max : est.min;
        }
        for (size_t l = 0; !v && l < st.loops.size(); l++) {
            if (st.loops[l].dim == int(p.dim))
                v = p.is_max ? st.loop_bounds_at_root[l].max : st.loop_bounds_at_root[l].min;
        }
        if (!v) {
            throw UnsupportedPipeline("cannot bound the region of '" + producer.name + "' that " + st.name +
                                      " reads in dimension " + std::to_string(p.dim) +
                                      " (no estimates to fall back on)");
        }
        SymbolicBound b(Expr(*v), symbols);
        b.set_reads_run_time_values(true); // unbounded, or beyond what the evaluator takes
        (p.is_max ? e.region[p.dim].second : e.region[p.dim].first) = std::move(b);
    }
}

// Does x86 divide (or take the modulo of) integers of type `t` by `divisor` one lane at a time?
// It has no vector integer division: a constant divisor becomes a multiply-high and shifts, but
// for 64-bit lanes it has no vector multiply-high either, so only powers of two (shifts) stay
// vector code there (bench-math-calls: int64 / 3 1.0 ns a point, int32 / 3 0.14, int64 / 4 0.06).
bool made_lane_by_lane(const Type &t, const Expr &divisor) {
    if (t.is_float()) return false;
    if (!is_const(divisor)) return true;
    int log2 = 0;
    return t.bits() == 64 && !is_const_power_of_two_integer(divisor, &log2);
}

// The weighted math library calls of one evaluation of a definition (library_call_cost) and its
// integer divisions made lane by lane (kRuntimeDivisionCost), grouped by the
// stage loops (`loop_vars`, innermost first) whose variables their operands use. A Func's
// definition binds common subexpressions in Lets, whose uses count as uses of what they bind.
struct LibraryCallCounter : IRVisitor {
    const std::vector<std::string> &loop_vars;
    std::vector<std::pair<std::string, uint64_t>> lets; // in scope, with the loops their values use
    std::vector<DependentCalls> groups;
    explicit LibraryCallCounter(const std::vector<std::string> &vars) : loop_vars(vars) {}
    uint64_t loops_used(const Expr &e) const {
        uint64_t used = 0;
        for (size_t l = 0; l < loop_vars.size() && l < 64; l++) {
            if (expr_uses_var(e, loop_vars[l])) used |= uint64_t(1) << l;
        }
        for (const auto &[name, loops] : lets) {
            if ((used | loops) != used && expr_uses_var(e, name)) used |= loops;
        }
        return used;
    }
    void add(uint64_t loops, double calls) {
        for (DependentCalls &g : groups) {
            if (g.loops == loops) return void(g.per_point += calls);
        }
        groups.push_back({loops, calls});
    }
    using IRVisitor::visit;
    void visit(const Let *op) override {
        op->value.accept(this);
        lets.emplace_back(op->name, loops_used(op->value));
        op->body.accept(this);
        lets.pop_back();
    }
    void visit(const Call *op) override {
        if (op->call_type == Call::PureExtern) {
            const double cost = library_call_cost(op->name);
            if (cost > 0) add(loops_used(op), cost);
        }
        IRVisitor::visit(op);
    }
    template<typename DivOrMod>
    void division(const DivOrMod *op) {
        if (made_lane_by_lane(op->type, op->b)) add(loops_used(op), kRuntimeDivisionCost);
        IRVisitor::visit(op);
    }
    void visit(const Div *op) override { division(op); }
    void visit(const Mod *op) override { division(op); }
};

std::vector<DependentCalls> library_calls(const Definition &def, const std::vector<Loop> &loops) {
    std::vector<std::string> vars;
    for (const Loop &l : loops) vars.push_back(l.var);
    LibraryCallCounter counter(vars);
    for (const Expr &e : def.values()) e.accept(&counter);
    for (const Expr &e : def.args()) e.accept(&counter);
    return counter.groups;
}

// An extern stage: one stage over the Func's pure variables, reading each Func or image it is
// given over the same region along the dimensions they share (Halide asks the C function for the
// real region when it compiles; the model only needs a fair estimate), the producer's estimates
// or one point along the others.
void add_extern_stage(FunctionDAG &dag, int ni) {
    Node &node = dag.nodes[size_t(ni)];
    Stage st;
    st.node = ni;
    st.name = node.name;
    for (const std::string &a : node.func.args()) st.loops.push_back(Loop{a, false, true, -1, Expr(), Expr()});
    const std::vector<std::string> symbols = loop_bound_symbols(st.loops);
    for (const ExternFuncArgument &a : node.func.extern_arguments()) {
        std::string name;
        if (a.is_func()) name = Function(a.func).name();
        if (a.is_image_param()) name = a.image_param.name();
        if (a.is_buffer()) name = a.buffer.name();
        const int producer = name.empty() ? -1 : dag.node_index(name);
        if (producer < 0 || producer == ni) continue;
        const bool seen = std::any_of(st.incoming_edges.begin(), st.incoming_edges.end(),
                                      [&](int ei) { return dag.edges[size_t(ei)].producer == producer; });
        if (seen) continue;
        const Node &p = dag.nodes[size_t(producer)];
        Edge e;
        e.producer = producer;
        e.consumer_node = ni;
        e.consumer_stage = 0;
        e.calls = 1;
        Jacobian j;
        for (size_t d = 0; d < size_t(p.dimensions); d++) {
            std::vector<JacobianEntry> row;
            for (size_t l = 0; l < st.loops.size(); l++) row.push_back(Rational{l == d ? 1 : 0, 1});
            j.entries.push_back(std::move(row));
            if (d < st.loops.size()) {
                e.region.emplace_back(SymbolicBound(Variable::make(Int(32), symbols[2 * d]), symbols),
                                      SymbolicBound(Variable::make(Int(32), symbols[2 * d + 1]), symbols));
            } else {
                const Span est = d < p.estimated_region.size() ? p.estimated_region[d] : Span{0, 0};
                e.region.emplace_back(SymbolicBound(Expr(est.min), symbols), SymbolicBound(Expr(est.max), symbols));
            }
        }
        e.jacobians.push_back(std::move(j));
        st.incoming_edges.push_back(int(dag.edges.size()));
        dag.nodes[size_t(producer)].outgoing_edges.push_back(int(dag.edges.size()));
        dag.edges.push_back(std::move(e));
    }
    node.stages.push_back(std::move(st));
}

} // namespace

namespace {

// The pipeline's Funcs as nodes, consumers first (outputs first), with their estimates.
void add_func_nodes(FunctionDAG &dag, const std::vector<Function> &outputs, const std::map<std::string, Function> &env,
                    const std::vector<std::string> &order) {
    std::set<std::string> output_names;
    for (const Function &f : outputs) output_names.insert(f.name());
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const Function &f = env.at(*it);
        Node n;
        n.name = f.name();
        n.func = f;
        n.is_output = output_names.count(f.name()) > 0;
        n.is_extern = f.has_extern_definition();
        n.dimensions = f.dimensions();
        n.types = f.output_types();
        n.estimated_region = estimated_region(f.schedule().estimates(), f.args());
        dag.nodes.push_back(std::move(n));
    }
}

// Input images, in order of first use (consumers first), after every Func.
void add_input_nodes(FunctionDAG &dag) {
    for (size_t i = 0, funcs = dag.nodes.size(); i < funcs; i++) {
        const Function f = dag.nodes[i].func; // a handle: inputs pushed below move the nodes
        auto add_input = [&](const std::string &name, int dims, Type type, const Parameter &param,
                             const Buffer<> &image) {
            if (dag.node_index(name) >= 0) return;
            Node in;
            in.name = name;
            in.is_input = true;
            in.dimensions = dims;
            in.types = {type};
            in.estimated_region = input_estimates(param, image, dims);
            dag.nodes.push_back(std::move(in));
        };
        if (f.has_extern_definition()) {
            for (const ExternFuncArgument &a : f.extern_arguments()) {
                if (a.is_image_param())
                    add_input(a.image_param.name(), a.image_param.dimensions(), a.image_param.type(), a.image_param,
                              Buffer<>());
                if (a.is_buffer())
                    add_input(a.buffer.name(), a.buffer.dimensions(), a.buffer.type(), Parameter(), a.buffer);
            }
            continue;
        }
        CollectCalls c;
        c.collect(f.definition());
        for (const Definition &u : f.updates()) c.collect(u);
        for (const Call *op : c.calls) {
            if (op->call_type == Call::Image) add_input(op->name, int(op->args.size()), op->type, op->param, op->image);
        }
    }
}

// Stage `si` of node `ni` (its definition `def`): loops, library calls, the edges from its
// producers (regions as symbolic bounds of its loops, Jacobians per call site, use conditions),
// and an update's reads of its own Func and its writes. Bounds the evaluator cannot take per
// tile go to `pending`, settled at the consumer's root region.
Stage build_stage(FunctionDAG &dag, size_t ni, size_t si, const Definition &def, const FuncValueBounds &value_bounds,
                  std::vector<PendingBound> &pending) {
    const Node &node = dag.nodes[ni];
    Stage st;
    st.node = int(ni);
    st.index = int(si);
    st.name = si == 0 ? node.name : node.name + ".update(" + std::to_string(si - 1) + ")";
    st.definition = def;
    const StageSchedule &sched = def.schedule();
    for (const Dim &d : sched.dims()) {
        if (d.var == Var::outermost().name()) continue;
        Loop l;
        l.var = d.var;
        l.is_rvar = d.is_rvar();
        l.is_pure = d.is_pure();
        if (l.is_rvar) {
            for (const ReductionVariable &rv : sched.rvars()) {
                if (rv.var == d.var) l.rvar_min = with_estimates(rv.min), l.rvar_extent = with_estimates(rv.extent);
            }
        }
        st.loops.push_back(l);
    }
    st.library_calls = library_calls(def, st.loops);
    // Symbolic loop bounds: symbol 2i = loop i's min, 2i+1 its max.
    const std::vector<std::string> symbols = loop_bound_symbols(st.loops);
    Scope<Interval> scope;
    for (size_t l = 0; l < st.loops.size(); l++) {
        scope.push(st.loops[l].var,
                   Interval(Variable::make(Int(32), symbols[2 * l]), Variable::make(Int(32), symbols[2 * l + 1])));
    }
    std::map<std::string, Box> boxes;
    auto merge = [&](const std::map<std::string, Box> &found) {
        for (const auto &[name, box] : found) {
            auto [it, fresh] = boxes.emplace(name, box);
            if (!fresh) it->second = box_union(it->second, box);
        }
    };
    auto require = [&](const Expr &e) {
        if (!e.defined()) return;
        // Under strict_float, as the project compiles, the simplifier keeps float terms like
        // 0.0f * f(x - 3) (also inside casts): their loads count in Halide's bounds, so here too.
        const Expr strict = Halide::strict_float(e);
        merge(boxes_required(with_estimates(strict), scope, value_bounds));
        // Halide's bounds inference reads the unsimplified definition: a call the simplifier
        // folds away is still a use to it (f(x, clamp(g(x), 0, 0)) is f(x, 0); Halide then
        // skips producing g, but the edge is an ordinary read here, so the model charges
        // work that never runs: 6 of 1000 generated pipelines), and so is a tap multiplied by
        // an integer 0 (0 * f(x - 2) widens f's region by one column: a region one column
        // short made an unrolled tile that Halide 14 miscompiled look even). Both boxes count.
        merge(boxes_required(SubstituteEstimates().mutate(strict), scope, value_bounds));
    };
    for (const Expr &e : def.values()) require(e);
    for (const Expr &e : def.args()) require(e);
    require(def.predicate());
    // For the edges' use conditions; without a select every read is unconditional.
    std::vector<Expr> read_exprs;
    if (has_select(def)) {
        for (const std::vector<Expr> *list : {&def.values(), &def.args()}) {
            for (const Expr &e : *list) read_exprs.push_back(for_use_conditions(e));
        }
        if (def.predicate().defined()) read_exprs.push_back(for_use_conditions(def.predicate()));
    }
    for (const auto &[name, box] : boxes) {
        const int producer = dag.node_index(name);
        if (producer < 0) continue; // not a Func or image of this pipeline
        std::vector<Jacobian> jacobians;
        int calls = 0;
        for (const CallSite &site : call_sites_of(def, name)) {
            Jacobian j;
            j.repeat = site.repeat;
            calls += !site.repeat;
            for (const Expr &call_arg : site.args) {
                const Expr arg = with_estimates(call_arg);
                std::vector<JacobianEntry> row, steady;
                for (const Loop &l : st.loops) {
                    const JacobianEntry d = derivative(arg, l.var, false);
                    // A known slope has no clamp to look through: the same either way.
                    const JacobianEntry ds = d ? d : derivative(arg, l.var, true);
                    row.push_back(d ? JacobianEntry(reduced(*d)) : std::nullopt);
                    steady.push_back(ds ? JacobianEntry(reduced(*ds)) : std::nullopt);
                }
                j.entries.push_back(std::move(row));
                j.steady_entries.push_back(std::move(steady));
            }
            if (j.steady_entries == j.entries) j.steady_entries.clear(); // no clamp: steady() is entries
            jacobians.push_back(std::move(j));
        }
        if (producer == int(ni)) {
            st.self_calls = std::move(jacobians);
            continue; // its region goes into self_reads
        }
        Edge e;
        e.producer = producer;
        e.consumer_node = int(ni);
        e.consumer_stage = int(si);
        e.calls = calls;
        e.jacobians = std::move(jacobians);
        if (!read_exprs.empty()) e.use = UseCondition::of(read_exprs, name, st.loops);
        // Bounds the evaluator cannot take per tile (unbounded, or math it does not know)
        // are settled at the consumer's root region below.
        auto bound = [&](const Expr &x, size_t d, bool is_max) {
            if (x.defined() && !x.same_as(Interval::neg_inf()) && !x.same_as(Interval::pos_inf())) {
                try {
                    bool run_time = false;
                    SymbolicBound b(with_estimates(x, run_time), symbols);
                    b.set_reads_run_time_values(run_time);
                    return b;
                } catch (const UnsupportedPipeline &) {
                }
            }
            pending.push_back({int(dag.edges.size()), d, is_max, x});
            return SymbolicBound();
        };
        for (size_t d = 0; d < box.size(); d++) {
            e.region.emplace_back(bound(box[d].min, d, false), bound(box[d].max, d, true));
        }
        st.incoming_edges.push_back(int(dag.edges.size()));
        dag.nodes[size_t(producer)].outgoing_edges.push_back(int(dag.edges.size()));
        dag.edges.push_back(std::move(e));
    }
    if (si > 0) {
        // What the update reads of its own Func, and writes: the left-hand side's bounds
        // (data-dependent ones through the value bounds of what they read).
        // Unbounded (an index read from data with no clamp): the Func's estimates.
        auto add = [&](SymbolicRegion &out, const Interval &iv, size_t d, const char *what) {
            if (iv.is_bounded()) {
                out.emplace_back(SymbolicBound(with_estimates(iv.min), symbols),
                                 SymbolicBound(with_estimates(iv.max), symbols));
            } else if (d < node.estimated_region.size()) {
                const Span est = node.estimated_region[d];
                out.emplace_back(SymbolicBound(Expr(est.min), symbols), SymbolicBound(Expr(est.max), symbols));
            } else {
                throw UnsupportedPipeline(st.name + " " + what + " an unbounded region of dimension " +
                                          std::to_string(d) + "; give '" + node.name + "' estimates");
            }
        };
        const auto self = boxes.find(node.name);
        for (size_t d = 0; d < def.args().size(); d++) {
            if (self != boxes.end()) add(st.self_reads, self->second[d], d, "reads");
            add(st.writes, bounds_of_expr_in_scope(with_estimates(def.args()[d]), scope, value_bounds), d, "writes");
        }
    }
    return st;
}

// Concrete regions at root, consumers first: outputs from their estimates, every other node the
// union of what its consumers' stages need; each stage's loop bounds at root, and the pending
// bounds settled.
void compute_root_regions(FunctionDAG &dag, std::vector<PendingBound> &pending) {
    // node the union of what its consumers' stages need.
    std::vector<Region> needed(dag.nodes.size());
    std::vector<bool> used(dag.nodes.size(), false);
    for (size_t ni = 0; ni < dag.nodes.size(); ni++) {
        Node &node = dag.nodes[ni];
        if (node.is_output) {
            for (const std::string &arg : node.func.args()) {
                const std::optional<Span> s = estimate_of(node.func.schedule().estimates(), arg, "an output estimate");
                if (!s) throw UnsupportedPipeline("output '" + node.name + "' has no estimate for '" + arg + "'");
                node.region_at_root.push_back(*s);
            }
        } else if (!used[ni]) {
            // Nothing reads it (only a zero-extent region): its estimates, or one point.
            node.region_at_root = node.estimated_region;
            node.region_at_root.resize(size_t(node.dimensions), Span{0, 0});
        } else {
            node.region_at_root = needed[ni];
        }
        const std::vector<std::string> args = node.is_input ? std::vector<std::string>{} : node.func.args();
        for (Stage &st : node.stages) {
            for (Loop &l : st.loops) {
                if (l.is_rvar) {
                    const int64_t mn = const_int(l.rvar_min, "the minimum of " + l.var);
                    st.loop_bounds_at_root.push_back({mn, mn + const_int(l.rvar_extent, "the extent of " + l.var) - 1});
                    continue;
                }
                const auto a = std::find(args.begin(), args.end(), l.var);
                if (a == args.end()) throw UnsupportedPipeline(st.name + ": loop '" + l.var + "' is not a pure var");
                l.dim = int(a - args.begin());
                st.loop_bounds_at_root.push_back(node.region_at_root[size_t(l.dim)]);
            }
        }
        // The output's buffer is given; any other Func is realized over its updates' footprints too.
        if (!node.is_output) node.add_update_footprints(node.region_at_root, true);
        for (Stage &st : node.stages) {
            st.loop_bounds_at_root = st.loops_over(node.region_at_root);
            for (int ei : st.incoming_edges) {
                settle_bounds(dag, pending, ei, st);
                const Edge &e = dag.edges[size_t(ei)];
                unite(needed[size_t(e.producer)], e.required(st.loop_bounds_at_root));
                used[size_t(e.producer)] = true;
            }
        }
    }
}

} // namespace

FunctionDAG FunctionDAG::build(const Pipeline &pipeline) {
    std::vector<Function> outputs;
    for (const Func &f : pipeline.outputs()) outputs.push_back(f.function());
    std::map<std::string, Function> env = build_environment(outputs);
    const std::vector<std::string> order = topological_order(outputs, env); // producers first
    const FuncValueBounds value_bounds = compute_function_value_bounds(order, env);

    FunctionDAG dag;
    dag.pipeline = pipeline;
    add_func_nodes(dag, outputs, env, order);
    add_input_nodes(dag);
    std::vector<PendingBound> pending; // bounds to settle once the consumers' regions are known
    for (size_t ni = 0; ni < dag.nodes.size(); ni++) {
        if (dag.nodes[ni].is_input) continue;
        if (dag.nodes[ni].is_extern) {
            add_extern_stage(dag, int(ni));
            continue;
        }
        std::vector<Definition> defs{dag.nodes[ni].func.definition()};
        for (const Definition &u : dag.nodes[ni].func.updates()) defs.push_back(u);
        for (size_t si = 0; si < defs.size(); si++) {
            Stage st = build_stage(dag, ni, si, defs[si], value_bounds, pending);
            dag.nodes[ni].stages.push_back(std::move(st));
        }
    }
    compute_root_regions(dag, pending);
    std::vector<bool> strided(dag.nodes.size(), false);
    for (size_t ni = 0; ni < dag.nodes.size(); ni++) {
        strided[ni] = read_at_stride(dag, int(ni), strided);
        dag.nodes[ni].storage_alignment = storage_alignment(dag.nodes[ni], strided[ni]);
    }
    return dag;
}

std::string FunctionDAG::describe() const {
    std::ostringstream o;
    auto spans = [&](const Region &s) {
        std::string t;
        for (const Span &x : s) t += "[" + std::to_string(x.min) + ", " + std::to_string(x.max) + "]";
        return t;
    };
    for (size_t ni = 0; ni < nodes.size(); ni++) {
        const Node &n = nodes[ni];
        o << "node " << ni << " " << n.name << (n.is_input ? " (input)" : "") << (n.is_output ? " (output)" : "") << " "
          << type_text(n.types[0]) << " region " << spans(n.region_at_root) << "\n";
        for (const Stage &st : n.stages) {
            o << "  stage " << st.name << " loops";
            for (size_t i = 0; i < st.loops.size(); i++) {
                o << " " << st.loops[i].var << (st.loops[i].is_rvar ? "(r)" : "") << spans({st.loop_bounds_at_root[i]});
            }
            o << "\n";
            for (int ei : st.incoming_edges) {
                const Edge &e = edges[size_t(ei)];
                o << "    <- " << nodes[size_t(e.producer)].name << " x" << e.calls << " region";
                for (const auto &[mn, mx] : e.region) o << " [" << mn.expr() << ", " << mx.expr() << "]";
                o << "\n";
                for (const Jacobian &j : e.jacobians) {
                    o << "       jacobian";
                    for (const auto &row : j.entries) {
                        o << " (";
                        for (size_t l = 0; l < row.size(); l++) {
                            o << (l ? " " : "");
                            if (!row[l]) {
                                o << "?";
                            } else {
                                o << row[l]->num;
                                if (row[l]->den != 1) o << "/" << row[l]->den;
                            }
                        }
                        o << ")";
                    }
                    o << "\n";
                }
            }
        }
    }
    return o.str();
}

} // namespace schedforge::featurize
