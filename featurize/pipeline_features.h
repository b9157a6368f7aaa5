// PipelineFeatures: the algorithm-specific, schedule-invariant features of one stage (the pure
// definition or one update of a Func) of a FunctionDAG, after Adams et al. 2019 §4.1. They
// describe the work done to compute one point of the stage's iteration domain:
//   op_histogram      Halide IR operations in the stage's definition, by kind and scalar type;
//   access_histogram  loads from other Funcs, from the Func itself and from input images, and
//                     the store, by the access pattern their Jacobians show and by scalar type.
// The features depend on the algorithm alone, so the search computes them once per pipeline.
//
// Entry points: compute_pipeline_features(dag, node, stage); PipelineFeatures::names() and
// values() for the flat, versioned vector the cost model and the datasets see.
//
// Counting rules (the .cpp says how each is implemented):
//   - Every IR node of the definition's values, LHS arguments and predicate (when it is not
//     the constant true) counts once, including the index arithmetic of calls and the loop
//     variables themselves: what one point costs before lowering. Halide has already CSE'd the
//     values, so a repeated subexpression counts once, bound by a Let.
//   - An op is classified by its result type, except comparisons, whose result is always bool:
//     they are classified by the type of their operands (a float compare is not an int
//     compare). Let counts under the type of the bound value. GT and GE count as LT and LE
//     (Halide's simplifier canonicalizes them so), and a Func call under the value it loads.
//   - Scalar types: signed integers go with the unsigned type of their width (int16 counts as
//     uint16, int64 as uint64), float16 and bfloat16 with float32, handles (pointers) with uint64.
//   - Access classes, from each access's Jacobian (producer coordinate by consumer loop, from
//     the FunctionDAG) compared with the store's, are documented at AccessClass. An access
//     counts once in every class whose rule it meets: pointwise and gather exclude the others,
//     the rest combine (conv's input window is broadcast, stencil and reduce at once). The
//     rules leave no access out (a test checks it on every app): per kind, the class counts
//     sum to at least the accesses.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace schedforge::featurize {

class FunctionDAG;

struct PipelineFeatures {
    // Operation kinds; names() spells them in lower case ("op.func_call.float32").
    enum class OpType {
        Const,    // IntImm, UIntImm, FloatImm, StringImm
        Cast,     // explicit and implicit conversions
        Variable, // pure and reduction loop variables, lets' names
        Param,    // scalar parameters and buffer metadata (input.min.0, ...)
        Add,
        Sub,
        Mod,
        Mul,
        Div,
        Min,
        Max,
        EQ,
        NE,
        LT,  // also GT, with its operands swapped
        LE,  // also GE, with its operands swapped
        And, // logical
        Or,  // logical
        Not, // logical
        Select,
        ImageCall,  // a load from an input image or Buffer
        FuncCall,   // a load from another Func
        SelfCall,   // a load from the Func this stage defines (an update's accumulator, a scan)
        ExternCall, // extern and pure-extern calls: exp_f32, sqrt_f32, ...
        Bitwise,    // the bitwise_and/or/xor/not intrinsics (&, |, ^, ~)
        Shift,      // the shift_left/shift_right intrinsics (<<, >>)
        Intrinsic,  // every other intrinsic: abs, absd, lerp, likely, reinterpret, ...
        Let,
        Count
    };
    // Scalar type classes (see the file comment for how signed and narrow types map).
    enum class ScalarType { Bool, UInt8, UInt16, UInt32, UInt64, Float32, Float64, Count };
    // Access patterns. Notation: J is the access's Jacobian (producer dimension x consumer loop,
    // entries exact rationals or unknown); S is the Jacobian of the point the stage writes: its
    // LHS arguments (for the store itself, the Func's pure variables in order), less those fixed
    // for the whole stage (f(x, 0) = ...). Output loops are those S moves along with a known
    // slope; reduction loops are the others (RVars missing from the LHS, a scatter's loops),
    // along which the stage revisits the same points.
    enum class AccessClass {
        Pointwise,  // J == S and no constant shift from the written point, and not a stencil tap
        Transpose,  // the producer's dimensions follow the output loops in another arrangement than
                    // S's: permuted (g(y, x)), mirrored against S (g(-x)), skewed (g(x + y)) or
                    // diagonal (g(x, x))
        Broadcast,  // J is zero along some output loop: one value is reused along that loop
        Slice,      // some producer dimension moves with no loop: the access is pinned to a slice
        Stencil,    // reads a neighbourhood of points: two or more calls to the same producer with
                    // equal J at different points (the taps, the centre one included), J == S but
                    // shifted (a one-tap stencil, a scan's f(r - 1)), or a dimension moving along an
                    // output and a reduction loop at once (a window: in(x + r.x))
        Reduce,     // some producer dimension moves along reduction loops only (matmul's A(k, y))
        Downsample, // some producer dimension moves faster than S along a loop (than 1 along a
                    // reduction loop): strided, in(2 * x)
        Upsample,   // some producer dimension moves slower, but moves: down(x / 2)
        Gather,     // some entry of J is unknown: data-dependent (a lookup, a scatter's store)
        Count
    };
    enum class AccessKind { LoadFunc, LoadSelf, LoadImage, Store, Count };

    static constexpr int kNumOps = int(OpType::Count);
    static constexpr int kNumTypes = int(ScalarType::Count);
    static constexpr int kNumAccessClasses = int(AccessClass::Count);
    static constexpr int kNumAccessKinds = int(AccessKind::Count);
    static constexpr int kNumFeatures = kNumOps * kNumTypes + kNumAccessClasses * kNumAccessKinds * kNumTypes;

    // Operations per point computed.
    int64_t op_histogram[kNumOps][kNumTypes] = {};
    // Accesses per point computed, by class (non-exclusive, see AccessClass), kind and the type
    // of the value loaded or stored (one store per Tuple element).
    int64_t access_histogram[kNumAccessClasses][kNumAccessKinds][kNumTypes] = {};

    int64_t &ops(OpType op, ScalarType t) { return op_histogram[int(op)][int(t)]; }
    int64_t ops(OpType op, ScalarType t) const { return op_histogram[int(op)][int(t)]; }
    int64_t &accesses(AccessClass c, AccessKind k, ScalarType t) { return access_histogram[int(c)][int(k)][int(t)]; }
    int64_t accesses(AccessClass c, AccessKind k, ScalarType t) const {
        return access_histogram[int(c)][int(k)][int(t)];
    }

    // Changing the feature list or a counting rule bumps the version.
    static int version() { return 1; }
    static constexpr int num_features() { return kNumFeatures; }
    // Stable names in storage order: "op.<op>.<type>" for every op and type, then
    // "access.<class>.<kind>.<type>" with kinds func, self, image and store.
    static const std::vector<std::string> &names();
    std::array<double, kNumFeatures> values() const;
    // "name value" per nonzero feature, one a line, in storage order.
    std::string describe() const;
};

// The features of stage `stage` of node `node` (a Func, not an input) of `dag`.
PipelineFeatures compute_pipeline_features(const FunctionDAG &dag, int node, int stage);

} // namespace schedforge::featurize
