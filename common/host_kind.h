// What kind of machine this is, beyond its caches (common/host_caches.h): the CPU as the processor
// names itself, whether the memory its programs free goes back to a hypervisor (and in what
// blocks), and the kernel's huge page mode. The search (sampler/machine_calibration.h) picks the
// committed calibration of this kind by these facts, and the hardware fingerprint (runner/)
// records them. No Halide.
#pragma once

#include <string>

namespace schedforge::common {

struct HostKind {
    std::string cpu_vendor; // /proc/cpuinfo's vendor_id: "AuthenticAMD", "GenuineIntel"; empty: unknown
    int cpu_family = -1;    // its "cpu family" and "model" (AMD Zen 5: 26 and 2); -1: unknown
    int cpu_model = -1;
    // A virtio balloon with free page reporting: pages the guest kernel frees go back to the host,
    // so a page that malloc trims and a program touches again faults on the host too (2.96 ns a
    // byte on the VM measured, where the manual model's default prices 0.016: configs/search/calibrated/).
    bool free_page_reporting = false;
    // Freed blocks of 2^order pages go back (9: 2 MiB; 11: 8 MiB); -1 where the kernel has no
    // page_reporting module. A larger order hands back less of a fragmented heap.
    int page_reporting_order = -1;
    // The kernel's transparent huge page mode ("always", "madvise", "never"; empty: unknown): with
    // "always" a large heap block faults in 2 MiB at a time.
    std::string transparent_hugepages;
};

// The kind of this machine (read once).
const HostKind &host_kind();

// The CPU fields of a HostKind from /proc/cpuinfo's text (the first processor's).
HostKind parse_cpuinfo(const std::string &cpuinfo);

// Whether a virtio balloon under `sysfs` (normally "/sys") has a driver bound and free page
// reporting negotiated (VIRTIO_BALLOON_F_REPORTING, feature bit 5 of its `features` string).
bool free_page_reporting(const std::string &sysfs);

// The memory facts of a HostKind beyond free_page_reporting, read under `sysfs`:
// page_reporting_order and transparent_hugepages (left unknown where the files are missing).
void read_memory_kind(const std::string &sysfs, HostKind &kind);

// The word a sysfs mode file selects: "madvise" of "always [madvise] never"; empty if none is.
std::string selected_mode(const std::string &text);

} // namespace schedforge::common
