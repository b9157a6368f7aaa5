#include "common/host_caches.h"

#include "common/text.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <unistd.h>

namespace schedforge::common {

int64_t parse_cache_size(const std::string &text) {
    const std::string t = trim(text);
    if (t.empty()) return 0;
    const int64_t v = std::atoll(t.c_str());
    switch (t.back()) {
    case 'K': return v << 10;
    case 'M': return v << 20;
    case 'G': return v << 30;
    default: return v;
    }
}

int count_cpu_list(const std::string &text) {
    int n = 0;
    std::istringstream ranges(trim(text));
    for (std::string range; std::getline(ranges, range, ',');) {
        if (range.empty()) continue;
        const size_t dash = range.find('-');
        char *end = nullptr;
        const long lo = std::strtol(range.c_str(), &end, 10);
        if (end == range.c_str()) return 0;
        const long hi = dash == std::string::npos ? lo : std::strtol(range.c_str() + dash + 1, &end, 10);
        if (hi < lo) return 0;
        n += int(hi - lo + 1);
    }
    return n;
}

std::vector<HostCache> host_caches() {
    namespace fs = std::filesystem;
    const fs::path cache_dir = "/sys/devices/system/cpu/cpu0/cache";
    std::error_code ec;
    std::vector<fs::path> entries;
    for (const auto &e : fs::directory_iterator(cache_dir, ec)) {
        if (e.path().filename().string().rfind("index", 0) == 0) entries.push_back(e.path());
    }
    std::sort(entries.begin(), entries.end());
    std::vector<HostCache> caches;
    for (const fs::path &p : entries) {
        HostCache c;
        c.level = std::atoi(file_text(p / "level").c_str());
        c.type = trim(file_text(p / "type"));
        c.size_bytes = parse_cache_size(file_text(p / "size"));
        c.shared_cpus = count_cpu_list(file_text(p / "shared_cpu_list"));
        caches.push_back(c);
    }
    if (caches.empty()) {
        const struct {
            int level, name;
            const char *type;
        } levels[] = {{1, _SC_LEVEL1_DCACHE_SIZE, "Data"},
                      {1, _SC_LEVEL1_ICACHE_SIZE, "Instruction"},
                      {2, _SC_LEVEL2_CACHE_SIZE, "Unified"},
                      {3, _SC_LEVEL3_CACHE_SIZE, "Unified"}};
        for (const auto &l : levels) {
            const long size = sysconf(l.name);
            if (size > 0) caches.push_back({l.level, l.type, int64_t(size), 0});
        }
    }
    return caches;
}

} // namespace schedforge::common
