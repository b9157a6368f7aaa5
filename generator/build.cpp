#include "build.h"

#include "common/rng.h"

#include <cassert>
#include <cstdint>
#include <string>

namespace schedforge::gen {

using namespace Halide;

Type halide_type(ScalarType t) {
    switch (t) {
    case ScalarType::Bool: return Bool();
    case ScalarType::UInt8: return UInt(8);
    case ScalarType::UInt16: return UInt(16);
    case ScalarType::UInt32: return UInt(32);
    case ScalarType::Int8: return Int(8);
    case ScalarType::Int16: return Int(16);
    case ScalarType::Int32: return Int(32);
    case ScalarType::Float32: return Float(32);
    }
    return Type();
}

namespace {

// Float values that feed products are kept within this magnitude, so chains of stages never
// reach Inf (and then NaN).
constexpr float kFloatLimit = 1e4f;

Expr zero(Type t) { return cast(t, 0); }

// Value conversion with defined results for every input: bool tests != 0, float-to-int
// saturates, int-to-int wraps.
//
// An int-to-int conversion that narrows or changes sign goes through a reinterpret: Halide 14's
// simplifier folds cast(a, cast(b, x)) for integer a and b even where x is a float (here or
// after a saturated Func is inlined), so a defined saturate-then-wrap became a float-to-int cast
// out of range, undefined, and vectorized code disagreed with scalar code
// (tests/generator/expr_semantics_test.cpp). The reinterprets below change no value.
Expr convert(const Expr &e, Type to) {
    const Type from = e.type();
    if (from == to) return e;
    if (to.is_bool()) return e != zero(from);
    if (from.is_float() && !to.is_float()) return saturating_cast(to, e);
    if (from.is_int_or_uint() && to.is_int_or_uint() && !to.can_represent(from)) {
        if (to.bits() < from.bits()) {
            // Narrowing keeps the low bits, whatever the source's signedness.
            return cast(to, reinterpret(from.with_code(from.is_int() ? Type::UInt : Type::Int), e));
        }
        // A sign change: extend in the source's signedness (value-preserving, so safe to fold).
        return reinterpret(to, cast(to.with_code(from.code()), e));
    }
    return cast(to, e);
}

Expr constant(Type t, int64_t v) {
    if (t.is_bool()) return cast(Bool(), Expr(int32_t(v != 0)));
    return cast(t, Expr(int32_t(v)));
}

// int32 add/sub/mul go through uint32 so overflow wraps instead of being undefined.
// Two int32 constants whose uint32 operation wraps are folded here: Halide 14's simplifier
// reports "signed integer overflow" folding int32(uint32 constant + uint32 constant) when the
// sum wraps (-8 + -11 is 4294967288 + 4294967285), so such a pipeline compiled under no schedule
// (generator seed 18156234139965656997). Where nothing wraps, the expression is left as it was.
// The int32 result is the uint32 result's bits (reinterpret): a cast reads the same to the code
// generator, but when bounds make the uint32 value a constant above 2^31 (abs(min(i, -2)) - 12
// for i >= 0: pipeline seed 11420844545618819108), Halide 14's simplifier reports the cast of it
// as signed overflow. Pipeline features count the reinterpret as the cast it stands for.
Expr arith(char op, const Expr &a, const Expr &b) {
    const Type t = a.type();
    const int64_t *ca = Internal::as_const_int(a), *cb = Internal::as_const_int(b);
    if (ca && cb && t == Int(32)) {
        const uint64_t x = uint32_t(*ca), y = uint32_t(*cb); // below 2^32: the uint64 result is exact
        const bool wraps = op == '+' ? x + y > UINT32_MAX : op == '-' ? x < y : x * y > UINT32_MAX;
        const uint64_t exact = op == '+' ? x + y : op == '-' ? x - y : x * y;
        if (wraps) return Expr(int32_t(uint32_t(exact))); // two's complement, as the uint32 operation
    }
    const bool wrap = t.is_int() && t.bits() >= 32;
    Expr x = wrap ? cast(UInt(32), a) : a, y = wrap ? cast(UInt(32), b) : b;
    Expr r = op == '+' ? x + y : op == '-' ? x - y : x * y;
    if (wrap) r = t.bits() == 32 ? reinterpret(t, r) : cast(t, r);
    if (t.is_float() && op == '*') r = clamp(r, -kFloatLimit * kFloatLimit, kFloatLimit * kFloatLimit);
    return r;
}

// A factor of a product accumulated in `acc`: converted, and bounded if float.
Expr operand(const Expr &e, Type acc) {
    Expr v = convert(e.type().is_bool() ? cast(UInt(8), e) : e, acc);
    return acc.is_float() ? clamp(v, -kFloatLimit, kFloatLimit) : v;
}

// Rounding integer division by a positive constant (plain division for floats).
Expr divide(const Expr &e, int64_t d) {
    if (d == 1) return e;
    if (e.type().is_float()) return e / cast(e.type(), Expr(float(d)));
    return (e + constant(e.type(), d / 2)) / constant(e.type(), d);
}

// The type an interpolation or box filter over t is computed in.
Type widened(Type t) {
    if (t.is_float()) return t;
    return t.bits() >= 32 ? Int(64) : Int(32);
}

// Index in [0, bins) of a value, bins a power of two: the top bits of an integer (sign bit
// flipped for signed types, so order is kept), or [0, 1) scaled for floats.
Expr bin_of(const Expr &v, int64_t bins) {
    int log2_bins = 0;
    while ((int64_t(1) << log2_bins) < bins) log2_bins++;
    const Type t = v.type();
    if (t.is_bool()) return select(v, int32_t(bins - 1), 0);
    if (t.is_float()) return clamp(saturating_cast(Int(32), floor(v * float(bins))), 0, int32_t(bins - 1));
    Expr u = cast(UInt(t.bits()), v);
    if (t.is_int()) u = u + cast(UInt(t.bits()), Expr(int64_t(1) << (t.bits() - 1)));
    // The clamp changes no value; it tells bounds inference what the shift already guarantees.
    return clamp(cast(Int(32), u >> cast(UInt(t.bits()), Expr(int32_t(t.bits() - log2_bins)))), 0, int32_t(bins - 1));
}

// Coordinate v folded into [min, min + extent) by a boundary mode (constant_exterior clamps the
// coordinate and masks the value separately).
Expr fold(const Expr &v, const Expr &min, const Expr &extent, const std::string &mode) {
    if (mode == "mirror_image" || mode == "mirror_interior") {
        const Expr period = mode == "mirror_image" ? 2 * extent : max(2 * extent - 2, 1);
        const Expr t = (v - min) % period; // Halide's % is never negative
        const Expr back = mode == "mirror_image" ? period - 1 - t : period - t;
        return min + clamp(select(t < extent, t, back), 0, extent - 1);
    }
    return clamp(v, min, min + extent - 1);
}

Expr inside(const Expr &v, const Expr &min, const Expr &extent) { return v >= min && v < min + extent; }

class Definer {
public:
    Definer(const PipelineSpec &spec, const std::vector<InputSource> &inputs) : spec_(spec), inputs_(inputs) {
        vars_ = {Var("x"), Var("y"), Var("c")};
        if (spec.dims == 4) vars_.push_back(Var("n"));
    }

