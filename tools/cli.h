// The exit-code contract every schedforge CLI follows, in one place:
//   0  success;
//   1  a runtime failure (a Halide compile error, an I/O error while writing, a failed sample);
//   2  a user error (bad flag, bad config, unreadable input): one line on stderr, nothing written.
// run_cli() parses flags with CLI11 and runs `body`, mapping exceptions to those codes.
#pragma once

#include "common/errors.h"

#include <CLI/CLI.hpp>

#include <exception>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace schedforge::tools {

// "a,b,,c" -> {"a", "b", "c"}: a comma-separated flag value, empty items dropped.
inline std::vector<std::string> split_list(const std::string &text) {
    std::vector<std::string> items;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');) {
        if (!item.empty()) items.push_back(item);
    }
    return items;
}

inline int run_cli(CLI::App &app, int argc, char **argv, const std::function<int()> &body) {
    const std::string name = app.get_name();
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &) {
        std::cout << app.help();
        return 0;
    } catch (const CLI::ParseError &e) {
        std::cerr << name << ": " << e.what() << " (see --help)\n";
        return 2;
    }
    try {
        return body();
    } catch (const UserError &e) {
        std::cerr << name << ": " << e.what() << "\n";
        return 2;
    } catch (const std::exception &e) {
        std::cerr << name << ": error: " << e.what() << "\n";
        return 1;
    }
}

} // namespace schedforge::tools
