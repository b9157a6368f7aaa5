// Halide's built-in autoschedulers (the baselines every quality claim is measured against):
// where their plugins live and the machine parameters that describe this machine to them.
#pragma once

#include "runner/fingerprint.h"

#include <Halide.h>

#include <string>
#include <vector>

namespace schedforge::runner {

// "Adams2019", "Li2018", "Mullapudi2016".
const std::vector<std::string> &halide_autoscheduler_names();

// The plugin library for an autoscheduler name (empty if the name is not one of them).
std::string halide_autoscheduler_plugin(const std::string &name);

// Parallelism = logical CPUs, last-level cache = the largest cache, balance = Halide's default 40.
Halide::MachineParams machine_params_for(const HardwareFingerprint &fp);

// Loads the plugin (once per process) and runs the autoscheduler on `pipeline`, applying its
// schedule. Throws Halide::Error on failure.
Halide::AutoSchedulerResults run_halide_autoscheduler(const std::string &name, Halide::Pipeline &pipeline,
                                                      const Halide::Target &target,
                                                      const Halide::MachineParams &params);

} // namespace schedforge::runner
