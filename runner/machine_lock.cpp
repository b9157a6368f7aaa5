#include "runner/machine_lock.h"

#include "common/errors.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace schedforge::runner {

namespace {

int open_lock_file(const std::string &path) {
    // Readable by everyone: flock needs no write access, and other users' runs may share it.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw UserError("cannot open the machine lock " + path + ": " + std::strerror(errno));
    return fd;
}

bool try_flock(int fd, int operation) {
    while (::flock(fd, operation | LOCK_NB) != 0) {
        if (errno != EINTR) return false;
    }
    return true;
}

} // namespace

MachineLock::MachineLock(const std::string &path) : gate_(open_lock_file(path + ".gate")) {
    try {
        work_ = open_lock_file(path + ".work");
    } catch (...) {
        ::close(gate_);
        throw;
    }
}

MachineLock::~MachineLock() {
    ::close(work_); // closing drops the locks
    ::close(gate_);
}

bool MachineLock::try_compile() {
    if (held_ == Held::Timing || gate_held_) release(); // a process compiles or times, never both
    if (!try_flock(gate_, LOCK_SH)) return false;
    const bool ok = held_ == Held::Compiling || try_flock(work_, LOCK_SH);
    ::flock(gate_, LOCK_UN);
    if (ok) held_ = Held::Compiling;
    return ok;
}

bool MachineLock::try_time() {
    if (held_ == Held::Timing) return true;
    if (held_ == Held::Compiling) release(); // converting would not be atomic anyway
    if (!gate_held_) {
        if (!try_flock(gate_, LOCK_EX)) return false;
        gate_held_ = true;
    }
    if (!try_flock(work_, LOCK_EX)) return false; // the gate stays held: compiles drain meanwhile
    held_ = Held::Timing;
    return true;
}

void MachineLock::close_inherited() const {
    ::close(gate_);
    ::close(work_);
}

void MachineLock::release() {
    if (held_ != Held::Nothing) ::flock(work_, LOCK_UN);
    if (gate_held_) ::flock(gate_, LOCK_UN);
    held_ = Held::Nothing;
    gate_held_ = false;
}

} // namespace schedforge::runner
