// Ctrl-C as a graceful stop for long CLI jobs: the first one turns a flag true (the job starts
// nothing new, finishes what is in flight and saves it), the second quits at once.
#pragma once

#include <atomic>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace schedforge::tools {

namespace detail {
inline std::atomic<bool> stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);
inline const char *stop_message = "";
inline size_t stop_message_length = 0;

inline void on_interrupt(int) {
    if (stop_requested.exchange(true)) {
        std::signal(SIGINT, SIG_DFL); // the second Ctrl-C: quit now (the files stay valid)
        std::raise(SIGINT);
        return;
    }
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, stop_message, stop_message_length);
}
} // namespace detail

// Installs the handler, which writes `message` (a string literal) to stderr on the first Ctrl-C;
// returns the flag to pass to the job.
inline const std::atomic<bool> *stop_on_interrupt(const char *message) {
    detail::stop_message = message;
    detail::stop_message_length = std::strlen(message);
    std::signal(SIGINT, detail::on_interrupt);
    return &detail::stop_requested;
}

} // namespace schedforge::tools
