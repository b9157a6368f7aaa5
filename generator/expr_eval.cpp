#include "expr_eval.h"

#include <algorithm>
#include <cmath>

namespace schedforge::gen {

namespace {

using T = ScalarType;
using Real = long double;

Real type_min(T t) { return is_signed_int(t) ? -std::ldexp(Real(1), type_bits(t) - 1) : 0; }
Real type_max(T t) {
    if (is_signed_int(t)) return std::ldexp(Real(1), type_bits(t) - 1) - 1;
    return std::ldexp(Real(1), type_bits(t)) - 1;
}

// An integer value wrapped into t's range (two's complement).
Real wrap(Real v, T t) {
    const Real span = std::ldexp(Real(1), type_bits(t));
    Real r = std::fmod(v, span);
    if (r < 0) r += span;
    if (is_signed_int(t) && r > type_max(t)) r -= span;
    return r;
}

// Value conversion as build.cpp's convert(): bool tests != 0, float-to-int saturates and
// truncates, int-to-int wraps.
Real convert(Real v, T from, T to) {
    if (to == T::Bool) return v != 0 ? 1 : 0;
    if (to == T::Float32) return v;
    if (from == T::Float32) return std::trunc(std::clamp(v, type_min(to), type_max(to)));
    return wrap(v, to);
}

// The result of an arithmetic op on values of type t, as Halide computes it in t.
Real arith(Real v, T t) { return t == T::Float32 ? v : wrap(v, t); }

constexpr Real kFloatLimit = 1e4L;

} // namespace

Real evaluate_expr(const std::vector<ExprNode> &expr, const std::vector<Real> &slots) {
    std::vector<Real> value(expr.size());
    for (size_t i = 0; i < expr.size(); i++) {
        const ExprNode &e = expr[i];
        const T t = e.type;
        auto arg = [&](size_t k) { return value[size_t(e.args[k])]; };
        auto arg_type = [&](size_t k) { return expr[size_t(e.args[k])].type; };
        auto targ = [&](size_t k) { return convert(arg(k), arg_type(k), t); };
        Real r = 0;
        T r_type = t; // the type r is a value of, before the final conversion to t
        switch (e.op) {
        case ExprOp::Load: r = slots[size_t(e.value)], r_type = t; break;
        case ExprOp::Const: r = Real(e.value); break;
        case ExprOp::Add: r = arith(targ(0) + targ(1), t); break;
        case ExprOp::Sub: r = arith(targ(0) - targ(1), t); break;
        case ExprOp::Mul:
            r = t == T::Float32 ? std::clamp(targ(0) * targ(1), -kFloatLimit * kFloatLimit, kFloatLimit * kFloatLimit)
                                : arith(targ(0) * targ(1), t);
            break;
        case ExprOp::Div:
            r = t == T::Float32 ? targ(0) / (std::fabs(targ(1)) + 1)
                                : std::floor(targ(0) / std::clamp(targ(1), Real(1), Real(e.value)));
            break;
        case ExprOp::Min: r = std::min(targ(0), targ(1)); break;
        case ExprOp::Max: r = std::max(targ(0), targ(1)); break;
        case ExprOp::AbsDiff: r = arith(std::fabs(targ(0) - targ(1)), t); break;
        case ExprOp::Lt: r = arg(0) < arg(1); break;
        case ExprOp::Le: r = arg(0) <= arg(1); break;
        case ExprOp::Eq: r = arg(0) == arg(1); break;
        case ExprOp::Ne: r = arg(0) != arg(1); break;
        case ExprOp::And: r = arg(0) != 0 && arg(1) != 0; break;
        case ExprOp::Or: r = arg(0) != 0 || arg(1) != 0; break;
        case ExprOp::Not: r = arg(0) == 0; break;
        case ExprOp::Select: r = arg(0) != 0 ? targ(1) : targ(2); break;
        case ExprOp::Cast: r = arg(0), r_type = arg_type(0); break;
        case ExprOp::Exp: r = std::exp(std::clamp(targ(0), Real(-10), Real(10))); break;
        case ExprOp::Log: r = std::log(std::fabs(targ(0)) + 1); break;
        case ExprOp::Sqrt: r = std::sqrt(std::fabs(targ(0))); break;
        case ExprOp::Sin: r = std::sin(std::clamp(targ(0), -kFloatLimit, kFloatLimit)); break;
        case ExprOp::Tanh: r = std::tanh(std::clamp(targ(0), Real(-30), Real(30))); break;
        case ExprOp::Abs: r = arith(std::fabs(targ(0)), t); break;
        }
        if (e.op == ExprOp::Lt || e.op == ExprOp::Le || e.op == ExprOp::Eq || e.op == ExprOp::Ne ||
            e.op == ExprOp::And || e.op == ExprOp::Or || e.op == ExprOp::Not) {
            r_type = T::Bool;
        }
        value[i] = convert(r, r_type, t);
    }
    return value.back();
}

Real random_value(T t, common::Rng &rng) {
    if (t == T::Float32) return Real(rng.uniform01() * 200.0 - 100.0);
    if (t == T::Bool) return Real(rng.uniform_int(0, 1));
    return Real(rng.uniform_int(int64_t(type_min(t)), int64_t(type_max(t))));
}

bool every_slot_matters(const std::vector<ExprNode> &expr, const std::vector<T> &slot_types, common::Rng &rng,
                        int trials) {
    std::vector<bool> live(slot_types.size(), false);
    std::vector<Real> slots(slot_types.size());
    for (int trial = 0; trial < trials; trial++) {
        for (size_t s = 0; s < slots.size(); s++) slots[s] = random_value(slot_types[s], rng);
        const Real base = evaluate_expr(expr, slots);
        for (size_t s = 0; s < slots.size(); s++) {
            if (live[s]) continue;
            std::vector<Real> changed = slots;
            changed[s] = random_value(slot_types[s], rng);
            live[s] = evaluate_expr(expr, changed) != base;
        }
    }
    return std::all_of(live.begin(), live.end(), [](bool b) { return b; });
}

} // namespace schedforge::gen
