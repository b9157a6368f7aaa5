// SHA-256 (FIPS 180-4), for the manifests of published datasets: `sha256sum -c` checks what
// `dataset publish` writes, and `dataset verify --manifest` checks it without coreutils.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace schedforge::common {

class Sha256 {
public:
    Sha256();
    void update(const void *data, size_t bytes);
    // The digest as 64 lowercase hex digits; the object is spent afterwards.
    std::string hex_digest();

private:
    void compress(const uint8_t *block);
    std::array<uint32_t, 8> state_;
    std::array<uint8_t, 64> buffer_{};
    size_t buffered_ = 0;
    uint64_t total_bytes_ = 0;
};

inline std::string sha256_hex(const std::string &bytes) {
    Sha256 h;
    h.update(bytes.data(), bytes.size());
    return h.hex_digest();
}

// The digest of a file's bytes; std::runtime_error naming it if it cannot be read.
std::string sha256_of_file(const std::string &path);

} // namespace schedforge::common