    std::vector<Func> run() {
        funcs_.resize(spec_.nodes.size());
        size_t next_input = 0;
        for (size_t i = 0; i < spec_.nodes.size(); i++) {
            const Node &node = spec_.nodes[i];
            if (node.kind == StageKind::Input) {
                assert(next_input < inputs_.size() && "fewer input sources than input nodes");
                input_of_[i] = next_input;
                funcs_[i] = inputs_[next_input++].func;
                continue;
            }
            funcs_[i] = Func("s" + std::to_string(i) + "_" + kind_name(node.kind));
            define(int(i), node);
        }
        return funcs_;
    }

private:
    Var x() const { return vars_[0]; }
    Var y() const { return vars_[1]; }
    Var c() const { return vars_[2]; }

    // Producer p (an image node) at (ex, ey, ec), batch coordinate passed through.
    Expr at(int p, const Expr &ex, const Expr &ey, const Expr &ec) const {
        std::vector<Expr> args = {ex, ey, ec};
        if (spec_.dims == 4) args.push_back(vars_[3]);
        return funcs_[size_t(p)](args);
    }
    Expr here(int p) const { return at(p, x(), y(), c()); }

    const Node &producer(const Node &node, int slot) const { return spec_.nodes[size_t(node.producers[size_t(slot)])]; }

