// A LoopNest as versioned text, so that datasets can store the schedules themselves and not only
// their features: a corpus then outlives a change of the featurizer (`dataset refeaturize`
// computes the new features from the stored nests instead of benchmarking again).
//
// Version 1, one line per node of the FunctionDAG (inputs included), each followed by one line
// per stage tiling it holds (none for Funcs inlined or not scheduled):
//
//   schedforge-loop-nest 1 nodes 4
//   node 0 blur_y compute root store root stages 1
//   stage 0 tiles 32,8/8,1 vector 0 8 parallel 1 unroll 0
//   node 1 blur_x compute at 0.0.0 store at 0.0.0 stages 1
//   stage 0 tiles - vector 0 8 parallel 0 unroll 0
//   node 2 in_im compute inline store inline stages 0
//   node 3 in compute unscheduled store unscheduled stages 0
//
// Sites are `unscheduled`, `inline`, `root` or `at NODE.STAGE.LEVEL`; tiles list each tiling
// level's extents, innermost loop first, levels separated by '/', '-' for none. Node names (their
// stable_name: without the suffixes that differ from process to process) are checked against
// the DAG, so a nest cannot be read into another pipeline by mistake. A stage tiled onto a GPU
// (StageTiling::gpu) ends its line with ` gpu`; a CPU stage's line is as before, so version 1
// readers of CPU nests are unaffected (an older reader refuses a GPU nest's line).
#pragma once

#include "featurize/loop_nest.h"

#include <string>

namespace schedforge::featurize {

inline constexpr int kLoopNestTextVersion = 1;

std::string nest_text(const FunctionDAG &dag, const LoopNest &nest);

// The nest `text` describes, for `dag`. Throws UserError naming the first problem: another
// version, another pipeline (node count, names, stages, loops), malformed text, or a schedule
// that is not legal for `dag` (LoopNest::validate).
LoopNest parse_nest_text(const FunctionDAG &dag, const std::string &text);

} // namespace schedforge::featurize
