// Waiting on a dataset another process is writing, for tests that stop or kill that process.
#pragma once

#include "datasets/reader.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

namespace schedforge::testing {

// Waits until the file being written holds `n` schedules (read with SWMR, as a user would).
inline void wait_for_schedules(const std::string &path, uint64_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
    while (std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (!std::filesystem::exists(path)) continue;
        try {
            if (datasets::DatasetReader::open(path)->num_schedules() >= n) return;
        } catch (const std::exception &) {
            // created but not yet initialized
        }
    }
    FAIL() << path << " never reached " << n << " schedules";
}

} // namespace schedforge::testing
