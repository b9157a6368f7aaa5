// The default search of a machine kind: the committed calibrations with a `machine:` section are
// embedded as committed, a host of their kind gets their coefficients and nothing else of theirs,
// any other host the built-in defaults, and a config the user names replaces the default whole.
#include "sampler/machine_calibration.h"

#include "common/errors.h"
#include "common/yaml_reader.h"
#include "featurize/cost_terms.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace schedforge::sampler {
namespace {

namespace fs = std::filesystem;

const std::string kCalibrated = std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/search/calibrated/";
const std::string kDefaultConfig = std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/search/default.yaml";

common::HostKind host(const std::string &vendor, int family, int model, bool reporting) {
    common::HostKind k;
    k.cpu_vendor = vendor;
    k.cpu_family = family;
    k.cpu_model = model;
    k.free_page_reporting = reporting;
    return k;
}
common::HostKind zen5(bool reporting) { return host("AuthenticAMD", 26, 2, reporting); }

TEST(MachineCalibration, EmbedsEachCommittedFileWithAMachineSection) {
    size_t with_section = 0;
    for (const fs::directory_entry &e : fs::directory_iterator(kCalibrated)) {
        if (e.path().extension() != ".yaml") continue;
        const SearchOptions file = load_search_options(e.path().string());
        with_section += file.machine.has_value();
        const auto embedded =
            std::find_if(machine_calibrations().begin(), machine_calibrations().end(),
                         [&](const MachineCalibration &c) { return c.name == e.path().filename().string(); });
        ASSERT_EQ(embedded != machine_calibrations().end(), file.machine.has_value()) << e.path();
        if (file.machine) {
            EXPECT_EQ(embedded->yaml, yaml::read_file(e.path().string())) << "rebuild: " << e.path();
        }
    }
    EXPECT_EQ(machine_calibrations().size(), with_section);
    EXPECT_GE(with_section, 1u);
}

TEST(MachineCalibration, TheZen5ThatReturnsFreedPagesGetsItsCalibration) {
    const MachineCalibration *c = calibration_for(zen5(true));
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->name, "amd-epyc-avx512-2core-l3-508m.yaml");
    std::string described;
    const SearchOptions o = default_search_options(zen5(true), &described);
    EXPECT_NE(described.find(c->name), std::string::npos) << described;
    // Its coefficients over the built-in everything else.
    SearchOptions expected;
    expected.coefficients = load_search_options(kCalibrated + c->name).coefficients;
    EXPECT_EQ(o.coefficients, expected.coefficients);
    EXPECT_NE(o.coefficients, SearchOptions().coefficients);
    EXPECT_EQ(o.beam_size, expected.beam_size);
    EXPECT_EQ(o.max_tilings, expected.max_tilings);
    EXPECT_EQ(o.space.max_tile_shapes, expected.space.max_tile_shapes);
}

// The Emerald Rapids VM's default fits nothing: the built-in coefficients with this machine's
// measured price of a refaulted heap byte and of a libm call put in (configs/search/calibrated/README.md).
TEST(MachineCalibration, TheEmeraldRapidsThatReturnsFreedPagesGetsTheBuiltInsWithItsMeasuredPrices) {
    common::HostKind emr = host("GenuineIntel", 6, 207, true);
    const MachineCalibration *c = calibration_for(emr);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->name, "intel-xeon-emr-avx512-2core-fpr-measured.yaml");
    const auto measured = default_search_options(emr).coefficients;
    const auto built_in = SearchOptions().coefficients;
    for (int t = 0; t < featurize::kNumCostTerms; ++t) {
        if (t == featurize::kPageFaultTerm || t == featurize::kLibraryCallTerm) {
            EXPECT_GT(measured[t], built_in[t]) << featurize::cost_term_names()[t];
        } else {
            EXPECT_NEAR(measured[t], built_in[t], 1e-5 * built_in[t]) << featurize::cost_term_names()[t]; // as written
        }
    }
    emr.free_page_reporting = false;
    EXPECT_EQ(calibration_for(emr), nullptr);
}

TEST(MachineCalibration, OtherMachinesKeepTheBuiltInDefaults) {
    const common::HostKind intel = host("GenuineIntel", 6, 143, false), zen5_elsewhere = zen5(false),
                           zen4 = host("AuthenticAMD", 25, 2, true);
    for (const common::HostKind &k : {intel, zen5_elsewhere, zen4, common::HostKind()}) {
        EXPECT_EQ(calibration_for(k), nullptr) << k.cpu_vendor << " " << k.cpu_family;
        std::string described;
        EXPECT_EQ(default_search_options(k, &described).coefficients, SearchOptions().coefficients);
        EXPECT_NE(described.find("built-in"), std::string::npos) << described;
    }
}

TEST(MachineCalibration, ANamedConfigReplacesTheDefault) {
    std::string described;
    const SearchOptions o = search_options_or_default(kDefaultConfig, &described);
    EXPECT_EQ(described, kDefaultConfig);
    EXPECT_EQ(o.coefficients, SearchOptions().coefficients); // whatever this machine is
    EXPECT_EQ(search_options_or_default("", &described).coefficients,
              default_search_options(common::host_kind()).coefficients);
}

TEST(MachineCalibration, MatchesEveryKeyGiven) {
    MachineMatch any;
    EXPECT_TRUE(matches(any, zen5(false)));
    MachineMatch m;
    m.cpu_vendor = "AuthenticAMD";
    m.free_page_reporting = 0;
    EXPECT_TRUE(matches(m, zen5(false)));
    EXPECT_FALSE(matches(m, zen5(true)));
    m.cpu_model = 3;
    EXPECT_FALSE(matches(m, zen5(false)));
}

TEST(MachineCalibration, BadMachineSectionsAreUserErrors) {
    const std::string head = "version: 1\nmachine:\n";
    for (const auto &[body, needle] : std::vector<std::pair<std::string, std::string>>{
             {"  cpu_vendr: AuthenticAMD\n", "cpu_vendr"},
             {"  cpu_family: zen\n", "cpu_family"},
             {"  free_page_reporting: sometimes\n", "free_page_reporting"}}) {
        try {
            parse_search_options(head + body, "test.yaml");
            ADD_FAILURE() << "accepted: " << body;
        } catch (const UserError &e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    }
}

} // namespace
} // namespace schedforge::sampler
