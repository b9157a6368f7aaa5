// Apply: a complete LoopNest becomes a real Halide schedule on the pipeline's Funcs, and Halide
// C++ source that reproduces it inside a Generator's schedule().
//
// Both come from one list of directives, so the text and the applied schedule cannot drift:
// per stage, each pure loop is split once per tiling level whose loop has more than one
// iteration (tails shifted inwards, or guarded where guards_tails() says so); the vectorized loop is split by the
// vector width and vectorized (a guarded loop split twice or more is renamed first: Halide 14 drops
// the guard of such splits under the Func's own loop name, test NestedGuardedSplits.StayInBounds); loops are reordered
// level by level (reduction loops innermost within their level); level 0's pure loops are fused into one parallel loop;
// the point level's pure loops are unrolled on request. A GPU stage's (StageTiling::gpu) pure loops are split at every
// level whatever their trips (thread loops need constant extents); level 0's become GPU blocks (Funcs at root) and
// level 1's GPU threads, up to three of each, the outer ones fused into the third; Halide puts a Func computed at the
// block level in the block's shared memory, one computed per thread in its registers. Then each Func is inlined,
// computed at root, or computed and stored at the innermost loop of the host stage's tiling level. A Func stored inside
// a loop nest that a consumer reads at a stride along its innermost dimension, or whose stored rows are 2 to 4 points
// wide, has its innermost dimension's storage padded to 64 bytes (Node::storage_padding): Halide 14 loads a strided
// vector as a wider dense one, which it may mark aligned when it is not (a row of odd extent read at a constant row
// offset, under an unrolled loop), and an aligned 64-byte load at such an address faults on AVX-512 (reproducer:
// tests/featurize/apply_test.cpp, StridedReads.OddRowsArePaddedToAlignedStorage). The padding does not cover a strided
// read at a constant column offset that is not a multiple of 16; the codegen guard does, at its root
// (featurize/codegen_guard.h): apply() adds it to the DAG's pipeline.
#pragma once

#include "featurize/loop_nest.h"

#include <string>
#include <vector>

namespace schedforge::featurize {

struct Directive {
    enum Kind {
        ComputeInline,
        ComputeRoot,
        ComputeAt,
        StoreRoot,
        StoreAt,
        Split,
        Rename, // vars: old, new (a guarded loop split twice or more, before its splits)
        Reorder,
        Fuse,
        Vectorize,
        Parallel,
        Unroll,
        Unscheduled,  // an update kept in its default loop nest, on purpose
        AlignStorage, // pad the Func's storage along vars[0] to a multiple of `factor` elements
        GpuBlocks,    // the loop is a dimension of the GPU grid (innermost first: x, y, z)
        GpuThreads    // the loop is a dimension of a GPU block's threads
    };
    struct VarName {
        std::string name;
        bool rvar = false;
    };
    Kind kind;
    StageRef stage;            // the stage scheduled (stage 0 for compute/store directives)
    std::vector<VarName> vars; // Split: old, outer, inner. Fuse: inner, outer, fused. Reorder:
                               // innermost first. Vectorize/Parallel/Unroll: the loop.
                               // ComputeAt/StoreAt: the host's loop.
    int64_t factor = 0;        // Split
    bool guard_tail = false;   // Split: GuardWithIf rather than ShiftInwards
    StageRef host;             // ComputeAt/StoreAt
};

// The directives for a complete, legal LoopNest (throws std::invalid_argument otherwise).
std::vector<Directive> schedule_directives(const FunctionDAG &dag, const LoopNest &nest);

// Schedules the DAG's Funcs (they share their definitions with the pipeline it was built from).
// A pipeline can be scheduled once; build a fresh one for another LoopNest.
void apply(const FunctionDAG &dag, const LoopNest &nest);

// Halide C++ statements that schedule a Halide::Pipeline named `pipeline` (in a Generator's
// schedule(): Pipeline pipeline = get_pipeline();); Funcs are fetched with pipeline.get_func(i).
// The plugin returns them as its schedule source, which GenGen wraps in a function taking `pipeline`.
std::string schedule_source(const FunctionDAG &dag, const LoopNest &nest);

} // namespace schedforge::featurize
