// Writing a file so that a reader never sees half of it: a sibling temporary, then a rename.
#pragma once

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace schedforge::common {

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

} // namespace schedforge::common
