// What this build is, for the provenance attributes of the files the tools write.
#pragma once

#include <string>

namespace schedforge::common {

std::string producer();        // "schedforge 0.1.0"
std::string producer_commit(); // the git commit built from, "-dirty" if modified ("unknown" outside git)

} // namespace schedforge::common
