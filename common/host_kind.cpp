#include "common/host_kind.h"

#include "common/text.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace schedforge::common {

namespace {

constexpr const char *kVirtioBalloon = "0x0005"; // virtio device id of a memory balloon
constexpr size_t kBalloonReportingBit = 5;       // VIRTIO_BALLOON_F_REPORTING

// A non-negative decimal integer, or -1 for anything else (empty, words, trailing text).
int count_or_unknown(const std::string &value) {
    char *end = nullptr;
    const long number = std::strtol(value.c_str(), &end, 10);
    return !value.empty() && *end == '\0' && number >= 0 ? int(number) : -1;
}

} // namespace

HostKind parse_cpuinfo(const std::string &cpuinfo) {
    HostKind kind;
    std::istringstream lines(cpuinfo);
    for (std::string line; std::getline(lines, line);) {
        const std::string l = trim(line);
        if (l.empty() && !kind.cpu_vendor.empty()) break; // the first processor's block ends
        const size_t colon = l.find(':');
        if (colon == std::string::npos) continue;
        const std::string key = trim(l.substr(0, colon)), value = trim(l.substr(colon + 1));
        if (key == "vendor_id") kind.cpu_vendor = value;
        if (key == "cpu family") kind.cpu_family = count_or_unknown(value);
        if (key == "model") kind.cpu_model = count_or_unknown(value);
    }
    return kind;
}

bool free_page_reporting(const std::string &sysfs) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path devices = fs::path(sysfs) / "bus/virtio/devices";
    for (fs::directory_iterator it(devices, ec), end; !ec && it != end; it.increment(ec)) {
        const fs::path d = it->path();
        if (trim(file_text((d / "device").string())) != kVirtioBalloon || !fs::exists(d / "driver")) continue;
        const std::string features = trim(file_text((d / "features").string()));
        if (features.size() > kBalloonReportingBit && features[kBalloonReportingBit] == '1') return true;
    }
    return false;
}

std::string selected_mode(const std::string &text) {
    const size_t open = text.find('['), close = text.find(']', open);
    if (open == std::string::npos || close == std::string::npos) return "";
    return trim(text.substr(open + 1, close - open - 1));
}

void read_memory_kind(const std::string &sysfs, HostKind &kind) {
    kind.page_reporting_order =
        count_or_unknown(trim(file_text(sysfs + "/module/page_reporting/parameters/page_reporting_order")));
    kind.transparent_hugepages = selected_mode(file_text(sysfs + "/kernel/mm/transparent_hugepage/enabled"));
}

const HostKind &host_kind() {
    static const HostKind kind = [] {
        HostKind k = parse_cpuinfo(file_text("/proc/cpuinfo"));
        k.free_page_reporting = free_page_reporting("/sys");
        read_memory_kind("/sys", k);
        return k;
    }();
    return kind;
}

} // namespace schedforge::common
