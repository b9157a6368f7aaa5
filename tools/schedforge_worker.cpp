// schedforge-worker: the benchmark runner's pooled worker program (runner/job_worker.h). The
// runner starts it, by exec, for jobs described as data; it is not meant to be run by hand.
#include "datagen/jobs.h"
#include "runner/job_worker.h"

int main(int argc, char **argv) {
    schedforge::runner::JobKinds kinds;
    schedforge::datagen::add_job_kinds(&kinds);
    return schedforge::runner::serve_jobs(kinds, argc, argv);
}
