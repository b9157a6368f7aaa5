// A reference interpreter for the generator's expression trees (Pointwise and Lut stages).
//
// It follows the semantics build.cpp gives each ExprOp in Halide: integers wrap to their type,
// float-to-int conversions saturate and truncate, transcendentals get the same clamped operands,
// integer division floors. Floats are evaluated in long double, not float32, so float results are
// close to Halide's rather than bit-exact.
//
// The synthesizer uses it to reject expressions in which some producer cannot affect the result
// ((a + 6) - (a + 10), a * 0, ...): Halide's simplifier would drop such a producer, and the spec
// would claim an edge the compiled pipeline does not have.
#pragma once

#include "common/rng.h"
#include "spec.h"

#include <vector>

namespace schedforge::gen {

// The value of `expr` for the given slot values (each already a value of its slot's type).
long double evaluate_expr(const std::vector<ExprNode> &expr, const std::vector<long double> &slots);

// A random value of type t: integers over their whole range, floats in [-100, 100), bools 0/1.
long double random_value(ScalarType t, common::Rng &rng);

// True when, for every slot, some of `trials` random inputs change the result when that slot
// alone changes.
bool every_slot_matters(const std::vector<ExprNode> &expr, const std::vector<ScalarType> &slot_types, common::Rng &rng,
                        int trials = 24);

} // namespace schedforge::gen