    std::vector<Expr> lhs(const Expr &ex, const Expr &ey, const Expr &ec) const {
        std::vector<Expr> args = {ex, ey, ec};
        if (spec_.dims == 4) args.push_back(vars_[3]);
        return args;
    }

    void define(int index, const Node &node) {
        Func &f = funcs_[size_t(index)];
        const Type t = halide_type(node.type);
        const int p0 = node.producers.empty() ? -1 : node.producers[0];
        switch (node.kind) {
        case StageKind::Boundary: define_boundary(f, node); break;
        case StageKind::Pointwise: {
            std::vector<Expr> slots;
            for (int p : node.producers) slots.push_back(here(p));
            f(vars_) = convert(expr(node.expr, slots), t);
            break;
        }
        case StageKind::Stencil: define_stencil(f, node); break;
        case StageKind::Conv: {
            const int64_t k = node.param_int("kernel"), s = node.param_int("stride");
            const int ci = int(producer(node, 0).extents[2]);
            RDom r(0, int(k), 0, int(k), 0, ci);
            const Func &w = funcs_[size_t(node.producers[1])];
            f(vars_) = zero(t);
            f(vars_) += operand(w(r.x, r.y, r.z, c()), t) *
                        operand(at(p0, x() * int(s) + r.x - int(k / 2), y() * int(s) + r.y - int(k / 2), r.z), t);
            break;
        }
        case StageKind::ChannelMix: {
            RDom r(0, int(producer(node, 0).extents[2]));
            const Func &w = funcs_[size_t(node.producers[1])];
            f(vars_) = zero(t);
            f(vars_) += operand(w(r, c()), t) * operand(at(p0, x(), y(), r), t);
            break;
        }
        case StageKind::Pool: {
            const int k = int(node.param_int("window")), s = int(node.param_int("stride"));
            RDom r(0, k, 0, k);
            const Expr v = at(p0, x() * s + r.x, y() * s + r.y, c());
            if (node.param("op") == "max") {
                f(vars_) = maximum(v);
            } else {
                const Type acc = halide_type(parse_type(node.param("acc")));
                f(vars_) = convert(divide(sum(convert(v, acc)), int64_t(k) * k), t);
            }
            break;
        }
        case StageKind::Activation: define_activation(f, node); break;
        case StageKind::Pad: {
            const Node &src = producer(node, 0);
            const std::string mode = node.param("mode");
            const Expr w = int32_t(src.extents[0]), h = int32_t(src.extents[1]);
            const Expr v = at(p0, fold(x(), 0, w, mode), fold(y(), 0, h, mode), c());
            f(vars_) = mode == "constant_exterior" ? select(inside(x(), 0, w) && inside(y(), 0, h), v, zero(t)) : v;
            break;
        }
        case StageKind::Upsample: define_upsample(f, node); break;
        case StageKind::Downsample: {
            const int fx = int(node.param_int("fx")), fy = int(node.param_int("fy"));
            if (node.param("mode") == "nearest" || node.type == ScalarType::Bool) {
                f(vars_) = at(p0, x() * fx, y() * fy, c());
            } else {
                RDom r(0, fx, 0, fy);
                const Type wide = widened(t);
                f(vars_) =
                    convert(divide(sum(cast(wide, at(p0, x() * fx + r.x, y() * fy + r.y, c()))), int64_t(fx) * fy), t);
            }
            break;
        }
        case StageKind::Matmul: {
            RDom r(0, int(node.param_int("k")));
            f(vars_) = zero(t);
            f(vars_) += operand(at(p0, r, y(), c()), t) * operand(at(node.producers[1], x(), r, c()), t);
            break;
        }
        case StageKind::Scan: {
            const int length = int(node.param_int("length"));
            f(vars_) = convert(here(p0), t);
            if (length < 2) break;
            RDom r(1, length - 1);
            const bool along_x = node.param("axis") == "x";
            // Forward: i = 1..L-1 reads i-1. Backward: i = L-2..0 reads i+1.
            const bool forward = node.param("direction") == "forward";
            const Expr i = forward ? Expr(r) : length - 1 - r;
            const Expr prev = forward ? i - 1 : i + 1;
            const std::vector<Expr> dst = along_x ? lhs(i, y(), c()) : lhs(x(), i, c());
            const std::vector<Expr> src = along_x ? lhs(prev, y(), c()) : lhs(x(), prev, c());
            f(dst) = arith('+', f(dst), f(src));
            break;
        }
        case StageKind::Histogram: {
            const int bins = int(node.param_int("bins")), tile = int(node.param_int("tile"));
            Var b("b");
            std::vector<Var> pure = {b, x(), y(), c()};
            if (spec_.dims == 4) pure.push_back(vars_[3]);
            RDom r(0, tile, 0, tile);
            const Expr v = at(p0, x() * tile + r.x, y() * tile + r.y, c());
            f(pure) = 0;
            std::vector<Expr> dst = {bin_of(v, bins), x(), y(), c()};
            if (spec_.dims == 4) dst.push_back(vars_[3]);
            f(dst) += 1;
            break;
        }
        case StageKind::HistogramApply: {
            const Node &hist = producer(node, 0);
            const int bins = int(hist.param_int("bins")), tile = int(hist.param_int("tile"));
            std::vector<Expr> args = {bin_of(here(node.producers[1]), bins), x() / tile, y() / tile, c()};
            if (spec_.dims == 4) args.push_back(vars_[3]);
            f(vars_) = convert(funcs_[size_t(p0)](args), t);
            break;
        }
        case StageKind::Lut: {
            Var i("i");
            f(i) = convert(expr(node.expr, {Expr(i)}), t);
            break;
        }
        case StageKind::LutApply: {
            const int64_t size = producer(node, 0).extents[0];
            f(vars_) = funcs_[size_t(p0)](bin_of(here(node.producers[1]), size));
            break;
        }
        case StageKind::Gather: {
            const Expr b = here(node.producers[1]);
            const Expr idx = b.type().is_bool() ? cast(Int(32), b) : saturating_cast(Int(32), b);
            const std::string mode = node.param("mode");
            if (mode == "channel") {
                f(vars_) = at(p0, x(), y(), clamp(idx, 0, int32_t(producer(node, 0).extents[2] - 1)));
            } else {
                const int32_t radius = int32_t(node.param_int("radius"));
                const Expr d = clamp(idx, -radius, radius);
                f(vars_) = mode == "offset_x" ? at(p0, x() + d, y(), c()) : at(p0, x(), y() + d, c());
            }
            break;
        }
        case StageKind::Transpose: f(vars_) = at(p0, y(), x(), c()); break;
        case StageKind::Concat: {
            const int32_t ca = int32_t(producer(node, 0).extents[2]);
            const Expr a = at(p0, x(), y(), min(c(), ca - 1));
            const Expr b = convert(at(node.producers[1], x(), y(), max(c() - ca, 0)), t);
            f(vars_) = select(c() < ca, a, b);
            break;
        }
        case StageKind::Slice:
            f(vars_) = at(p0, x(), y(), c() * int32_t(node.param_int("step")) + int32_t(node.param_int("offset")));
            break;
        case StageKind::Input: assert(false && "inputs are not defined here"); break;
        }
    }

