#include "runner/cuda_device.h"

#include "common/errors.h"
#include "common/text.h"

#include <cstdio>
#include <sstream>
#include <utility>
#include <vector>

namespace schedforge::runner {

namespace {

// A command's standard output (its errors dropped), or "" where it cannot run.
std::string command_output(const std::string &cmd) {
    FILE *p = popen(("{ " + cmd + "; } 2>/dev/null").c_str(), "r");
    if (!p) return "";
    std::string out;
    char buf[256];
    while (fgets(buf, sizeof(buf), p)) out += buf;
    pclose(p);
    return out;
}

CudaDevice probe() {
    const std::string query = command_output(
        "nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv,noheader,nounits -i 0");
    return parse_nvidia_smi(query, common::trim(query).empty() ? "" : command_output("nvidia-smi"));
}

} // namespace

CudaDevice parse_nvidia_smi(const std::string &query, const std::string &summary) {
    CudaDevice d;
    const std::string line = common::trim(query.substr(0, query.find('\n')));
    if (line.empty()) {
        d.absent_reason = "no NVIDIA GPU (nvidia-smi is missing or sees none)";
        return d;
    }
    std::vector<std::string> fields;
    std::istringstream in(line);
    for (std::string f; std::getline(in, f, ',');) fields.push_back(common::trim(f));
    const size_t dot = fields.size() == 4 ? fields[1].find('.') : std::string::npos;
    try {
        if (dot == std::string::npos) throw std::invalid_argument(line);
        d.name = fields[0];
        d.capability_major = std::stoi(fields[1].substr(0, dot));
        d.capability_minor = std::stoi(fields[1].substr(dot + 1));
        d.memory_bytes = std::stoll(fields[2]) << 20; // MiB
        d.driver = fields[3];
        d.present = true;
    } catch (const std::exception &) {
        d = CudaDevice();
        d.absent_reason = "nvidia-smi's description of GPU 0 is unreadable: " + line;
        return d;
    }
    const std::string key = "CUDA Version:";
    if (const size_t at = summary.find(key); at != std::string::npos) {
        std::istringstream version(summary.substr(at + key.size()));
        version >> d.cuda_version;
    }
    return d;
}

const CudaDevice &cuda_device() {
    static const CudaDevice device = probe();
    return device;
}

Halide::Target with_cuda_capability(const Halide::Target &target) {
    using T = Halide::Target;
    static const std::pair<int, T::Feature> kCapabilities[] = {
        {86, T::CUDACapability86}, {80, T::CUDACapability80}, {75, T::CUDACapability75},
        {70, T::CUDACapability70}, {61, T::CUDACapability61}, {50, T::CUDACapability50},
        {35, T::CUDACapability35}, {32, T::CUDACapability32}, {30, T::CUDACapability30}};
    if (!target.has_feature(T::CUDA)) return target;
    for (const auto &c : kCapabilities) {
        if (target.has_feature(c.second)) return target;
    }
    const CudaDevice &d = cuda_device();
    if (!d.present) {
        throw UserError("target " + target.to_string() +
                        " names no CUDA compute capability (add cuda_capability_80, say), and there is no CUDA device "
                        "to take it from: " +
                        d.absent_reason);
    }
    const int device = 10 * d.capability_major + d.capability_minor;
    for (const auto &c : kCapabilities) {
        if (c.first <= device) return target.with_feature(c.second);
    }
    throw UserError("the CUDA device " + d.name + " (compute capability " + std::to_string(d.capability_major) + "." +
                    std::to_string(d.capability_minor) + ") is older than Halide 14 supports");
}

} // namespace schedforge::runner
