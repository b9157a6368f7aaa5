// Internal to datasets/: owning HDF5 identifiers and error capture for the C API.
//
// HDF5 reports errors through a global stack and prints it by default; we switch the printing off
// and turn a failed call into an exception carrying the innermost message, so that a corrupt
// chunk or a bad file reaches the user as one line.
#pragma once

#include <hdf5.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace schedforge::datasets::h5 {

// A failed HDF5 call. `what()` names the operation and HDF5's own reason.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Silences HDF5's automatic error printing (once per process).
void quiet_errors();

// The innermost message on HDF5's error stack ("" if none).
std::string last_error_message();

[[noreturn]] void fail(const std::string &what);

inline hid_t check(hid_t id, const char *what) {
    if (id < 0) fail(what);
    return id;
}
inline void check_status(herr_t status, const char *what) {
    if (status < 0) fail(what);
}

// Owns one identifier and closes it with the matching H5*close.
class Handle {
public:
    using Closer = herr_t (*)(hid_t);
    Handle() = default;
    Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
    Handle(const Handle &) = delete;
    Handle &operator=(const Handle &) = delete;
    Handle(Handle &&o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)), closer_(o.closer_) {}
    Handle &operator=(Handle &&o) noexcept {
        if (this != &o) {
            reset();
            id_ = std::exchange(o.id_, H5I_INVALID_HID);
            closer_ = o.closer_;
        }
        return *this;
    }
    ~Handle() { reset(); }
    hid_t get() const { return id_; }
    bool valid() const { return id_ >= 0; }
    void reset() {
        if (id_ >= 0 && closer_) closer_(id_);
        id_ = H5I_INVALID_HID;
    }
    // Closes now and reports failure (a destructor cannot).
    void close(const char *what) {
        const hid_t id = std::exchange(id_, H5I_INVALID_HID);
        if (id >= 0 && closer_) check_status(closer_(id), what);
    }

private:
    hid_t id_ = H5I_INVALID_HID;
    Closer closer_ = nullptr;
};

inline Handle file(hid_t id, const char *what) { return Handle(check(id, what), H5Fclose); }
inline Handle dataset(hid_t id, const char *what) { return Handle(check(id, what), H5Dclose); }
inline Handle space(hid_t id, const char *what) { return Handle(check(id, what), H5Sclose); }
inline Handle type(hid_t id, const char *what) { return Handle(check(id, what), H5Tclose); }
inline Handle plist(hid_t id, const char *what) { return Handle(check(id, what), H5Pclose); }
inline Handle attribute(hid_t id, const char *what) { return Handle(check(id, what), H5Aclose); }

} // namespace schedforge::datasets::h5
