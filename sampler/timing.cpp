#include "sampler/timing.h"

#include "common/timing_note.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <dirent.h>
#include <string>
#include <thread>

namespace schedforge::sampler {

void summarize(TimingResult *r) {
    if (r->samples.empty()) {
        r->min_seconds = r->median_seconds = 0;
        return;
    }
    std::vector<double> sorted = r->samples;
    std::sort(sorted.begin(), sorted.end());
    r->min_seconds = sorted.front();
    const size_t n = sorted.size();
    r->median_seconds = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

namespace {

// Are the fastest k samples within `accuracy` of the fastest?
bool stable(std::vector<double> samples, int k, double accuracy) {
    if (int(samples.size()) < k) return false;
    std::partial_sort(samples.begin(), samples.begin() + k, samples.end());
    return samples[size_t(k) - 1] <= samples[0] * (1 + accuracy);
}

} // namespace

std::string contention_note(const TimingResult &r) {
    char detail[128];
    std::snprintf(detail, sizeof(detail),
                  ": its threads waited up to %.0f%% of their time for one, after %d contended samples retaken",
                  100 * r.cpu_wait, r.retaken);
    return std::string(common::kContendedTimingNote) + detail;
}

double cpu_wait_seconds() {
    DIR *tasks = ::opendir("/proc/self/task");
    if (!tasks) return -1;
    double total = 0;
    bool any = false;
    while (const dirent *e = ::readdir(tasks)) {
        if (e->d_name[0] == '.') continue;
        const std::string path = std::string("/proc/self/task/") + e->d_name + "/schedstat";
        FILE *f = std::fopen(path.c_str(), "r");
        if (!f) continue; // the thread has exited, or no schedstat
        unsigned long long on_cpu = 0, waiting = 0;
        if (std::fscanf(f, "%llu %llu", &on_cpu, &waiting) == 2) total += double(waiting) * 1e-9, any = true;
        std::fclose(f);
    }
    ::closedir(tasks);
    return any ? total : -1;
}

TimingResult time_runs(const TimingProtocol &p, int threads, const std::function<void()> &run) {
    using Clock = std::chrono::steady_clock;
    auto seconds = [](Clock::time_point a, Clock::time_point b) {
        return std::chrono::duration<double>(b - a).count();
    };
    TimingResult result;
    result.threads = threads;
    for (int i = 0; i < p.warmup_runs; i++) run();
    // With more threads than cores, ours wait for each other: no measure of the others then.
    const bool watch =
        p.max_cpu_wait > 0 && threads <= int(std::thread::hardware_concurrency()) && cpu_wait_seconds() >= 0;
    const auto start = Clock::now();
    double retake_seconds = 0; // wall time of dropped samples, outside the max_seconds budget
    while (int(result.samples.size()) < p.max_samples) {
        const auto begin = Clock::now();
        const double wait0 = watch ? cpu_wait_seconds() : 0;
        const auto t0 = Clock::now();
        run();
        const auto t1 = Clock::now();
        const double took = seconds(t0, t1);
        const double wait = watch ? (cpu_wait_seconds() - wait0) / (took * std::max(threads, 1)) : 0;
        if (wait > p.max_cpu_wait) {
            if (retake_seconds < p.contended_seconds) {
                result.retaken++;
                retake_seconds += seconds(begin, Clock::now());
                continue;
            }
            result.contended = true;
        }
        result.cpu_wait = std::max(result.cpu_wait, wait);
        result.samples.push_back(took);
        const int taken = int(result.samples.size());
        if (taken < p.min_samples) continue;
        if (stable(result.samples, p.min_samples, p.accuracy)) break;
        if (seconds(start, Clock::now()) - retake_seconds >= p.max_seconds) break;
    }
    summarize(&result);
    return result;
}

} // namespace schedforge::sampler
