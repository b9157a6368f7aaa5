// The note the benchmark runner leaves in an ok job's message when its runtime had to be timed
// while other processes held the CPUs (runner/timing.h: its retakes ran out). Such a label may
// be up to cores x too slow, so readers of datasets (training, calibration) leave it out.
#pragma once

#include <string_view>

namespace schedforge::common {

inline constexpr std::string_view kContendedTimingNote = "timed while other processes held the CPUs";

inline bool timed_under_contention(std::string_view message) {
    return message.find(kContendedTimingNote) != std::string_view::npos;
}

} // namespace schedforge::common
