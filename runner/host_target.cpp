#include "runner/host_target.h"

#include "runner/cuda_device.h"

#include <cpuid.h>

namespace schedforge::runner {

namespace {
bool has_avx512_fp16() {
    static const bool has = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 23)) != 0; // CPUID.(7,0):EDX[23]
    }();
    return has;
}
} // namespace

Halide::Target runnable_here(Halide::Target t) {
    if (t.has_feature(Halide::Target::AVX512_SapphireRapids) && !has_avx512_fp16())
        t = t.without_feature(Halide::Target::AVX512_SapphireRapids);
    return with_cuda_capability(t);
}

Halide::Target host_target() { return runnable_here(Halide::get_host_target()); }

Halide::Target jit_target() { return runnable_here(Halide::get_jit_target_from_environment()); }

} // namespace schedforge::runner