    static ScalarType parse_type(const std::string &name) {
        ScalarType t = ScalarType::UInt8;
        const bool ok = parse_type_name(name, &t);
        assert(ok && "spec names an unknown type");
        (void)ok;
        return t;
    }

    void define_boundary(Func &f, const Node &node) {
        const InputSource &src = inputs_[input_of_.at(size_t(node.producers[0]))];
        const std::string mode = node.param("mode");
        // Spatial dimensions follow the mode; channel and batch coordinates are clamped.
        std::vector<Expr> coords;
        Expr in_bounds = constant(Bool(), 1);
        for (size_t d = 0; d < vars_.size(); d++) {
            const Range &b = src.bounds[d];
            const bool spatial = d < 2;
            coords.push_back(fold(vars_[d], b.min, b.extent, spatial ? mode : "repeat_edge"));
            if (spatial) in_bounds = in_bounds && inside(vars_[d], b.min, b.extent);
        }
        const Expr v = src.func(coords);
        f(vars_) = mode == "constant_exterior" ? select(in_bounds, v, zero(v.type())) : v;
    }

    void define_stencil(Func &f, const Node &node) {
        const int p = node.producers[0];
        const Type t = halide_type(node.type);
        const Type acc = halide_type(parse_type(node.param("acc")));
        const std::string axis = node.param("axis"), variant = node.param("variant");
        const int radius = int(node.param_int("radius"));
        const int64_t divisor = node.param_int("divisor");
        const bool use_x = axis != "y", use_y = axis != "x";
        auto tap = [&](const Expr &dx, const Expr &dy) {
            return operand(at(p, use_x ? x() + dx : Expr(x()), use_y ? y() + dy : Expr(y()), c()), acc);
        };
        if (variant == "unrolled") {
            const std::vector<int64_t> w = node.param_ints("weights");
            Expr total;
            // Tap (i, j) sits at offset (i - radius, j - radius) along the axes in use.
            const size_t nx = use_x ? w.size() : 1, ny = use_y ? w.size() : 1;
            for (size_t j = 0; j < ny; j++) {
                for (size_t i = 0; i < nx; i++) {
                    const int64_t weight = (use_x ? w[i] : 1) * (use_y ? w[j] : 1);
                    const Expr dx = use_x ? int(i) - radius : 0, dy = use_y ? int(j) - radius : 0;
                    const Expr term = arith('*', constant(acc, weight), tap(dx, dy));
                    total = total.defined() ? arith('+', total, term) : term;
                }
            }
            f(vars_) = convert(divide(total, divisor), t);
            return;
        }
        // An RDom over the window: a 2-D domain for 2-D stencils, else 1-D along the axis.
        RDom r =
            use_x && use_y ? RDom(-radius, 2 * radius + 1, -radius, 2 * radius + 1) : RDom(-radius, 2 * radius + 1);
        const Expr rx = use_x ? Expr(r.x) : Expr(0);
        const Expr ry = use_y ? (use_x ? Expr(r.y) : Expr(r.x)) : Expr(0);
        if (variant == "sum") {
            f(vars_) = convert(divide(sum(tap(rx, ry)), divisor), t);
            return;
        }
        // rdom: an update definition with tent weights (radius + 1 - |offset|).
        Expr weight = constant(acc, 1);
        if (use_x) weight = weight * cast(acc, radius + 1 - abs(rx));
        if (use_y) weight = weight * cast(acc, radius + 1 - abs(ry));
        f(vars_) = zero(t);
        f(vars_) = arith('+', f(vars_), arith('*', weight, tap(rx, ry)));
    }

