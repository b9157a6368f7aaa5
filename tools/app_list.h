// `--apps all|a,b,...` as the tools and benchmarks take it.
#pragma once

#include "apps/app.h"
#include "common/errors.h"

#include <sstream>
#include <string>
#include <vector>

namespace schedforge::tools {

// The apps named by `text` ("all", or a comma-separated list); an unknown name is a UserError.
inline std::vector<std::string> parse_app_list(const std::string &text, const std::string &flag = "--apps") {
    if (text == "all") return apps::app_names();
    std::vector<std::string> names;
    std::stringstream s(text);
    for (std::string n; std::getline(s, n, ',');) {
        if (n.empty()) continue;
        if (!apps::make_app(n)) throw UserError(flag + ": unknown app '" + n + "'");
        names.push_back(n);
    }
    return names;
}

} // namespace schedforge::tools
