// The tests' worker program: the dataset engine's job kinds, the fault kind around any of them
// (tests/support/faults.h), and a tiny pipeline for the runner's own tests (pool_jobs.h).
#include "datagen/jobs.h"
#include "runner/job_worker.h"
#include "tests/support/faults.h"
#include "tests/support/pool_jobs.h"

int main(int argc, char **argv) {
    namespace rn = schedforge::runner;
    rn::JobKinds kinds;
    schedforge::datagen::add_job_kinds(&kinds);
    kinds[schedforge::testing::kRampJob] = schedforge::testing::build_ramp;
    kinds[schedforge::testing::kFaultJob] = [&kinds](const std::string &data) {
        return schedforge::testing::build_faulty(kinds, data);
    };
    return rn::serve_jobs(kinds, argc, argv);
}
