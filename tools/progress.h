// A one-line progress bar on stderr for long CLI jobs: done/total, rate and ETA.
//
// On a terminal it redraws at most ten times a second; into a log (stderr not a terminal) it
// writes a plain line at most once a minute, so that short jobs and CI output stay clean while a
// long run in the background still says how far it is. Debian packages no C++ progress-bar
// library, hence this small one.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <unistd.h>

namespace schedforge::tools {

class ProgressBar {
public:
    // `per_hour`: show the rate per hour (for slow items, e.g. benchmarked samples) instead of per second.
    ProgressBar(std::string label, int64_t total, bool per_hour = false)
        : label_(std::move(label)), total_(total), per_hour_(per_hour), terminal_(isatty(STDERR_FILENO) != 0),
          start_(Clock::now()), last_draw_(start_) {}

    ~ProgressBar() { finish(); }

    // Marks one more item done; `note` (e.g. a failure count) is shown after the numbers.
    void step(const std::string &note = "") {
        done_++;
        const auto now = Clock::now();
        const auto interval = terminal_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(60'000);
        if (now - last_draw_ < interval && (done_ < total_ || !terminal_)) return;
        last_draw_ = now;
        draw(note);
    }

    // Ends the line (once).
    void finish() {
        if (terminal_ && drawn_) std::fputc('\n', stderr);
        drawn_ = false;
        finished_ = true;
    }

private:
    using Clock = std::chrono::steady_clock;

    void draw(const std::string &note) {
        if (finished_ || total_ <= 0) return;
        constexpr int kWidth = 30;
        const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
        const double rate = seconds > 0 ? double(done_) / seconds : 0;
        const int filled = int(kWidth * done_ / total_);
        const long eta = rate > 0 ? long(double(total_ - done_) / rate) : 0;
        std::fprintf(stderr,
                     terminal_ ? "\r%s [%s%s] %lld/%lld  %.1f/%s  ETA %ld:%02ld:%02ld %s\033[K"
                               : "%s [%s%s] %lld/%lld  %.1f/%s  ETA %ld:%02ld:%02ld %s\n",
                     label_.c_str(), std::string(size_t(filled), '=').c_str(),
                     std::string(size_t(kWidth - filled), ' ').c_str(), (long long)done_, (long long)total_,
                     per_hour_ ? rate * 3600 : rate, per_hour_ ? "h" : "s", eta / 3600, eta / 60 % 60, eta % 60,
                     note.c_str());
        std::fflush(stderr);
        drawn_ = true;
    }

    std::string label_;
    int64_t total_, done_ = 0;
    bool per_hour_;
    bool terminal_, drawn_ = false, finished_ = false;
    Clock::time_point start_, last_draw_{};
};

} // namespace schedforge::tools
