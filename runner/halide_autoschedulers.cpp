#include "runner/halide_autoschedulers.h"

#include <algorithm>
#include <set>

namespace schedforge::runner {

const std::vector<std::string> &halide_autoscheduler_names() {
    static const std::vector<std::string> names = {"Adams2019", "Li2018", "Mullapudi2016"};
    return names;
}

std::string halide_autoscheduler_plugin(const std::string &name) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
    const auto &names = halide_autoscheduler_names();
    if (std::find(names.begin(), names.end(), name) == names.end()) return "";
    return std::string(SCHEDFORGE_HALIDE_PLUGIN_DIR) + "/libautoschedule_" + lower + ".so";
}

Halide::MachineParams machine_params_for(const HardwareFingerprint &fp) {
    int64_t llc = 0;
    for (const CacheInfo &c : fp.caches) llc = std::max(llc, c.size_bytes);
    if (llc <= 0) llc = int64_t(16) << 20;
    return Halide::MachineParams(std::max(1, fp.logical_cpus), uint64_t(llc), /*balance=*/40);
}

Halide::AutoSchedulerResults run_halide_autoscheduler(const std::string &name, Halide::Pipeline &pipeline,
                                                      const Halide::Target &target,
                                                      const Halide::MachineParams &params) {
    static std::set<std::string> loaded;
    const std::string plugin = halide_autoscheduler_plugin(name);
    if (plugin.empty()) throw Halide::CompileError("unknown Halide autoscheduler '" + name + "'");
    if (loaded.insert(plugin).second) Halide::load_plugin(plugin);
    return pipeline.auto_schedule(name, target, params);
}

} // namespace schedforge::runner
