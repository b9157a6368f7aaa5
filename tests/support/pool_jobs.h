// A tiny described job for the benchmark runner's pool tests: out(x) = x * k over `size` points.
#pragma once

#include "common/wire.h"
#include "runner/benchmark_runner.h"

#include <Halide.h>

#include <string>

namespace schedforge::testing {

inline const std::string kRampJob = "test.ramp";

inline runner::JobSpec ramp_job(int size, int k) {
    common::ByteWriter w;
    w.put<int32_t>(size);
    w.put<int32_t>(k);
    return runner::JobSpec{kRampJob, w.bytes(), "ramp " + std::to_string(k)};
}

inline runner::PreparedJob build_ramp(const std::string &data) {
    common::ByteReader r(data);
    const int size = r.get<int32_t>(), k = r.get<int32_t>();
    Halide::Func out("ramp");
    Halide::Var x("x");
    out(x) = x * k;
    return runner::PreparedJob{Halide::Pipeline(out), Halide::Buffer<int32_t>(size)};
}

} // namespace schedforge::testing
