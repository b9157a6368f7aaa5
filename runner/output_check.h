// Comparing two realizations of the same pipeline under different schedules.
//
// Integer and bool outputs must match bit for bit. Float outputs may differ by rounding, since
// Halide compiles with reassociation and contraction allowed and schedules change evaluation
// order: they match when |a - b| <= kFloatAbsTol + kFloatRelTol * max(|a|, |b|).
#pragma once

#include <Halide.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

namespace schedforge::runner {

constexpr double kFloatRelTol = 1e-4;
constexpr double kFloatAbsTol = 1e-4;

// Empty when the buffers agree; otherwise a description of the first mismatch and the count.
// Integer values may differ by up to `integer_tolerance`; floats by `float_abs_tolerance` plus
// kFloatRelTol of their magnitude.
inline std::string compare_buffers(const Halide::Buffer<> &a, const Halide::Buffer<> &b, int64_t integer_tolerance = 0,
                                   double float_abs_tolerance = kFloatAbsTol) {
    if (a.type() != b.type() || a.dimensions() != b.dimensions()) return "type or dimensionality differs";
    for (int d = 0; d < a.dimensions(); d++) {
        if (a.dim(d).extent() != b.dim(d).extent() || a.dim(d).min() != b.dim(d).min()) return "shapes differ";
    }
    int64_t mismatches = 0;
    std::string first;
    // Dense copies share one layout, so elements pair up by linear index.
    const Halide::Buffer<> da = a.copy(), db = b.copy();
    auto check = [&](auto tag) {
        using T = decltype(tag);
        const T *pa = static_cast<const T *>(da.data()), *pb = static_cast<const T *>(db.data());
        for (size_t i = 0; i < da.number_of_elements(); i++) {
            const T va = pa[i], vb = pb[i];
            bool same;
            if constexpr (std::is_floating_point_v<T>) {
                same = std::abs(double(va) - double(vb)) <=
                       float_abs_tolerance + kFloatRelTol * std::max(std::abs(double(va)), std::abs(double(vb)));
            } else {
                same = std::abs(int64_t(va) - int64_t(vb)) <= integer_tolerance;
            }
            if (!same && mismatches++ == 0) {
                std::ostringstream s;
                s << "at (";
                size_t rest = i;
                for (int d = 0; d < da.dimensions(); d++) {
                    s << (d ? "," : "") << da.dim(d).min() + int(rest % size_t(da.dim(d).extent()));
                    rest /= size_t(da.dim(d).extent());
                }
                s << "): " << +va << " vs " << +vb;
                first = s.str();
            }
        }
    };
    const Halide::Type t = a.type();
    if (t.is_float())
        check(float{});
    else if (t == Halide::UInt(8) || t.is_bool())
        check(uint8_t{});
    else if (t == Halide::UInt(16))
        check(uint16_t{});
    else if (t == Halide::UInt(32))
        check(uint32_t{});
    else if (t == Halide::Int(8))
        check(int8_t{});
    else if (t == Halide::Int(16))
        check(int16_t{});
    else if (t == Halide::Int(32))
        check(int32_t{});
    else
        return "unsupported output type";
    if (mismatches == 0) return "";
    return std::to_string(mismatches) + " of " + std::to_string(a.number_of_elements()) + " values differ, first " +
           first;
}

// The largest magnitude of a float buffer (0 for other types). Without StrictFloat, a long
// reduction's rounding depends on the schedule: an absolute tolerance scaled by this keeps
// near-zero outputs of large sums from counting as wrong.
inline double float_scale(const Halide::Buffer<> &b) {
    if (!b.type().is_float() || b.type().bits() != 32) return 0;
    const Halide::Buffer<> dense = b.copy();
    const float *p = static_cast<const float *>(dense.data());
    double scale = 0;
    for (size_t i = 0; i < dense.number_of_elements(); i++) scale = std::max(scale, std::abs(double(p[i])));
    return scale;
}

// The absolute float tolerance for outputs compared with a reference of largest magnitude
// `reference_scale` (float_scale).
inline double scaled_abs_tolerance(double reference_scale) {
    return std::max(kFloatAbsTol, kFloatRelTol * reference_scale);
}

} // namespace schedforge::runner
