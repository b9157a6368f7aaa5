// Command lines for the project's programs, for tests that run them as a user does. The test
// target defines the programs' paths and the ahead-of-time target (SCHEDFORGE_PROGRAM_PATHS in
// tests/CMakeLists.txt).
#pragma once

#include "tests/support/process.h"

#include <string>

namespace schedforge::testing {

inline std::string gp(const std::string &args) { return std::string(GENERATE_PIPELINES) + " " + args; }

inline std::string autoschedule(const std::string &args) { return std::string(AUTOSCHEDULE) + " " + args; }

inline std::string bench_search(const std::string &args) { return std::string(BENCH_SEARCH) + " " + args; }

inline std::string compare_schedulers(const std::string &args) { return std::string(COMPARE_SCHEDULERS) + " " + args; }

// The random_pipeline Generator writing a static library, header and .stmt into `out`.
inline std::string generator(const fs::path &out, const std::string &params) {
    return std::string(RANDOM_PIPELINE_GENERATOR) + " -g random_pipeline -o " + out.string() +
           " -e static_library,h,stmt target=" AOT_TARGET " " + params;
}

// The `app` Generator building app NAME (in `params` as app=NAME) into `out`.
inline std::string app_generator(const fs::path &out, const std::string &params,
                                 const std::string &emit = "static_library,h,stmt") {
    return std::string(APP_GENERATOR) + " -g app -o " + out.string() + " -e " + emit + " target=" AOT_TARGET " " +
           params;
}

} // namespace schedforge::testing
