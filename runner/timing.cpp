#include "runner/timing.h"

#include "common/statistics.h"

#include "common/timing_note.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace schedforge::runner {

void summarize(TimingResult *r) {
    r->median_page_faults = r->page_faults.empty() ? 0 : median(r->page_faults);
    if (r->samples.empty()) {
        r->min_seconds = r->median_seconds = r->label_seconds = 0;
        return;
    }
    r->min_seconds = *std::min_element(r->samples.begin(), r->samples.end());
    r->median_seconds = median(r->samples);
    r->label_seconds = r->min_seconds;
    if (r->round_sizes.size() < 2) return;
    std::vector<double> minima;
    size_t begin = 0;
    for (const int n : r->round_sizes) {
        const size_t end = std::min(r->samples.size(), begin + size_t(std::max(n, 0)));
        if (end > begin)
            minima.push_back(*std::min_element(r->samples.begin() + long(begin), r->samples.begin() + long(end)));
        begin = end;
    }
    if (!minima.empty()) r->label_seconds = median(minima);
}

TimingProtocol round_protocol(const TimingProtocol &p) {
    TimingProtocol r = p;
    const int k = std::max(p.rounds, 1);
    r.rounds = 1;
    r.min_samples = std::max(1, (p.min_samples + k - 1) / k);
    r.max_samples = std::max(r.min_samples, (p.max_samples + k - 1) / k);
    r.max_seconds = p.max_seconds / k;
    r.min_sampling_seconds = p.min_sampling_seconds / k;
    r.contended_seconds = p.contended_seconds / k;
    return r;
}

TimingResult merge_rounds(const std::vector<TimingResult> &rounds) {
    TimingResult m;
    int contended = 0;
    std::vector<double> waits;
    for (const TimingResult &r : rounds) {
        m.samples.insert(m.samples.end(), r.samples.begin(), r.samples.end());
        m.page_faults.insert(m.page_faults.end(), r.page_faults.begin(), r.page_faults.end());
        m.round_sizes.push_back(int(r.samples.size()));
        m.retaken += r.retaken;
        m.threads = r.threads;
        contended += r.contended ? 1 : 0;
        waits.push_back(r.cpu_wait);
    }
    if (rounds.size() == 1) m.round_sizes.clear();
    m.contended = !rounds.empty() && 2 * contended >= int(rounds.size());
    m.cpu_wait = median(waits);
    summarize(&m);
    return m;
}

namespace {

long minor_page_faults() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

// Are the fastest k samples within `accuracy` of the fastest?
bool stable(std::vector<double> samples, int k, double accuracy) {
    if (int(samples.size()) < k) return false;
    std::partial_sort(samples.begin(), samples.begin() + k, samples.end());
    return samples[size_t(k) - 1] <= samples[0] * (1 + accuracy);
}

} // namespace

std::string contention_note(const TimingResult &r) {
    char detail[128];
    std::snprintf(
        detail, sizeof(detail),
        ": its threads waited %.0f%% of their time for one in the fastest run, after %d contended samples retaken",
        100 * r.cpu_wait, r.retaken);
    return std::string(common::kContendedTimingNote) + detail;
}

namespace {

// Reads the run delays of this process's threads through descriptors kept open: a probe then
// costs one pread per thread instead of a directory walk and an open per thread, and it runs
// twice per sample, where samples of small pipelines take microseconds. The set of threads is
// read again when their count (in /proc/self/stat) changes or one of them has exited.
class CpuWaitProbe {
public:
    CpuWaitProbe() : stat_fd_(::open("/proc/self/stat", O_RDONLY | O_CLOEXEC)) {}
    CpuWaitProbe(const CpuWaitProbe &) = delete;
    CpuWaitProbe &operator=(const CpuWaitProbe &) = delete;
    ~CpuWaitProbe() {
        close_tasks();
        if (stat_fd_ >= 0) ::close(stat_fd_);
    }

    // Seconds waited so far, summed over the threads; negative where the kernel does not say.
    double seconds() {
        const long threads = thread_count();
        if (threads != threads_) open_tasks(threads);
        double total = 0;
        for (int attempt = 0; attempt < 2; attempt++) {
            bool all = !task_fds_.empty();
            total = 0;
            for (const int fd : task_fds_) {
                double waiting = 0;
                if (!read_wait(fd, &waiting)) {
                    all = false; // the thread has exited: read the set again
                    break;
                }
                total += waiting;
            }
            if (all) return total;
            open_tasks(thread_count());
        }
        return -1;
    }

private:
    long thread_count() const {
        char buf[1024];
        const ssize_t n = stat_fd_ >= 0 ? ::pread(stat_fd_, buf, sizeof(buf) - 1, 0) : -1;
        if (n <= 0) return -1;
        buf[n] = 0;
        // Fields after the command name (which may hold spaces): state is field 3, num_threads 20.
        const char *p = std::strrchr(buf, ')');
        if (!p) return -1;
        long value = -1;
        for (int field = 3; field <= 20 && p; field++) {
            p = std::strchr(p + 1, ' ');
            if (p && field == 20) value = std::strtol(p + 1, nullptr, 10);
        }
        return value;
    }