    void define_activation(Func &f, const Node &node) {
        const Expr v = here(node.producers[0]);
        const Type in = v.type(), out = halide_type(node.type);
        const std::string fn = node.param("fn");
        Expr a;
        if (fn == "relu") {
            a = max(v, zero(in));
        } else {
            // Integers are scaled so that their range spans the interesting part of the curve.
            const Expr fv = in.is_float() ? v : cast(Float(32), v) * float(4.0 / std::ldexp(1.0, in.bits() - 1));
            a = fn == "tanh" ? tanh(clamp(fv, -30.0f, 30.0f)) : 1.0f / (1.0f + exp(-clamp(fv, -30.0f, 30.0f)));
        }
        if (a.type().is_float() && !out.is_float()) {
            // Quantize: [0, 1] or [-1, 1] onto the integer range.
            const float scale = out.is_uint() ? 255.0f : 127.0f;
            f(vars_) = saturating_cast(out, round(clamp(a, -kFloatLimit, kFloatLimit) * scale));
        } else {
            f(vars_) = a.type().is_float() ? convert(a, out) : saturating_cast(out, a);
        }
    }

    void define_upsample(Func &f, const Node &node) {
        const int p = node.producers[0];
        const int fx = int(node.param_int("fx")), fy = int(node.param_int("fy"));
        const Type t = halide_type(node.type);
        const Expr x0 = x() / fx, y0 = y() / fy;
        if (node.param("mode") == "nearest" || t.is_bool()) {
            f(vars_) = at(p, x0, y0, c());
            return;
        }
        // Bilinear with integer weights: (fx - ax, ax) x (fy - ay, ay), normalized by fx * fy.
        const Type wide = widened(t);
        const Expr ax = cast(wide, x() % fx), ay = cast(wide, y() % fy);
        const Expr wx0 = cast(wide, fx) - ax, wy0 = cast(wide, fy) - ay;
        const Expr v = cast(wide, at(p, x0, y0, c())) * wx0 * wy0 + cast(wide, at(p, x0 + 1, y0, c())) * ax * wy0 +
                       cast(wide, at(p, x0, y0 + 1, c())) * wx0 * ay + cast(wide, at(p, x0 + 1, y0 + 1, c())) * ax * ay;
        f(vars_) = convert(divide(v, int64_t(fx) * fy), t);
    }

