// ByteWriter / ByteReader: a flat binary encoding, used for the messages between a worker process
// and its parent (the benchmark runner's frames, the payloads jobs send back) and for the cost
// model's weights files. Values are in native byte order: little-endian on every target we build
// for (x86-64 Linux). A reader that runs past the end turns !ok() instead of reading garbage.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <vector>

namespace schedforge::common {

class ByteWriter {
public:
    template<typename T>
    void put(const T &v) {
        const char *p = reinterpret_cast<const char *>(&v);
        bytes_.append(p, sizeof(T));
    }
    void put_bytes(const void *data, size_t n) {
        put<uint64_t>(n);
        bytes_.append(static_cast<const char *>(data), n);
    }
    void put_string(const std::string &s) { put_bytes(s.data(), s.size()); }
    template<typename T>
    void put_vector(const std::vector<T> &v) {
        static_assert(std::is_trivially_copyable_v<T>);
        put_bytes(v.data(), v.size() * sizeof(T));
    }
    const std::string &bytes() const { return bytes_; }

private:
    std::string bytes_;
};

class ByteReader {
public:
    explicit ByteReader(const std::string &bytes) : bytes_(bytes) {}
    template<typename T>
    T get() {
        T v{};
        if (pos_ + sizeof(T) > bytes_.size()) {
            ok_ = false;
            return v;
        }
        std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }
    std::string get_string() {
        const uint64_t n = get<uint64_t>();
        if (!ok_ || pos_ + n > bytes_.size()) {
            ok_ = false;
            return {};
        }
        std::string s = bytes_.substr(pos_, n);
        pos_ += n;
        return s;
    }
    template<typename T>
    std::vector<T> get_vector() {
        static_assert(std::is_trivially_copyable_v<T>);
        const std::string bytes = get_string();
        if (bytes.size() % sizeof(T) != 0) ok_ = false;
        std::vector<T> v(ok_ ? bytes.size() / sizeof(T) : 0);
        if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
        return v;
    }
    bool ok() const { return ok_; }
    size_t position() const { return pos_; }
    bool at_end() const { return pos_ == bytes_.size(); }

private:
    const std::string &bytes_;
    size_t pos_ = 0;
    bool ok_ = true;
};

// Writes all `n` bytes to a pipe or file, retrying interrupted and partial writes; false when
// the other end is gone (a worker's parent, a verify child's reader).
inline bool write_all(int fd, const char *data, size_t n) {
    while (n > 0) {
        const ssize_t w = ::write(fd, data, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        data += w;
        n -= size_t(w);
    }
    return true;
}

// Reads exactly `n` bytes, retrying interrupted and partial reads; false at end of stream or on
// an error (the other end is gone).
inline bool read_all(int fd, char *data, size_t n) {
    while (n > 0) {
        const ssize_t r = ::read(fd, data, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        data += r;
        n -= size_t(r);
    }
    return true;
}

} // namespace schedforge::common
