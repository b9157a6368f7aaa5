// The CPU caches of this machine, as Linux reports them for cpu0: sysfs, or glibc's CPUID reading
// where a container hides sysfs' cache folders. No Halide: the search (sampler/) sizes its cost
// model's caches from these, and the hardware fingerprint (runner/) records them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace schedforge::common {

struct HostCache {
    int level = 0;
    std::string type; // "Data", "Instruction", "Unified"
    int64_t size_bytes = 0;
    int shared_cpus = 0; // logical CPUs that share it (sysfs' shared_cpu_list); 0: unknown
};

// One entry per level and type, in sysfs' index order (L1 data, L1 instruction, L2, L3 ...).
std::vector<HostCache> host_caches();

// A cache's size from sysfs' text ("32K" -> 32768); 0 for empty text.
int64_t parse_cache_size(const std::string &text);

// The number of CPUs in a Linux CPU list ("0-3,8,10-11" -> 7); 0 for empty or unreadable text.
int count_cpu_list(const std::string &text);

} // namespace schedforge::common
