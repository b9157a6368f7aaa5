#include "runner/round_process.h"

#include "common/wire.h"

#include <algorithm>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace schedforge::runner {

ChildOutcome run_in_child(const std::function<std::string()> &fn) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    }
    if (pid == 0) {
        ::close(fds[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(1); // the parent died before prctl took effect
        const std::string bytes = fn();
        common::write_all(fds[1], bytes.data(), bytes.size());
        ::_exit(0);
    }
    ::close(fds[1]);
    ChildOutcome outcome;
    char chunk[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
        if (n > 0) {
            outcome.bytes.append(chunk, size_t(n));
        } else if (n == 0 || errno != EINTR) {
            break;
        }
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) {
        outcome.signal = WTERMSIG(status);
    } else if (WIFEXITED(status)) {
        outcome.exit_code = WEXITSTATUS(status);
        outcome.returned = outcome.exit_code == 0;
    }
    if (!outcome.returned) outcome.bytes.clear();
    return outcome;
}

Halide::Buffer<> shared_buffer_like(const Halide::Buffer<> &b, std::shared_ptr<void> *mapping) {
    const halide_buffer_t *raw = b.raw_buffer();
    const size_t bytes = std::max<size_t>(raw->size_in_bytes(), 1);
    void *memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) throw std::bad_alloc();
    *mapping = std::shared_ptr<void>(memory, [bytes](void *m) { ::munmap(m, bytes); });
    // The same offset of the host pointer from the lowest address as in b (negative strides).
    uint8_t *host = static_cast<uint8_t *>(memory) + (raw->host - raw->begin());
    std::vector<halide_dimension_t> shape(raw->dim, raw->dim + raw->dimensions);
    return Halide::Buffer<>(b.type(), host, raw->dimensions, shape.data());
}

} // namespace schedforge::runner
