// Codegen guard: a lowering pass that keeps Halide 14's code generator from emitting aligned vector
// loads at addresses that are not aligned.
//
// Halide 14 loads a vector read at stride 2 to 4 as a wider dense vector starting at the nearest
// lower multiple of the stride, and moves the index's known alignment down with it. When the index
// is a compile-time constant (a buffer stored inside a loop nest, read under unrolled or peeled
// loops: every term of the address folds away), its alignment is "exactly c", and moving it is
// computed modulo 0, which Halide defines as 0: the dense load is declared aligned to the native
// vector. On AVX-512 an aligned 64-byte load at an address that is not faults (a dataset run
// segfaulted; reproducer: tests/featurize/codegen_guard_test.cpp). The guard forgets the alignment
// of exactly these loads, so they compile to unaligned loads; all other loads keep theirs.
#pragma once

namespace Halide {
class Pipeline;
}

namespace schedforge::featurize {

// Adds the guard to the pipeline's lowering passes unless it is there already. Call it before
// compiling a scheduled pipeline; apply() does for the Pipeline its FunctionDAG was built from,
// and the benchmark runner for every pipeline it compiles. A schedule's source text
// (schedule_source) applied without this library lacks it. The plugin and the program that loads
// it each have their own copy of the pass's type, so a pipeline may get it twice: harmless.
void guard_codegen(Halide::Pipeline pipeline); // a handle: the guard lands on the pipeline it names

} // namespace schedforge::featurize
