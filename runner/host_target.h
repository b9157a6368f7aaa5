// The target this machine compiles and runs Halide code for.
//
// Halide 14 takes any x86 CPU with AVX512-BF16 and VNNI for a Sapphire Rapids
// (Target::AVX512_SapphireRapids), and LLVM then uses every instruction of that chip. AMD's
// Zen 4 and Zen 5 have BF16 but not AVX512-FP16: code compiled so dies there of an illegal
// instruction. These functions are Halide's own, less that feature on a CPU without AVX512-FP16.
// Every program and test of the project takes its host or JIT target from here.
#pragma once

#include <Halide.h>

namespace schedforge::runner {

// Halide::get_host_target(), corrected as above.
Halide::Target host_target();
// Halide::get_jit_target_from_environment() (HL_JIT_TARGET, else the host), corrected as above:
// JIT code runs on this CPU.
Halide::Target jit_target();
// `t` less AVX512_SapphireRapids where this CPU lacks AVX512-FP16, and with the CUDA device's
// compute capability where it has CUDA but names none (runner/cuda_device.h; UserError without one).
Halide::Target runnable_here(Halide::Target t);

} // namespace schedforge::runner
