// Running the project's other tools as child processes. `bootstrap` drives generate-dataset,
// train-cost-model and compare-schedulers this way rather than calling their libraries: each
// step keeps the process model it was written for (generate-dataset forks its workers before it
// starts any thread or JIT), and a crash in one step cannot take the driver with it.
#pragma once

#include "common/errors.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace schedforge::tools {

// The path of the program `name` installed beside this executable (build/tools/ or bin/).
inline std::string sibling_program(const std::string &name) {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::filesystem::path path = (ec ? std::filesystem::path(".") : self.parent_path()) / name;
    if (::access(path.c_str(), X_OK) != 0)
        throw std::runtime_error(path.string() + ": not found beside this program (a broken build or install?)");
    return path.string();
}

// Runs `program` with `args`, its output going to ours, and returns its exit code (128 + the
// signal's number if a signal ended it, as shells report it). The child gets the default
// SIGINT action whatever ours is, so Ctrl-C reaches it as it would from a shell.
inline int run_program(const std::string &program, const std::vector<std::string> &args) {
    std::vector<char *> argv;
    argv.push_back(const_cast<char *>(program.c_str()));
    for (const std::string &a : args) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {
        std::signal(SIGINT, SIG_DFL);
        ::execv(program.c_str(), argv.data());
        std::fprintf(stderr, "%s: cannot run (%s)\n", program.c_str(), std::strerror(errno));
        ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace schedforge::tools
