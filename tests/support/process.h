// Helpers for tests that run the project's programs as a user does: separate processes, their
// exit code, stdout and stderr, and scratch folders.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace schedforge::testing {

namespace fs = std::filesystem;

inline const std::string kSmallConfig = std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/generator/small.yaml";

struct Result {
    int exit_code;
    std::string out, err;
};

inline std::string read_file(const fs::path &p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Runs a shell command, capturing stdout and stderr separately.
inline Result run(const std::string &command) {
    const fs::path err = fs::temp_directory_path() / ("schedforge_cli_test_" + std::to_string(::getpid()) + ".err");
    FILE *pipe = popen((command + " 2>" + err.string()).c_str(), "r");
    EXPECT_NE(pipe, nullptr);
    Result r;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
    const int status = pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = read_file(err);
    fs::remove(err);
    return r;
}

// A fresh, empty scratch folder per test.
inline fs::path scratch(const std::string &name) {
    const fs::path dir = fs::temp_directory_path() / ("schedforge_test_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    return dir;
}

inline std::string write_config(const fs::path &dir, const std::string &text) {
    fs::create_directories(dir);
    const fs::path p = dir / "config.yaml";
    std::ofstream(p) << text;
    return p.string();
}

inline int count_lines(const std::string &s) { return int(std::count(s.begin(), s.end(), '\n')); }

// A user error as every CLI reports it: exit 2 and one line on stderr that contains `needle`.
inline void expect_user_error(const Result &r, const std::string &needle) {
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
}

// Starts `program` with `args` without a shell (signals must reach it, not sh), its output
// discarded; wait_exit() collects it.
inline pid_t spawn(const std::string &program, const std::vector<std::string> &args) {
    const pid_t pid = fork();
    if (pid == 0) {
        std::vector<char *> argv{const_cast<char *>(program.c_str())};
        for (const std::string &a : args) argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        const int devnull = ::open("/dev/null", O_WRONLY);
        ::dup2(devnull, STDOUT_FILENO);
        ::dup2(devnull, STDERR_FILENO);
        ::execv(program.c_str(), argv.data());
        ::_exit(127);
    }
    return pid;
}

// The exit code of a spawned process, or 128 + the signal that ended it (as shells report it).
inline int wait_exit(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace schedforge::testing