    // An expression tree with `slots` as its loads.
    Expr expr(const std::vector<ExprNode> &nodes, const std::vector<Expr> &slots) const {
        std::vector<Expr> value(nodes.size());
        for (size_t i = 0; i < nodes.size(); i++) {
            const ExprNode &e = nodes[i];
            const Type t = halide_type(e.type);
            auto arg = [&](size_t k) { return value[size_t(e.args[k])]; };
            auto targ = [&](size_t k) { return convert(arg(k), t); };
            Expr r;
            switch (e.op) {
            case ExprOp::Load: r = slots[size_t(e.value)]; break;
            case ExprOp::Const: r = constant(t, e.value); break;
            case ExprOp::Add: r = arith('+', targ(0), targ(1)); break;
            case ExprOp::Sub: r = arith('-', targ(0), targ(1)); break;
            case ExprOp::Mul: r = arith('*', targ(0), targ(1)); break;
            case ExprOp::Div:
                // A nonzero divisor: data-dependent in [1, value] for ints, 1 + |b| for floats.
                r = t.is_float() ? targ(0) / (abs(targ(1)) + 1.0f)
                                 : targ(0) / clamp(targ(1), constant(t, 1), constant(t, e.value));
                break;
            case ExprOp::Min: r = min(targ(0), targ(1)); break;
            case ExprOp::Max: r = max(targ(0), targ(1)); break;
            case ExprOp::AbsDiff: r = absd(targ(0), targ(1)); break;
            case ExprOp::Lt: r = arg(0) < arg(1); break;
            case ExprOp::Le: r = arg(0) <= arg(1); break;
            case ExprOp::Eq: r = arg(0) == arg(1); break;
            case ExprOp::Ne: r = arg(0) != arg(1); break;
            case ExprOp::And: r = arg(0) && arg(1); break;
            case ExprOp::Or: r = arg(0) || arg(1); break;
            case ExprOp::Not: r = !arg(0); break;
            case ExprOp::Select: r = select(arg(0), targ(1), targ(2)); break;
            case ExprOp::Cast: r = arg(0); break;
            case ExprOp::Exp: r = exp(clamp(targ(0), -10.0f, 10.0f)); break;
            case ExprOp::Log: r = log(abs(targ(0)) + 1.0f); break;
            case ExprOp::Sqrt: r = sqrt(abs(targ(0))); break;
            case ExprOp::Sin: r = sin(clamp(targ(0), -kFloatLimit, kFloatLimit)); break;
            case ExprOp::Tanh: r = tanh(clamp(targ(0), -30.0f, 30.0f)); break;
            case ExprOp::Abs: r = t.is_uint() ? targ(0) : abs(targ(0)); break;
            }
            value[i] = convert(r, t);
        }
        return value.back();
    }

