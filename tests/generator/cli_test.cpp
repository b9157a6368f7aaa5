// The CLIs and the random_pipeline Generator, run as separate processes the way a user runs them.
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
const std::string kSource = SCHEDFORGE_SOURCE_DIR;
const std::string kSmall = kSource + "/configs/generator/small.yaml";

struct Result {
    int exit_code;
    std::string out, err;
};

std::string read_file(const fs::path &p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Runs a shell command, capturing stdout and stderr separately.
Result run(const std::string &command) {
    const fs::path err = fs::temp_directory_path() / ("schedforge_cli_test_" + std::to_string(::getpid()) + ".err");
    FILE *pipe = popen((command + " 2>" + err.string()).c_str(), "r");
    EXPECT_NE(pipe, nullptr);
    Result r;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
    const int status = pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = read_file(err);
    fs::remove(err);
    return r;
}

// A fresh, empty scratch folder per test.
fs::path scratch(const std::string &name) {
    const fs::path dir = fs::temp_directory_path() / ("schedforge_test_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    return dir;
}

std::string write_config(const fs::path &dir, const std::string &text) {
    fs::create_directories(dir);
    const fs::path p = dir / "config.yaml";
    std::ofstream(p) << text;
    return p.string();
}

int count_lines(const std::string &s) { return int(std::count(s.begin(), s.end(), '\n')); }

std::string gp(const std::string &args) { return std::string(GENERATE_PIPELINES) + " " + args; }

TEST(GeneratePipelines, SameSeedSameFilesInSeparateProcesses) {
    const fs::path a = scratch("det_a"), b = scratch("det_b");
    const Result ra =
        run("HL_NUM_THREADS=1 " + gp("--config " + kSmall + " --seed 100 --count 20 --out " + a.string()));
    const Result rb =
        run("HL_NUM_THREADS=2 " + gp("--config " + kSmall + " --seed 100 --count 20 --out " + b.string()));
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
    const std::string args = "--config " + kSmall + " --seed 7 --count 4 --run --out ";
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
    const Result r = run(gp("--config " + kSmall + " --seed 1 --count 2 --stmt --html --out " + dir.string()));
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

// Bad input: exit 2, one line on stderr naming the problem, no output folder.
void expect_user_error(const std::string &args, const std::string &expected_fragment, const fs::path &out) {
    const Result r = run(gp(args));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(expected_fragment), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << "output written despite the error";
}

TEST(GeneratePipelinesErrors, UnknownKey) {
    const fs::path cfgdir = scratch("err_cfg1"), out = scratch("err_out1");
    const std::string cfg = write_config(cfgdir, "version: 1\ninput:\n  colour: 3\n");
    expect_user_error("--config " + cfg + " --out " + out.string(), "unknown key 'input.colour'", out);
    fs::remove_all(cfgdir);
}

TEST(GeneratePipelinesErrors, EmptyRange) {
    const fs::path cfgdir = scratch("err_cfg2"), out = scratch("err_out2");
    const std::string cfg = write_config(cfgdir, "stages: {min: 9, max: 3}\n");
    expect_user_error("--config " + cfg + " --out " + out.string(), "'stages' is empty", out);
    fs::remove_all(cfgdir);
}

TEST(GeneratePipelinesErrors, NegativeRange) {
    const fs::path cfgdir = scratch("err_cfg3"), out = scratch("err_out3");
    const std::string cfg = write_config(cfgdir, "input:\n  channels: {min: -1, max: 2}\n");
    expect_user_error("--config " + cfg + " --out " + out.string(), "'input.channels.min' is -1", out);
    fs::remove_all(cfgdir);
}

TEST(GeneratePipelinesErrors, UnknownTypeName) {
    const fs::path cfgdir = scratch("err_cfg4"), out = scratch("err_out4");
    const std::string cfg = write_config(cfgdir, "dnn:\n  types: {bfloat16: 1}\n");
    expect_user_error("--config " + cfg + " --out " + out.string(), "unknown type name 'dnn.types.bfloat16'", out);
    fs::remove_all(cfgdir);
}

TEST(GeneratePipelinesErrors, MalformedYaml) {
    const fs::path cfgdir = scratch("err_cfg5"), out = scratch("err_out5");
    const std::string cfg = write_config(cfgdir, "stages: [1, 2\n");
    expect_user_error("--config " + cfg + " --out " + out.string(), "malformed YAML at line", out);
    fs::remove_all(cfgdir);
}

TEST(GeneratePipelinesErrors, UnreadableConfig) {
    const fs::path out = scratch("err_out6");
    expect_user_error("--config /nonexistent.yaml --out " + out.string(), "/nonexistent.yaml: cannot read config file",
                      out);
}

TEST(GeneratePipelinesErrors, BadFlags) {
    const fs::path out = scratch("err_out7");
    expect_user_error("--count 0 --out " + out.string(), "--count", out);
    expect_user_error("--count -3 --out " + out.string(), "--count", out);
    expect_user_error("--seed 1", "--out is required", out);
}

TEST(GeneratePipelinesErrors, UnwritableOutput) {
    const Result r = run(gp("--count 1 --out /proc/schedforge_cannot_write"));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("cannot create output folder"), std::string::npos) << r.err;
}

// ---- the random_pipeline Generator under Halide's own tooling ----

std::string generator(const fs::path &out, const std::string &params) {
    return std::string(RANDOM_PIPELINE_GENERATOR) + " -g random_pipeline -o " + out.string() +
           " -e static_library,h,stmt target=host " + params;
}

TEST(RandomPipelineGenerator, BuildsWithGenGen) {
    const fs::path dir = scratch("gengen");
    fs::create_directories(dir);
    const Result r = run(generator(dir, "seed=5 config=" + kSmall));
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
            run("HL_BEAM_SIZE=1 " + generator(dir, "seed=9 stages=8 config=" + kSmall) + " -p " +
                SCHEDFORGE_PLUGIN_DIR + "/libautoschedule_" + lib + ".so -s " + name + " auto_schedule=true");
        EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
        EXPECT_TRUE(fs::exists(dir / "random_pipeline.a")) << name;
        fs::remove_all(dir);
    }
}

TEST(RandomPipelineGenerator, BadConfigExitsTwo) {
    const fs::path dir = scratch("gengen_bad");
    fs::create_directories(dir);
    const fs::path cfgdir = scratch("gengen_bad_cfg");
    const std::string cfg = write_config(cfgdir, "stages: {min: 1, max: 2, typo: 3}\n");
    const Result r = run(generator(dir, "seed=1 config=" + cfg));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("unknown key 'stages.typo'"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "random_pipeline.a"));
    fs::remove_all(dir);
    fs::remove_all(cfgdir);
}

TEST(RandomPipelineGenerator, RunGenBenchmarksTheAheadOfTimeBuild) {
    // random_pipeline_rungen is seed 3, compiled by CMake with Adams2019 and linked with RunGen.
    const Result r =
        run(std::string(RANDOM_PIPELINE_RUNGEN) + " --estimate_all --benchmarks=all --benchmark_min_time=0");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE((r.out + r.err).find("Benchmark for random_pipeline"), std::string::npos) << r.out << r.err;
}

} // namespace
