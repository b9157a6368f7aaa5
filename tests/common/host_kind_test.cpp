// What kind of machine this is: the CPU's identity from /proc/cpuinfo, and free page reporting
// from a virtio balloon in sysfs (a fake sysfs tree here, so both answers are tested anywhere).
#include "common/host_kind.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace schedforge::common {
namespace {

namespace fs = std::filesystem;

TEST(HostKind, ReadsTheFirstProcessorOfCpuinfo) {
    const HostKind k = parse_cpuinfo("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n"
                                     "model name\t: AMD EPYC\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\n"
                                     "cpu family\t: 6\nmodel\t\t: 143\n");
    EXPECT_EQ(k.cpu_vendor, "AuthenticAMD");
    EXPECT_EQ(k.cpu_family, 26);
    EXPECT_EQ(k.cpu_model, 2); // not "model name"
    EXPECT_FALSE(k.free_page_reporting);
    const HostKind unknown = parse_cpuinfo("processor : 0\nmodel : unknown\n");
    EXPECT_EQ(unknown.cpu_vendor, "");
    EXPECT_EQ(unknown.cpu_family, -1);
    EXPECT_EQ(unknown.cpu_model, -1);
}

// A fake sysfs with one virtio device.
class FakeSysfs {
public:
    FakeSysfs() : root_(fs::temp_directory_path() / ("schedforge_sysfs_" + std::to_string(::getpid()))) {
        fs::remove_all(root_);
    }
    ~FakeSysfs() { fs::remove_all(root_); }
    void add_device(const std::string &name, const std::string &id, const std::string &features, bool driver) {
        const fs::path d = root_ / "bus/virtio/devices" / name;
        fs::create_directories(d);
        std::ofstream(d / "device") << id << "\n";
        std::ofstream(d / "features") << features << "\n";
        if (driver) fs::create_directories(d / "driver");
    }
    void add_file(const std::string &path, const std::string &text) {
        fs::create_directories((root_ / path).parent_path());
        std::ofstream(root_ / path) << text;
    }
    std::string root() const { return root_.string(); }

private:
    fs::path root_;
};

TEST(HostKind, FreePageReportingNeedsABoundBalloonThatNegotiatedIt) {
    const std::string reporting = "0110010100000000000000000000000010"; // bit 5 set
    const std::string no_reporting = "0110000100000000000000000000000010";
    {
        FakeSysfs sys;
        EXPECT_FALSE(free_page_reporting(sys.root()));        // no virtio bus at all
        sys.add_device("virtio1", "0x0002", reporting, true); // a block device's bit 5 means something else
        EXPECT_FALSE(free_page_reporting(sys.root()));
        sys.add_device("virtio0", "0x0005", no_reporting, true);
        EXPECT_FALSE(free_page_reporting(sys.root()));
        sys.add_device("virtio0", "0x0005", reporting, true);
        EXPECT_TRUE(free_page_reporting(sys.root()));
    }
    {
        FakeSysfs sys;
        sys.add_device("virtio3", "0x0005", reporting, /*driver=*/false); // no balloon driver bound
        EXPECT_FALSE(free_page_reporting(sys.root()));
    }
}

TEST(HostKind, ReadsTheSelectedModeOfASysfsFile) {
    EXPECT_EQ(selected_mode("always [madvise] never\n"), "madvise");
    EXPECT_EQ(selected_mode("[always] madvise never"), "always");
    EXPECT_EQ(selected_mode("always madvise never"), "");
    EXPECT_EQ(selected_mode(""), "");
}

TEST(HostKind, ReadsPageReportingOrderAndHugePageMode) {
    FakeSysfs sys;
    HostKind k;
    read_memory_kind(sys.root(), k); // neither file: both unknown
    EXPECT_EQ(k.page_reporting_order, -1);
    EXPECT_EQ(k.transparent_hugepages, "");
    sys.add_file("module/page_reporting/parameters/page_reporting_order", "9\n");
    sys.add_file("kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
    read_memory_kind(sys.root(), k);
    EXPECT_EQ(k.page_reporting_order, 9);
    EXPECT_EQ(k.transparent_hugepages, "madvise");
    sys.add_file("module/page_reporting/parameters/page_reporting_order", "nine\n");
    read_memory_kind(sys.root(), k);
    EXPECT_EQ(k.page_reporting_order, -1);
}

TEST(HostKind, DescribesThisMachine) {
    const HostKind &k = host_kind();
#if defined(__x86_64__)
    EXPECT_FALSE(k.cpu_vendor.empty()); // x86 Linux names the vendor and the family
    EXPECT_GT(k.cpu_family, 0);
#endif
    EXPECT_EQ(k.free_page_reporting, free_page_reporting("/sys"));
    HostKind memory;
    read_memory_kind("/sys", memory);
    EXPECT_EQ(k.page_reporting_order, memory.page_reporting_order);
    EXPECT_EQ(k.transparent_hugepages, memory.transparent_hugepages);
}

} // namespace
} // namespace schedforge::common
