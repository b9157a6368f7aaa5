#include "runner/job_worker.h"
#include "runner/worker_side.h"

#include "common/errors.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace schedforge::runner {

int serve_jobs(const JobKinds &kinds, int argc, char **argv) {
    int result_fd = -1, command_fd = -1;
    pid_t parent = 0;
    if (argc != 5 || std::string(argv[1]) != "--serve" || std::sscanf(argv[2], "%d", &result_fd) != 1 ||
        std::sscanf(argv[3], "%d", &command_fd) != 1 || std::sscanf(argv[4], "%d", &parent) != 1) {
        std::cerr << "usage: " << (argc > 0 ? argv[0] : "worker")
                  << " --serve RESULT_FD COMMAND_FD RUNNER_PID (the benchmark runner starts it)\n";
        return 2;
    }
    char tag = 0;
    std::string frame;
    if (!worker::receive(command_fd, &tag, &frame) || tag != 'O') return 1;
    common::ByteReader r(frame);
    if (r.get<uint32_t>() != worker::kWireVersion) {
        std::cerr << argv[0] << ": the runner speaks another wire version (a worker of another build?)\n";
        return 1;
    }
    const RunnerOptions options = worker::get_options(r);
    if (!r.ok()) return 1;
    const int threads = worker::enter_worker_process(options, parent);
    while (worker::receive(command_fd, &tag, &frame)) {
        common::ByteReader j(frame);
        const std::string kind = j.get_string(), data = j.get_string();
        const bool return_output = j.get<uint8_t>() != 0;
        std::optional<Halide::Buffer<>> reference;
        if (j.get<uint8_t>() != 0) reference = worker::get_buffer(j);
        const bool whole = tag == 'J' && j.ok();
        worker::run_job(
            [&]() -> PreparedJob {
                if (!whole) throw worker::JobFailure{JobStatus::Crash, "malformed job from the runner"};
                const auto it = kinds.find(kind);
                if (it == kinds.end())
                    throw worker::JobFailure{JobStatus::Crash, "the worker program knows no job kind '" + kind + "'"};
                return it->second(data);
            },
            reference, return_output, options, threads, result_fd, command_fd);
    }
    return 0;
}

std::string worker_program(const RunnerOptions &options) {
    namespace fs = std::filesystem;
    std::string program = options.worker_program;
    if (program.empty()) {
        if (const char *env = std::getenv("SCHEDFORGE_WORKER"); env && *env) program = env;
    }
    if (program.empty()) {
        std::error_code ec;
        const fs::path beside = fs::read_symlink("/proc/self/exe", ec).parent_path() / "schedforge-worker";
        program = !ec && fs::exists(beside) ? beside.string() : SCHEDFORGE_WORKER_IN_BUILD;
    }
    if (::access(program.c_str(), X_OK) != 0)
        throw UserError("benchmark runner: the worker program '" + program +
                        "' is not an executable file (build the schedforge-worker target, or set SCHEDFORGE_WORKER)");
    return program;
}

} // namespace schedforge::runner
