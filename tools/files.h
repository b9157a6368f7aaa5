// Writing files so that a reader never sees half of one: write a sibling temporary, then rename.
#pragma once

#include "common/errors.h"
#include "common/files.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace schedforge::tools {

// Creates `dir` (and parents) or throws UserError naming it.
inline void ensure_directory(const std::string &dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir)) {
        throw UserError(dir + ": cannot create output folder (" + (ec ? ec.message() : "not a folder") + ")");
    }
}

// Throws UserError unless the folder `path` is to be written in exists.
inline void require_parent_folder(const std::string &path) {
    const std::filesystem::path parent = std::filesystem::absolute(path).parent_path();
    if (!std::filesystem::is_directory(parent))
        throw UserError(path + ": folder " + parent.string() + " does not exist");
}

using common::write_file_atomic;

} // namespace schedforge::tools

namespace schedforge::tools {

// Runs a gnuplot script (kept beside `png_path` only while it runs); false if gnuplot failed or
// is missing, in which case the caller says there is no PNG. Text is plain unless `enhanced`
// (gnuplot's markup, where R^2 is a superscript but conv_relu would be conv with a subscript).
inline bool run_gnuplot(const std::string &png_path, const std::string &script, const std::string &size = "1000,650",
                        bool enhanced = false) {
    const std::string script_path = png_path + ".gp";
    write_file_atomic(script_path, "set terminal pngcairo " + std::string(enhanced ? "enhanced" : "noenhanced") +
                                       " size " + size + "\nset output '" + png_path + "'\n" + script);
    const int rc = std::system(("gnuplot '" + script_path + "' 2>/dev/null").c_str());
    std::remove(script_path.c_str());
    return rc == 0;
}

} // namespace schedforge::tools