    const PipelineSpec &spec_;
    const std::vector<InputSource> &inputs_;
    std::vector<Var> vars_;
    std::vector<Func> funcs_;
    std::map<size_t, size_t> input_of_; // input node -> index into inputs_
};

template<typename T>
void fill(Buffer<> &buf, common::Rng &rng, double lo, double hi) {
    Buffer<T> typed = buf.as<T>();
    T *data = typed.data();
    const size_t count = typed.number_of_elements();
    for (size_t i = 0; i < count; i++) {
        if constexpr (std::is_floating_point_v<T>) {
            data[i] = T(lo + (hi - lo) * rng.uniform01());
        } else {
            data[i] = T(rng.uniform_int(int64_t(lo), int64_t(hi)));
        }
    }
    typed.set_host_dirty(); // written through the pointer: a GPU pipeline copies it to the device
}

} // namespace

std::vector<Func> define_pipeline(const PipelineSpec &spec, const std::vector<InputSource> &inputs) {
    return Definer(spec, inputs).run();
}

Region estimate_region(const Node &node) {
    Region region;
    for (int64_t e : node.extents) region.emplace_back(0, int32_t(e));
    return region;
}

Buffer<> make_input_data(const Node &node, uint64_t seed) {
    std::vector<int> sizes(node.extents.begin(), node.extents.end());
    Buffer<> buf(halide_type(node.type), sizes);
    common::Rng rng(seed);
    const bool weights = !node.image;
    switch (node.type) {
    case ScalarType::UInt8: weights ? fill<uint8_t>(buf, rng, 0, 8) : fill<uint8_t>(buf, rng, 0, 255); break;
    case ScalarType::UInt16: fill<uint16_t>(buf, rng, 0, 65535); break;
    case ScalarType::UInt32: fill<uint32_t>(buf, rng, 0, 4294967295.0); break;
    case ScalarType::Int8: weights ? fill<int8_t>(buf, rng, -8, 8) : fill<int8_t>(buf, rng, -128, 127); break;
    case ScalarType::Int16: fill<int16_t>(buf, rng, -32768, 32767); break;
    case ScalarType::Int32: fill<int32_t>(buf, rng, -2147483648.0, 2147483647.0); break;
    case ScalarType::Float32: weights ? fill<float>(buf, rng, -0.5, 0.5) : fill<float>(buf, rng, -1, 1); break;
    case ScalarType::Bool: assert(false && "inputs are never bool"); break;
    }
    return buf;
}

std::vector<int> BuiltPipeline::output_extents() const {
    const Node &out = spec.nodes[size_t(spec.output)];
    return std::vector<int>(out.extents.begin(), out.extents.end());
}

void BuiltPipeline::schedule_compute_root() {
    for (size_t i = 0; i < funcs.size(); i++) {
        if (spec.nodes[i].kind != StageKind::Input) funcs[i].compute_root();
    }
}

Buffer<> BuiltPipeline::run(const Target &target) {
    Buffer<> out(halide_type(spec.nodes[size_t(spec.output)].type), output_extents());
    pipeline.realize(out, target);
    return out;
}

BuiltPipeline build_pipeline(const PipelineSpec &spec) {
    BuiltPipeline built;
    built.spec = spec;
    std::vector<InputSource> sources;
    for (int index : spec.input_nodes()) {
        const Node &node = spec.nodes[size_t(index)];
        ImageParam param(halide_type(node.type), int(node.extents.size()), "in" + std::to_string(index));
        Buffer<> data = make_input_data(node, common::derive_seed(spec.seed, 1000 + uint64_t(index)));
        param.set(data);
        param.set_estimates(estimate_region(node));
        InputSource src{Func(param), {}};
        for (int d = 0; d < param.dimensions(); d++) src.bounds.emplace_back(param.dim(d).min(), param.dim(d).extent());
        sources.push_back(std::move(src));
        built.params.push_back(param);
        built.inputs.push_back(data);
    }
    built.funcs = define_pipeline(spec, sources);
    built.output = built.funcs[size_t(spec.output)];
    built.output.set_estimates(estimate_region(spec.nodes[size_t(spec.output)]));
    built.pipeline = Pipeline(built.output);
    return built;
}

} // namespace schedforge::gen
