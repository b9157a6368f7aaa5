// schedule-report: the analysis of a population on numbers with a known answer, the tool as a
// user runs it on a small random pipeline (report, dataset, plot data, schedules), and bad input.
#include "datagen/schedule_report.h"
#include "datasets/reader.h"
#include "datasets/verify.h"
#include "tests/support/process.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace {

using namespace schedforge::testing;
namespace sh = schedforge::datagen;
namespace ds = schedforge::datasets;
namespace ss = schedforge::sampler;
namespace runner = schedforge::runner;

sh::Member member(const std::string &label, sh::MemberKind kind, double predicted, double measured) {
    sh::Member m;
    m.label = label;
    m.kind = kind;
    m.predicted = predicted;
    m.measured = measured;
    m.status = runner::JobStatus::Ok;
    return m;
}

TEST(ScheduleReportAnalysis, RanksThePopulationAndFindsTheWorstPairs) {
    std::vector<sh::Member> m = {
        member("manual", sh::MemberKind::Reference, NAN, 0.5), // a reference line: never ranked
        member("a", sh::MemberKind::Beam, 1, 4),               // predicted best, measured slowest
        member("b", sh::MemberKind::Dropout, 2, 1),            // the measured best
        member("c", sh::MemberKind::Dropout, 3, 2),
        member("d", sh::MemberKind::Random, 4, 3),
    };
    m.push_back(member("failed", sh::MemberKind::Random, 0.1, NAN));
    m.back().status = runner::JobStatus::Crash;
    const sh::ReportAnalysis a = sh::analyze_population(m, 10);
    EXPECT_EQ(a.ranked, 4u);
    // Of the 6 pairs, those with `a` (3) are wrong; b < c < d are right.
    EXPECT_DOUBLE_EQ(a.pairwise_accuracy, 0.5);
    EXPECT_EQ(a.predicted_best, 1u);
    EXPECT_EQ(a.measured_best, 2u);
    EXPECT_DOUBLE_EQ(a.top1_regret, 4.0);
    // Worst first (a against b: 4x), and `a` in at most two pairs.
    ASSERT_EQ(a.worst.size(), 2u);
    EXPECT_EQ(a.worst[0].better, 1u);
    EXPECT_EQ(a.worst[0].worse, 2u);
    EXPECT_DOUBLE_EQ(a.worst[0].measured_ratio, 4.0);
    EXPECT_DOUBLE_EQ(a.worst[0].predicted_ratio, 2.0);
    EXPECT_EQ(a.worst[1].worse, 3u);
    // A model right up to a constant scale has R^2 1 on the logs.
    std::vector<sh::Member> scaled = {member("x", sh::MemberKind::Beam, 1e9, 1),
                                      member("y", sh::MemberKind::Beam, 2e9, 2),
                                      member("z", sh::MemberKind::Beam, 8e9, 8)};
    const sh::ReportAnalysis s = sh::analyze_population(scaled, 3);
    EXPECT_NEAR(s.r2_log, 1.0, 1e-9);
    EXPECT_DOUBLE_EQ(s.pairwise_accuracy, 1.0);
    EXPECT_TRUE(s.worst.empty());
}

std::string report_command(const std::string &args) { return std::string(SCHEDULE_REPORT) + " " + args; }

std::string read_text(const fs::path &p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(ScheduleReport, BenchmarksAPopulationAndWritesItAsADataset) {
    const fs::path dir = scratch("schedule_report");
    const std::string out = (dir / "r").string();
    const Result r = run(report_command("--pipeline 3 --config " + kSmallConfig + " --out " + out +
                                        " --beam 4 --passes 1 --beam-states 2 --dropout-samples 2 --random 2"
                                        " --references Mullapudi2016 --pairs 2"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("pairwise accuracy"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("| Mullapudi2016 | reference |"), std::string::npos) << r.out;
    EXPECT_EQ(read_text(dir / "r" / "report.md"), r.out.substr(0, r.out.find("wrote ")));
    // The population (not the reference line) as a dataset: modes, features, predictions, times.
    const auto reader = ds::DatasetReader::open(out + "/population.h5");
    ASSERT_EQ(reader->num_pipelines(), 1u);
    const ds::PipelineRecord p = reader->pipeline(0);
    EXPECT_EQ(p.seed, 3u);
    EXPECT_EQ(p.reference_status, ds::Status::Ok);
    std::map<std::string, int> modes;
    for (uint64_t i = 0; i < reader->num_schedules(); i++) {
        const ds::ScheduleRecord s = reader->schedule(i);
        modes[ds::search_mode_name(s.mode)]++;
        EXPECT_EQ(s.status, ds::Status::Ok) << s.message;
        EXPECT_GT(s.predicted_cost, 0);
        EXPECT_GT(s.runtime_min, 0);
        EXPECT_EQ(s.features.size(), p.stages.size() * reader->info().schedule_feature_names.size());
    }
    EXPECT_EQ(modes["dropout"], 2);
    EXPECT_EQ(modes["random"], 2);
    EXPECT_GE(modes["beam"], 1); // a tiny pipeline's final beam may hold a single state
    int sources = 0;             // each member's schedule source, and the Halide autoscheduler's
    for (const auto &f : fs::directory_iterator(dir / "r" / "schedules")) sources += f.path().extension() == ".cpp";
    EXPECT_EQ(sources, int(reader->num_schedules()) + 1);
    EXPECT_NE(read_text(dir / "r" / "schedules" / "Mullapudi2016.cpp").find("pipeline.get_func("), std::string::npos);
    const ds::VerifyReport v = ds::verify_dataset(out + "/population.h5");
    EXPECT_TRUE(v.ok()) << v.problems.front();
    EXPECT_TRUE(fs::exists(dir / "r" / "population.csv"));
    EXPECT_TRUE(fs::exists(dir / "r" / "predicted_vs_measured.dat"));
    // A second run into the same folder would overwrite the population: refused.
    const Result again =
        run(report_command("--pipeline 3 --config " + kSmallConfig + " --out " + out +
                           " --beam-states 1 --dropout-samples 0 --random 0 --references Mullapudi2016"));
    EXPECT_EQ(again.exit_code, 2) << again.err;
    EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
    fs::remove_all(dir);
}

struct BadArgs {
    const char *name, *args, *message;
};
const BadArgs kBadArgs[] = {
    {"NoSubject", "--out /tmp/schedforge_report_never", "give --app NAME or --pipeline SEED"},
    {"UnknownApp", "--app nosuchapp --out /tmp/schedforge_report_never", "unknown app 'nosuchapp'"},
    {"ManualWithoutApp", "--pipeline 1 --references manual --out /tmp/schedforge_report_never",
     "reference 'manual' needs an app"},
    {"UnknownReference", "--app blur3x3 --references Nobody --out /tmp/schedforge_report_never",
     "unknown reference scheduler 'Nobody'"},
    {"NoBeamState", "--app blur3x3 --beam-states 0 --out /tmp/schedforge_report_never", "--beam-states"},
    {"BadWeights", "--app blur3x3 --weights /dev/null --out /tmp/schedforge_report_never", "weights"},
};

class ScheduleReportErrors : public ::testing::TestWithParam<BadArgs> {};

TEST_P(ScheduleReportErrors, ExitTwoWithOneLineAndNothingWritten) {
    const Result r = run(report_command(GetParam().args));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists("/tmp/schedforge_report_never"));
}

INSTANTIATE_TEST_SUITE_P(All, ScheduleReportErrors, ::testing::ValuesIn(kBadArgs),
                         [](const auto &info) { return std::string(info.param.name); });

} // namespace
