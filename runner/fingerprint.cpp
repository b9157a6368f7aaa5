#include "runner/fingerprint.h"

#include "common/host_caches.h"
#include "common/text.h"
#include "runner/cuda_device.h"
#include "runner/host_target.h"

#include <Halide.h>

#include <cstdio>
#include <set>
#include <sstream>
#include <unistd.h>

namespace schedforge::runner {

std::vector<std::pair<std::string, std::string>> HardwareFingerprint::fields() const {
    std::vector<std::pair<std::string, std::string>> f = {
        {"cpu_model", cpu_model},
        {"cpu_vendor", kind.cpu_vendor},
        {"cpu_family", std::to_string(kind.cpu_family)},
        {"cpu_model_number", std::to_string(kind.cpu_model)},
        {"free_page_reporting", kind.free_page_reporting ? "yes" : "no"},
        {"page_reporting_order", kind.page_reporting_order >= 0 ? std::to_string(kind.page_reporting_order) : ""},
        {"transparent_hugepages", kind.transparent_hugepages},
        {"physical_cores", std::to_string(physical_cores)},
        {"logical_cpus", std::to_string(logical_cpus)},
        {"memory_bytes", std::to_string(memory_bytes)},
    };
    for (const CacheInfo &c : caches) {
        f.emplace_back("cache_L" + std::to_string(c.level) + "_" + c.type, std::to_string(c.size_bytes));
    }
    std::string isa;
    for (const std::string &x : isa_features) isa += (isa.empty() ? "" : ",") + x;
    f.emplace_back("isa_features", isa);
    f.emplace_back("gpu_name", gpu_name);
    f.emplace_back("gpu_driver", gpu_driver);
    f.emplace_back("gpu_compute_capability", gpu_compute_capability);
    f.emplace_back("gpu_memory_bytes", gpu_memory_bytes ? std::to_string(gpu_memory_bytes) : "");
    f.emplace_back("gpu_cuda_version", gpu_cuda_version);
    f.emplace_back("halide_version", halide_version);
    f.emplace_back("target", target);
    return f;
}

HardwareFingerprint fingerprint_this_machine() {
    HardwareFingerprint fp;
    std::istringstream cpuinfo(common::file_text("/proc/cpuinfo"));
    std::string line, physical_id = "0";
    std::set<std::pair<std::string, std::string>> cores;
    std::set<std::string> flags;
    while (std::getline(cpuinfo, line)) {
        const size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string key = common::trim(line.substr(0, colon)), value = common::trim(line.substr(colon + 1));
        if (key == "model name" && fp.cpu_model.empty()) fp.cpu_model = value;
        if (key == "physical id") physical_id = value;
        if (key == "core id") cores.emplace(physical_id, value);
        if (key == "flags" && flags.empty()) {
            std::istringstream words(value);
            for (std::string w; words >> w;) flags.insert(w);
        }
    }
    fp.kind = common::host_kind();
    fp.logical_cpus = int(sysconf(_SC_NPROCESSORS_ONLN));
    fp.physical_cores = cores.empty() ? fp.logical_cpus : int(cores.size());
    for (const char *isa : {"sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
                            "avx512_vnni", "avx512_bf16", "amx_tile", "neon", "asimd", "sve"}) {
        if (flags.count(isa)) fp.isa_features.push_back(isa);
    }
    fp.caches = common::host_caches();
    std::istringstream meminfo(common::file_text("/proc/meminfo"));
    while (std::getline(meminfo, line)) {
        if (line.rfind("MemTotal:", 0) == 0) fp.memory_bytes = std::atoll(line.substr(9).c_str()) * 1024;
    }
    fp.gpu_name = cuda_device().name;
    fp.gpu_driver = cuda_device().driver;
    if (cuda_device().present) {
        fp.gpu_compute_capability =
            std::to_string(cuda_device().capability_major) + "." + std::to_string(cuda_device().capability_minor);
        fp.gpu_memory_bytes = cuda_device().memory_bytes;
        fp.gpu_cuda_version = cuda_device().cuda_version;
    }
    fp.halide_version = SCHEDFORGE_HALIDE_VERSION;
    fp.target = runner::host_target().to_string();
    return fp;
}

} // namespace schedforge::runner
