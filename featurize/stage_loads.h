// The loads a stage makes under a schedule: every call to a Func or image that is not inlined,
// with the Jacobians of inlined Funcs composed into the stage's loops. The CPU and GPU features
// both start from them.
#pragma once

#include "featurize/loop_nest.h"

#include <map>
#include <vector>

namespace schedforge::featurize {

// Jacobian arithmetic over exact rationals with unknowns (nullopt): a zero times an unknown is zero.
JacobianEntry jacobian_multiply(const JacobianEntry &a, const JacobianEntry &b);
JacobianEntry jacobian_add(const JacobianEntry &a, const JacobianEntry &b);

// One load of a stage from a Func or image that is not inlined: how its coordinates move with
// the stage's loops.
struct Load {
    int producer = -1;
    Jacobian jacobian; // producer dims x the stage's loops
};

// Every load of `s` in `nest`, with inlined Funcs expanded and their Jacobians composed: the
// steady state's (Jacobian::steady_entries: a clamped index loads as its argument does); a
// repeated call (Jacobian::repeat) once; an update's calls to its own Func included.
std::vector<Load> stage_loads(const FunctionDAG &dag, const LoopNest &nest, StageRef s);

// The producers `s` reads over its `loop_bounds`, looking through inlined Funcs: per producer
// (not inlined), the union of the regions read, added to `out`.
void stage_reads(const FunctionDAG &dag, const LoopNest &nest, StageRef s, const Region &loop_bounds,
                 std::map<int, Region> &out);

} // namespace schedforge::featurize
