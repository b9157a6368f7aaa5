#include "sampler/machine_calibration.h"

namespace schedforge::sampler {

bool matches(const MachineMatch &m, const common::HostKind &host) {
    return (m.cpu_vendor.empty() || m.cpu_vendor == host.cpu_vendor) &&
           (m.cpu_family < 0 || m.cpu_family == host.cpu_family) &&
           (m.cpu_model < 0 || m.cpu_model == host.cpu_model) &&
           (m.free_page_reporting < 0 || (m.free_page_reporting == 1) == host.free_page_reporting);
}

const MachineCalibration *calibration_for(const common::HostKind &host) {
    for (const MachineCalibration &c : machine_calibrations()) {
        const SearchOptions o = parse_search_options(c.yaml, c.name);
        if (o.machine && matches(*o.machine, host)) return &c;
    }
    return nullptr;
}

SearchOptions default_search_options(const common::HostKind &host, std::string *described) {
    const MachineCalibration *c = calibration_for(host);
    if (described) {
        *described = c ? "the calibration of this machine's kind (configs/search/calibrated/" + c->name + ")"
                       : "the built-in defaults (no calibration of this machine's kind is committed)";
    }
    return c ? parse_search_options(c->yaml, c->name) : SearchOptions();
}

SearchOptions search_options_or_default(const std::string &path, std::string *described) {
    if (path.empty()) return default_search_options(common::host_kind(), described);
    if (described) *described = path;
    return load_search_options(path);
}

} // namespace schedforge::sampler
