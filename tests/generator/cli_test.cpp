// The CLIs and the random_pipeline Generator, run as separate processes the way a user runs them.
#include "tests/support/commands.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace {

namespace fs = std::filesystem;
using namespace schedforge::testing;

TEST(GeneratePipelines, SameSeedSameFilesInSeparateProcesses) {
    const fs::path a = scratch("det_a"), b = scratch("det_b");
    const Result ra =
        run("HL_NUM_THREADS=1 " + gp("--config " + kSmallConfig + " --seed 100 --count 20 --out " + a.string()));
    const Result rb =
        run("HL_NUM_THREADS=2 " + gp("--config " + kSmallConfig + " --seed 100 --count 20 --out " + b.string()));
    ASSERT_EQ(ra.exit_code, 0) << ra.err;
    ASSERT_EQ(rb.exit_code, 0) << rb.err;
    int specs = 0;
    for (const auto &entry : fs::directory_iterator(a)) {
        const fs::path other = b / entry.path().filename();
        ASSERT_TRUE(fs::exists(other)) << other;
        EXPECT_EQ(read_file(entry.path()), read_file(other)) << entry.path().filename();
        specs += entry.path().extension() == ".spec";
    }
    EXPECT_EQ(specs, 20);
    // The printed table matches too (its last line names the output folder, which differs).
    EXPECT_EQ(ra.out.substr(0, ra.out.rfind("20 pipelines")), rb.out.substr(0, rb.out.rfind("20 pipelines")));
    fs::remove_all(a);
    fs::remove_all(b);
}

TEST(GeneratePipelines, RunCompilesEveryPipelineAndOutputsAreReproducible) {
    const fs::path a = scratch("run_a"), b = scratch("run_b");
    const std::string args = "--config " + kSmallConfig + " --seed 7 --count 4 --run --out ";
    const Result ra = run("HL_NUM_THREADS=1 " + gp(args + a.string()));
    const Result rb = run("HL_NUM_THREADS=2 " + gp(args + b.string()));
    ASSERT_EQ(ra.exit_code, 0) << ra.err;
    ASSERT_EQ(rb.exit_code, 0) << rb.err;
    // The checksum column (outputs) matches; timings may not.
    auto checksums = [](const fs::path &dir) {
        std::istringstream in(read_file(dir / "pipelines.tsv"));
        std::string line, result;
        std::getline(in, line);
        EXPECT_NE(line.find("checksum"), std::string::npos);
        while (std::getline(in, line)) {
            std::vector<std::string> cols;
            std::stringstream ls(line);
            std::string col;
            while (std::getline(ls, col, '\t')) cols.push_back(col);
            EXPECT_EQ(cols.size(), 12u);
            result += cols.at(10) + " ";
        }
        return result;
    };
    const std::string ca = checksums(a);
    EXPECT_EQ(ca.size(), 4u * 9);
    EXPECT_EQ(ca, checksums(b));
    fs::remove_all(a);
    fs::remove_all(b);
}

TEST(GeneratePipelines, WritesStmtAndHtmlOnRequest) {
    const fs::path dir = scratch("stmt");
    const Result r = run(gp("--config " + kSmallConfig + " --seed 1 --count 2 --stmt --html --out " + dir.string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    int stmt = 0, html = 0;
    for (const auto &entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        stmt += name.size() > 5 && name.substr(name.size() - 5) == ".stmt";
        html += name.find(".stmt.html") != std::string::npos;
    }
    EXPECT_EQ(stmt, 2);
    EXPECT_EQ(html, 2);
    fs::remove_all(dir);
}

// ---- the random_pipeline Generator under Halide's own tooling ----

TEST(RandomPipelineGenerator, BuildsWithGenGen) {
    const fs::path dir = scratch("gengen");
    fs::create_directories(dir);
    const Result r = run(generator(dir, "seed=5 config=" + kSmallConfig));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir / "random_pipeline.a"));
    EXPECT_TRUE(fs::exists(dir / "random_pipeline.h"));
    EXPECT_NE(read_file(dir / "random_pipeline.stmt").find("s"), std::string::npos);
    fs::remove_all(dir);
}

TEST(RandomPipelineGenerator, RunsHalidesAutoschedulerPlugins) {
    for (const std::string plugin : {"adams2019:Adams2019", "mullapudi2016:Mullapudi2016", "li2018:Li2018"}) {
        const std::string lib = plugin.substr(0, plugin.find(':')), name = plugin.substr(plugin.find(':') + 1);
        const fs::path dir = scratch("plugin_" + lib);
        fs::create_directories(dir);
        const Result r =
            run("HL_BEAM_SIZE=1 " + generator(dir, "seed=9 stages=8 config=" + kSmallConfig) + " -p " +
                SCHEDFORGE_PLUGIN_DIR + "/libautoschedule_" + lib + ".so -s " + name + " auto_schedule=true");
        EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
        EXPECT_TRUE(fs::exists(dir / "random_pipeline.a")) << name;
        fs::remove_all(dir);
    }
}

TEST(RandomPipelineGenerator, RunGenBenchmarksTheAheadOfTimeBuild) {
    // random_pipeline_rungen is seed 3, compiled by CMake with Adams2019 and linked with RunGen.
    const Result r =
        run(std::string(RANDOM_PIPELINE_RUNGEN) + " --estimate_all --benchmarks=all --benchmark_min_time=0");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE((r.out + r.err).find("Benchmark for random_pipeline"), std::string::npos) << r.out << r.err;
}

// ---- compare-schedulers ----

TEST(CompareSchedulers, ComparesSchedulesAndWritesCsvAndChart) {
    const fs::path dir = scratch("compare");
    const std::string search = write_config(dir / "search", "version: 1\nsearch:\n  beam_size: 4\n  passes: 2\n");
    const Result r = run(compare_schedulers("--config " + kSmallConfig +
                                            " --pipelines 2 --seed 3 --schedulers root,inline,Mullapudi2016,SchedForge "
                                            "--search-config " +
                                            search + " --baseline root --out " + dir.string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("geomean"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Mullapudi2016 ms"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("SchedForge ms"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("median of its timing rounds' minima"), std::string::npos) << r.out; // 5 by default
    const std::string csv = read_file(dir / "comparison.csv");
    EXPECT_EQ(count_lines(csv), 1 + 2 * 4) << csv;
    EXPECT_NE(csv.find(",SchedForge,ok,"), std::string::npos) << csv;
    // The baseline's own speedup is 1 and every schedule matched the reference output.
    EXPECT_NE(csv.find(",root,ok,\"\","), std::string::npos) << csv;
    EXPECT_EQ(csv.find("wrong_output"), std::string::npos) << csv;
    EXPECT_TRUE(fs::exists(dir / "comparison.png"));
    EXPECT_NE(read_file(dir / "fingerprint.txt").find("cpu_model = "), std::string::npos);
    fs::remove_all(dir);
}

TEST(CompareSchedulers, AppsCompareTheirManualSchedule) {
    const fs::path dir = scratch("compare_apps");
    const Result r = run(compare_schedulers("--apps blur3x3 --pipelines 0 --schedulers manual,root --baseline manual "
                                            "--out " +
                                            dir.string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string csv = read_file(dir / "comparison.csv");
    EXPECT_NE(csv.find("blur3x3,app,manual,ok,"), std::string::npos) << csv;
    EXPECT_NE(csv.find("blur3x3,app,root,ok,"), std::string::npos) << csv;
    fs::remove_all(dir);
}

} // namespace
