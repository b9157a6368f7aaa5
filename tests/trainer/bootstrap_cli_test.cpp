// bootstrap as a user runs it: rounds search with the previous round's weights and train on all
// data so far; a rerun skips finished steps and adds rounds; a run killed mid-round continues;
// the learned schedules compute what compute_root computes; bad inputs are exit 2 with nothing
// written.
#include "datasets/reader.h"
#include "datasets/verify.h"
#include "tests/support/commands.h"
#include "trainer/weights.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <thread>

namespace {

using namespace schedforge::testing;
namespace ds = schedforge::datasets;

// Tiny pipelines, short searches and timings: a round takes seconds.
std::string tiny_config(const fs::path &dir) {
    return write_config(dir, "version: 1\ngenerator: " + kSmallConfig +
                                 "\npipelines: 3\nschedules_per_pipeline: 3\nseed: 11\n"
                                 "beam_sample: {beam_size: 4, passes: 2}\n"
                                 "timing: {min_samples: 3, max_samples: 10, max_seconds: 0.05}\n");
}

// Without --apps in `extra`, no apps are scored (compare-schedulers is tested on its own).
std::string bootstrap(const std::string &config, const fs::path &out, const std::string &extra) {
    return std::string(BOOTSTRAP) + " --config " + config + " --out " + out.string() + " --epochs 3 " +
           (extra.find("--apps") == std::string::npos ? "--apps none " : "") + extra;
}

uint64_t schedules_in(const fs::path &h5) { return ds::DatasetReader::open(h5.string())->num_schedules(); }

TEST(Bootstrap, RoundsUseThePreviousWeightsAndARerunAddsRounds) {
    const fs::path dir = scratch("bootstrap_rounds");
    const std::string config = tiny_config(dir);
    const fs::path run_dir = dir / "run";
    const Result one = run(bootstrap(config, run_dir, "--rounds 1"));
    ASSERT_EQ(one.exit_code, 0) << one.out << one.err;
    EXPECT_EQ(schedules_in(run_dir / "round-0" / "dataset.h5"), 9u);
    // Round 0 searched with random weights (the paper's start), kept in the run folder.
    const auto info0 = ds::DatasetReader::open((run_dir / "round-0" / "dataset.h5").string())->info();
    EXPECT_NE(info0.config.find((run_dir / "initial.weights").string()), std::string::npos) << info0.config;
    EXPECT_NE(schedforge::trainer::Weights::load((run_dir / "initial.weights").string()).origin.find("random"),
              std::string::npos);
    EXPECT_EQ(count_lines(read_file(run_dir / "rounds.csv")), 2);
    const auto first_write = fs::last_write_time(run_dir / "round-0" / "dataset.h5");

    const Result two = run(bootstrap(config, run_dir, "--rounds 2"));
    ASSERT_EQ(two.exit_code, 0) << two.out << two.err;
    EXPECT_EQ(two.out.find("round 0 of 2: dataset"), std::string::npos) << "round 0 was redone:\n" << two.out;
    EXPECT_EQ(fs::last_write_time(run_dir / "round-0" / "dataset.h5"), first_write);
    // Round 1: new pipelines (seed + 1), searched with round 0's weights; trained on both rounds.
    const auto info1 = ds::DatasetReader::open((run_dir / "round-1" / "dataset.h5").string())->info();
    EXPECT_NE(info1.config.find((run_dir / "round-0" / "model.weights").string()), std::string::npos) << info1.config;
    EXPECT_NE(info1.config.find("seed: 12"), std::string::npos) << info1.config;
    const std::string origin =
        schedforge::trainer::Weights::load((run_dir / "round-1" / "model.weights").string()).origin;
    EXPECT_NE(origin.find("dataset.h5 dataset.h5 (6 pipelines"), std::string::npos) << origin;
    EXPECT_NE(origin.find("from: random initialization"), std::string::npos) << origin;
    EXPECT_EQ(count_lines(read_file(run_dir / "rounds.csv")), 3);
    EXPECT_TRUE(fs::exists(run_dir / "round-1" / "training" / "metrics.csv"));
    EXPECT_NE(two.out.find("bootstrap rounds"), std::string::npos) << two.out;

    // The learned weights schedule a pipeline whose output matches compute_root's.
    const Result cmp =
        run(compare_schedulers("--pipelines 1 --seed 3 --config " + kSmallConfig +
                               " --schedulers root,SchedForgeLearned --baseline root --weights " +
                               (run_dir / "round-1" / "model.weights").string() + " --out " + (dir / "cmp").string()));
    ASSERT_EQ(cmp.exit_code, 0) << cmp.out << cmp.err;
    EXPECT_NE(cmp.out.find("0 failed"), std::string::npos) << cmp.out;

    // Other settings for the same folder are refused, naming the difference.
    const Result other = run(bootstrap(config, run_dir, "--rounds 2 --lr 0.01"));
    EXPECT_EQ(other.exit_code, 2) << other.out;
    EXPECT_NE(other.err.find("lr = 0.001, now lr = 0.01"), std::string::npos) << other.err;
}

// Rounds that learn corrections to a manual model, within a trust region, and train on a
// committed corpus besides their own data.
TEST(Bootstrap, TrainsFromAManualModelOnBaseDataToo) {
    const fs::path dir = scratch("bootstrap_manual");
    const std::string config = tiny_config(dir);
    const Result base = run(bootstrap(config, dir / "base", "--rounds 1 --initial-weights manual --seed 40"));
    ASSERT_EQ(base.exit_code, 0) << base.out << base.err;
    const std::string base_data = (dir / "base" / "round-0" / "dataset.h5").string();
    const std::string coefficients = std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/search/default.yaml";
    const fs::path run_dir = dir / "run";
    const Result one = run(bootstrap(config, run_dir,
                                     "--rounds 1 --initial-weights manual --from-coefficients " + coefficients +
                                         " --correction-bound 2 --base-data " + base_data));
    ASSERT_EQ(one.exit_code, 0) << one.out << one.err;
    const schedforge::trainer::Weights w =
        schedforge::trainer::Weights::load((run_dir / "round-0" / "model.weights").string());
    EXPECT_EQ(w.correction_bound, 2);
    EXPECT_NE(w.origin.find("the manual model with the coefficients of " + coefficients), std::string::npos)
        << w.origin;
    EXPECT_NE(w.origin.find("dataset.h5 dataset.h5 (6 pipelines"), std::string::npos) << w.origin; // base + round 0
    // The manual model searched round 0: no initial weights in the run.
    EXPECT_FALSE(fs::exists(run_dir / "initial.weights"));
    // A rerun without the base data is another run.
    const Result other = run(
        bootstrap(config, run_dir,
                  "--rounds 1 --initial-weights manual --from-coefficients " + coefficients + " --correction-bound 2"));
    EXPECT_EQ(other.exit_code, 2) << other.out;
}

TEST(Bootstrap, AKilledRunContinues) {
    const fs::path dir = scratch("bootstrap_killed");
    const std::string config = tiny_config(dir);
    const fs::path run_dir = dir / "run", h5 = run_dir / "round-0" / "dataset.h5";
    const pid_t pid = fork();
    if (pid == 0) {
        ::setpgid(0, 0); // its own group: the kill takes generate-dataset and its workers too
        const int devnull = ::open("/dev/null", O_WRONLY);
        ::dup2(devnull, STDOUT_FILENO);
        ::dup2(devnull, STDERR_FILENO);
        ::execl("/bin/sh", "sh", "-c", bootstrap(config, run_dir, "--rounds 1").c_str(), nullptr);
        ::_exit(127);
    }
    ::setpgid(pid, pid);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
    bool started = false;
    while (!started && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        try {
            started = fs::exists(h5) && schedules_in(h5) >= 1;
        } catch (const std::exception &) {
            // created but not yet initialized
        }
    }
    ::kill(-pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(started) << h5 << " never got a sample";
    ASSERT_FALSE(fs::exists(run_dir / "round-0" / "model.weights")) << "the run finished before it was killed";

    const Result rest = run(bootstrap(config, run_dir, "--rounds 1"));
    ASSERT_EQ(rest.exit_code, 0) << rest.out << rest.err;
    EXPECT_NE(rest.out.find("were already there"), std::string::npos) << rest.out;
    EXPECT_EQ(schedules_in(h5), 9u);
    const ds::VerifyReport v = ds::verify_dataset(h5.string());
    EXPECT_TRUE(v.ok()) << v.problems.front();
    EXPECT_TRUE(fs::exists(run_dir / "round-0" / "model.weights"));
}

TEST(Bootstrap, BadInputsAreUserErrorsWithNothingWritten) {
    const fs::path dir = scratch("bootstrap_errors");
    const std::string config = tiny_config(dir);
    const fs::path out = dir / "run";
    expect_user_error(run(bootstrap(config, out, "--rounds 0")), "--rounds");
    expect_user_error(run(bootstrap(config, out, "--rounds 1 --initial-weights " + (dir / "none.weights").string())),
                      "none.weights");
    expect_user_error(run(bootstrap(config, out, "--rounds 1 --apps nosuchapp")), "nosuchapp");
    expect_user_error(run(bootstrap(config, out, "--rounds 1 --loss l1")), "--loss");
    expect_user_error(run(bootstrap(config, out, "--rounds 1 --correction-bound 2")), "give --from-coefficients");
    expect_user_error(run(bootstrap(config, out, "--rounds 1 --base-data " + (dir / "none.h5").string())), "none.h5");
    EXPECT_FALSE(fs::exists(out));
    fs::create_directories(out);
    write_config(out, "not a bootstrap run\n");
    expect_user_error(run(bootstrap(config, out, "--rounds 1")), "not a bootstrap run");
    expect_user_error(run(compare_schedulers("--pipelines 1 --schedulers root,SchedForgeLearned --baseline root "
                                             "--out " +
                                             (dir / "cmp").string())),
                      "SchedForgeLearned needs --weights");
}

} // namespace
