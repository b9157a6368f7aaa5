// Small statistics over samples, shared by the runner, the dataset tools and the benchmarks.
#pragma once

#include <algorithm>
#include <vector>

namespace schedforge {

// The median of `v` (the mean of the middle two for an even count); 0 for no values.
inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

} // namespace schedforge
