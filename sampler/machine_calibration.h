// The default search for this machine. Halide's own autoschedulers carry one model for every x86
// machine; a calibration (configs/search/calibrated/, `calibrate`) fits the manual model to one
// machine kind. Where a committed calibration beat the built-in coefficients on its kind's apps, its
// file carries a `machine:` section, this build embeds it (the plugin needs no source tree), and on
// a host of that kind the search defaults to its coefficients. A search config that the user names
// replaces the default whole (configs/search/default.yaml: the built-in defaults on any machine).
#pragma once

#include "common/host_kind.h"
#include "sampler/search_options.h"

#include <string>
#include <vector>

namespace schedforge::sampler {

struct MachineCalibration {
    std::string name; // its file in configs/search/calibrated/
    std::string yaml; // the file's text, as built
};

// The embedded calibrations, by file name (defined in the build's generated machine_calibrations.cpp).
const std::vector<MachineCalibration> &machine_calibrations();

// Whether every key of a `machine:` section matches the host.
bool matches(const MachineMatch &machine, const common::HostKind &host);

// The first embedded calibration (by name) whose `machine:` section the host matches; null if none.
const MachineCalibration *calibration_for(const common::HostKind &host);

// The built-in options over which the matching calibration's file is read; the built-ins alone
// where none matches. `described` (optional) gets what was used, for the user.
SearchOptions default_search_options(const common::HostKind &host, std::string *described = nullptr);

// A tool's search options: the config file at `path`, or default_search_options() of this machine
// where `path` is empty. `described` as above.
SearchOptions search_options_or_default(const std::string &path, std::string *described = nullptr);

} // namespace schedforge::sampler
