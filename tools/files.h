// Writing files so that a reader never sees half of one: write a sibling temporary, then rename.
#pragma once

#include "common/errors.h"

#include <cerrno>
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

// Writes `text` to `path` atomically; throws std::runtime_error on I/O failure.
inline void write_file_atomic(const std::string &path, const std::string &text) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << text;
        out.flush();
        if (!out) throw std::runtime_error(tmp + ": write failed (" + std::strerror(errno) + ")");
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) throw std::runtime_error(path + ": rename failed (" + ec.message() + ")");
}

} // namespace schedforge::tools
