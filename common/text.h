// Small text helpers shared by modules that read tools' output.
#pragma once

#include <string>

namespace schedforge::common {

// `s` without leading and trailing blanks (spaces, tabs, line ends).
inline std::string trim(const std::string &s) {
    const size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

} // namespace schedforge::common
