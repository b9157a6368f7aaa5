#include "sampler/machine_calibration.h"

namespace schedforge::sampler {

namespace {

// The embedded calibrations read once, in machine_calibrations()'s order: the plugin asks for
// this machine's default on every pipeline it schedules.
const std::vector<SearchOptions> &parsed_calibrations() {
    static const std::vector<SearchOptions> parsed = [] {
        std::vector<SearchOptions> p;
        for (const MachineCalibration &c : machine_calibrations()) p.push_back(parse_search_options(c.yaml, c.name));
        return p;
    }();
    return parsed;
}

// The index of the first calibration the host matches; the count of them if none does.
size_t matching_calibration(const common::HostKind &host) {
    const std::vector<SearchOptions> &parsed = parsed_calibrations();
    size_t i = 0;
    while (i < parsed.size() && !(parsed[i].machine && matches(*parsed[i].machine, host))) i++;
    return i;
}

} // namespace

bool matches(const MachineMatch &m, const common::HostKind &host) {
    return (m.cpu_vendor.empty() || m.cpu_vendor == host.cpu_vendor) &&
           (m.cpu_family < 0 || m.cpu_family == host.cpu_family) &&
           (m.cpu_model < 0 || m.cpu_model == host.cpu_model) &&
           (m.free_page_reporting < 0 || (m.free_page_reporting == 1) == host.free_page_reporting);
}

const MachineCalibration *calibration_for(const common::HostKind &host) {
    const size_t i = matching_calibration(host);
    return i < machine_calibrations().size() ? &machine_calibrations()[i] : nullptr;
}

SearchOptions default_search_options(const common::HostKind &host, std::string *described) {
    const size_t i = matching_calibration(host);
    const bool found = i < machine_calibrations().size();
    if (described) {
        *described = found ? "the calibration of this machine's kind (configs/search/calibrated/" +
                                 machine_calibrations()[i].name + ")"
                           : "the built-in defaults (no calibration of this machine's kind is committed)";
    }
    return found ? parsed_calibrations()[i] : SearchOptions();
}

SearchOptions search_options_or_default(const std::string &path, std::string *described) {
    if (path.empty()) return default_search_options(common::host_kind(), described);
    if (described) *described = path;
    return load_search_options(path);
}

} // namespace schedforge::sampler
