// Command lines for the project's programs, for tests that run them as a user does. The test
// target defines GENERATE_PIPELINES, COMPARE_SCHEDULERS and RANDOM_PIPELINE_GENERATOR as the
// programs' paths.
#pragma once

#include "tests/support/process.h"

#include <string>

namespace schedforge::testing {

inline std::string gp(const std::string &args) { return std::string(GENERATE_PIPELINES) + " " + args; }

inline std::string compare_schedulers(const std::string &args) { return std::string(COMPARE_SCHEDULERS) + " " + args; }

// The random_pipeline Generator writing a static library, header and .stmt into `out`.
inline std::string generator(const fs::path &out, const std::string &params) {
    return std::string(RANDOM_PIPELINE_GENERATOR) + " -g random_pipeline -o " + out.string() +
           " -e static_library,h,stmt target=host " + params;
}

} // namespace schedforge::testing