    static bool read_wait(int fd, double *seconds) {
        char buf[96];
        const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
        if (n <= 0) return false;
        buf[n] = 0;
        unsigned long long on_cpu = 0, waiting = 0;
        if (std::sscanf(buf, "%llu %llu", &on_cpu, &waiting) != 2) return false;
        *seconds = double(waiting) * 1e-9;
        return true;
    }

    void open_tasks(long threads) {
        close_tasks();
        threads_ = threads;
        DIR *tasks = ::opendir("/proc/self/task");
        if (!tasks) return;
        while (const dirent *e = ::readdir(tasks)) {
            if (e->d_name[0] == '.') continue;
            const std::string path = std::string("/proc/self/task/") + e->d_name + "/schedstat";
            const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd >= 0) task_fds_.push_back(fd);
        }
        ::closedir(tasks);
    }

    void close_tasks() {
        for (const int fd : task_fds_) ::close(fd);
        task_fds_.clear();
    }

    int stat_fd_;
    std::vector<int> task_fds_;
    long threads_ = -2; // not read yet
};

} // namespace

double cpu_wait_seconds() { return CpuWaitProbe().seconds(); }

TimingResult time_runs(const TimingProtocol &p, int threads, const std::function<void()> &run,
                       const std::function<double()> &cpu_wait) {
    using Clock = std::chrono::steady_clock;
    auto seconds = [](Clock::time_point a, Clock::time_point b) {
        return std::chrono::duration<double>(b - a).count();
    };
    TimingResult result;
    result.threads = threads;
    for (int i = 0; i < p.warmup_runs; i++) run();
    // With more threads than cores, ours wait for each other: no measure of the others then.
    const bool watch = p.max_cpu_wait > 0 && threads <= int(std::thread::hardware_concurrency()) && cpu_wait() >= 0;
    const auto start = Clock::now();
    double retake_seconds = 0; // wall time of dropped samples, outside the max_seconds budget
    std::vector<double> waits; // each kept sample's share of thread time waiting for a CPU
    while (int(result.samples.size()) < p.max_samples) {
        const auto begin = Clock::now();
        const double wait0 = watch ? cpu_wait() : 0;
        const long faults0 = minor_page_faults();
        const auto t0 = Clock::now();
        run();
        const auto t1 = Clock::now();
        const long faults1 = minor_page_faults();
        const double took = seconds(t0, t1);
        const double wait1 = watch ? cpu_wait() : 0;
        // A probe that could not read every thread (one exited twice over) says nothing of this
        // sample: keep it, as an unwatched one.
        const double wait = wait0 >= 0 && wait1 >= 0 ? std::max(0.0, wait1 - wait0) / (took * std::max(threads, 1)) : 0;
        if (wait > p.max_cpu_wait && retake_seconds < p.contended_seconds) {
            result.retaken++;
            retake_seconds += seconds(begin, Clock::now());
            continue;
        }
        waits.push_back(wait);
        result.samples.push_back(took);
        result.page_faults.push_back(double(faults1 - faults0));
        const int taken = int(result.samples.size());
        if (taken < p.min_samples) continue;
        const double sampled = seconds(start, Clock::now()) - retake_seconds;
        if (sampled >= p.min_sampling_seconds && stable(result.samples, p.min_samples, p.accuracy)) break;
        if (sampled >= p.max_seconds) break;
    }
    summarize(&result);
    // The label is the fastest sample: it is contended only if that one is.
    if (!waits.empty()) {
        const size_t fastest =
            size_t(std::min_element(result.samples.begin(), result.samples.end()) - result.samples.begin());
        result.cpu_wait = waits[fastest];
        result.contended = watch && waits[fastest] > p.max_cpu_wait;
    }
    return result;
}

TimingResult time_runs(const TimingProtocol &p, int threads, const std::function<void()> &run) {
    CpuWaitProbe probe;
    return time_runs(p, threads, run, [&]() { return probe.seconds(); });
}

} // namespace schedforge::runner
