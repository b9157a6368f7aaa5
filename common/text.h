// Small text helpers shared by modules that read tools' output.
#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace schedforge::common {

// `s` without leading and trailing blanks (spaces, tabs, line ends).
inline std::string trim(const std::string &s) {
    const size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// "key = value" lines (a dataset's hardware record, a weights file's header) as a map: each line
// split at its first " = ", other lines skipped.
inline std::map<std::string, std::string> key_value_lines(const std::string &text) {
    std::map<std::string, std::string> kv;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        const size_t eq = line.find(" = ");
        if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 3);
    }
    return kv;
}

// A file's whole text; empty where it cannot be read (probes of sysfs and procfs).
inline std::string file_text(const std::string &path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace schedforge::common
