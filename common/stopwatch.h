// Elapsed wall time, for the time splits that tools and benchmarks report.
#pragma once

#include <chrono>

namespace schedforge {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace schedforge
