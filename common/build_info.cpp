#include "common/build_info.h"

#include "schedforge_commit.h" // generated at build time: SCHEDFORGE_COMMIT

namespace schedforge::common {

std::string producer() { return std::string("schedforge ") + SCHEDFORGE_VERSION; }
std::string producer_commit() { return SCHEDFORGE_COMMIT; }

} // namespace schedforge::common
