#include "runner/stage_profile.h"

#include "common/stopwatch.h"
#include "runner/system_allocator.h"

#include <chrono>
#include <sstream>

namespace schedforge::runner {

double StageProfile::sampled_total() const {
    double total = 0;
    for (const auto &[name, s] : sampled) total += s;
    return total;
}

int add_profiler_reports(const std::string &text, StageProfile &profile) {
    std::istringstream in(text);
    std::string line;
    int reports = 0;
    while (std::getline(in, line)) {
        if (line.rfind(" total time:", 0) == 0) reports++;
        // A Func's line: two spaces, its name, a colon, spaces, milliseconds with "ms".
        if (line.rfind("  ", 0) != 0 || line.size() < 3 || line[2] == ' ') continue;
        const size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string name = line.substr(2, colon - 2);
        if (name.rfind("halide_", 0) == 0) continue; // the runtime's malloc and free
        const size_t ms = line.find("ms", colon);
        if (ms == std::string::npos) continue;
        try {
            profile.sampled[name] += 1e-3 * std::stod(line.substr(colon + 1, ms - colon - 1));
        } catch (const std::exception &) { // not a time: not a Func's line
        }
    }
    return reports;
}

namespace {
thread_local std::string *reports_sink = nullptr;

// A parallel loop's tasks, in order, on the calling thread.
int serial_par_for(Halide::JITUserContext *context, int (*task)(Halide::JITUserContext *, int, uint8_t *), int min,
                   int extent, uint8_t *closure) {
    for (int i = min; i < min + extent; i++) {
        if (int status = task(context, i, closure)) return status;
    }
    return 0;
}
} // namespace

StageProfile profile_stages(Halide::Pipeline pipeline, Halide::Buffer<> output, const Halide::Target &target,
                            double seconds) {
    std::string reports;
    pipeline.jit_handlers().custom_print = [](Halide::JITUserContext *, const char *message) {
        if (reports_sink) *reports_sink += message;
    };
    pipeline.jit_handlers().custom_do_par_for = serial_par_for; // one thread: see the header
    use_system_allocator(pipeline); // glibc's heap, as the runner times (jemalloc would hand back other pages)
    const Halide::Target profiled = target.with_feature(Halide::Target::Profile);
    pipeline.compile_jit(profiled);
    struct Sink { // the handler writes to `reports` while this lives, even if a run throws
        explicit Sink(std::string *to) { reports_sink = to; }
        ~Sink() { reports_sink = nullptr; }
    } sink(&reports);
    StageProfile profile;
    using Clock = std::chrono::steady_clock;
    auto start = Clock::now();
    double elapsed = 0;
    while (profile.runs < 3 || elapsed < seconds) {
        pipeline.realize(output, profiled);
        profile.runs++;
        elapsed = seconds_since(start);
    }
    profile.seconds_per_run = elapsed / profile.runs;
    add_profiler_reports(reports, profile);

    pipeline.compile_jit(target);
    pipeline.realize(output, target); // first run: page faults of fresh buffers, as the profiled runs had
    start = Clock::now();
    for (int i = 0; i < profile.runs; i++) pipeline.realize(output, target);
    profile.unprofiled_seconds_per_run = seconds_since(start) / profile.runs;
    return profile;
}

} // namespace schedforge::runner
