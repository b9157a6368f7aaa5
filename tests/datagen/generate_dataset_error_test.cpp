// generate-dataset and dataset reject bad input with exit 2, one line on stderr, and write
// nothing (an existing file stays untouched).
#include "tests/support/commands.h"

#include <gtest/gtest.h>

namespace {

using namespace schedforge::testing;

std::string generate(const std::string &args) { return std::string(GENERATE_DATASET) + " " + args; }

// generate-dataset also prints nothing on stdout for a user error.
void expect_quiet_user_error(const Result &r, const std::string &needle) {
    expect_user_error(r, needle);
    EXPECT_EQ(r.out, "");
}

TEST(GenerateDatasetErrors, BadConfigsWriteNothing) {
    const fs::path dir = scratch("datagen_errors");
    const std::string out = (dir / "out.h5").string();
    const struct {
        std::string yaml, needle;
    } cases[] = {
        {"version: 1\npipelnes: 3\n", "pipelnes"},
        {"version: 1\npipelines: 0\n", "pipelines"},
        {"version: 1\ndropout_samples: {dropout: 1.5}\n", "dropout"},
        {"version: 1\nworkers: {run_timeout_s: -1}\n", "run_timeout"},
        {"version: 1\ngenerator: missing.yaml\n", "missing.yaml"},
        {"version: 1\nfaults: [{pipeline: 0, sample: 0, kind: crash}]\n", "faults"}, // tests' only
        {"version: 2\n", "version"},
        {"version: 1\ntiming: [1, 2\n", "config"},
        {"version: 1\ntiming: {min_sampling_seconds: -1}\n", "min_sampling_seconds"},
        {"version: 1\ntiming: {fresh_processes: maybe}\n", "fresh_processes"},
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(c.yaml);
        const std::string config = write_config(dir, c.yaml);
        expect_quiet_user_error(run(generate("--config " + config + " --out " + out)), c.needle);
        EXPECT_FALSE(fs::exists(out));
    }
}

TEST(GenerateDatasetErrors, BadPathsWriteNothing) {
    const fs::path dir = scratch("datagen_path_errors");
    const std::string config = write_config(dir, "version: 1\ngenerator: " + kSmallConfig + "\npipelines: 1\n");
    expect_quiet_user_error(
        run(generate("--config " + (dir / "nope.yaml").string() + " --out " + (dir / "o.h5").string())), "nope.yaml");
    expect_quiet_user_error(run(generate("--config " + config + " --out " + (dir / "no" / "folder" / "o.h5").string())),
                            "does not exist");
    EXPECT_FALSE(fs::exists(dir / "no"));
    const fs::path existing = dir / "existing.h5";
    std::ofstream(existing) << "precious";
    expect_quiet_user_error(run(generate("--config " + config + " --out " + existing.string())), "already exists");
    EXPECT_EQ(read_file(existing), "precious");
    expect_quiet_user_error(run(generate("--config " + config + " --out " + existing.string() + " --resume")),
                            "existing.h5");
    EXPECT_EQ(read_file(existing), "precious");
    expect_quiet_user_error(run(generate("--config " + config + " --out " + (dir / "none.h5").string() + " --resume")),
                            "none.h5");
    EXPECT_FALSE(fs::exists(dir / "none.h5"));
    expect_quiet_user_error(
        run(generate("--config " + config + " --out " + (dir / "o.h5").string() + " --pipelines -1")), "pipelines");
    EXPECT_FALSE(fs::exists(dir / "o.h5"));

    // Shards: K/N with K < N; a folder takes shards only; a launcher's ranks need a folder each
    // to write their own shard in; and a bad check after the shard leaves no folder behind.
    expect_quiet_user_error(run(generate("--config " + config + " --out " + (dir / "o.h5").string() + " --shard 2/2")),
                            "K/N");
    expect_quiet_user_error(run(generate("--config " + config + " --out " + (dir / "shards").string() + "/")),
                            "folder");
    expect_quiet_user_error(run("OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 " +
                                generate("--config " + config + " --out " + (dir / "o.h5").string())),
                            "Open MPI started 2 processes");
    expect_quiet_user_error(run("SLURM_ARRAY_TASK_ID=9 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 " +
                                generate("--config " + config + " --out " + (dir / "shards").string() + "/")),
                            "contiguous");
    expect_quiet_user_error(
        run(generate("--config " + config + " --out " + (dir / "shards").string() + "/ --shard 0/2 --pipelines 0")),
        "pipelines");
    EXPECT_FALSE(fs::exists(dir / "o.h5"));
    EXPECT_FALSE(fs::exists(dir / "shards"));
}

TEST(DatasetCliErrors, BadFilesAndArguments) {
    const fs::path dir = scratch("dataset_cli_errors");
    fs::create_directories(dir);
    std::ofstream(dir / "text.h5") << "not hdf5";
    const std::string tool = DATASET;
    expect_quiet_user_error(run(tool + " info " + (dir / "missing.h5").string()), "missing.h5");
    expect_quiet_user_error(run(tool + " verify " + (dir / "text.h5").string()), "not an HDF5 file");
    expect_quiet_user_error(run(tool + " merge --out " + (dir / "m.h5").string() + " " + (dir / "text.h5").string()),
                            "not an HDF5 file");
    EXPECT_FALSE(fs::exists(dir / "m.h5"));
    expect_quiet_user_error(run(tool + " split " + (dir / "text.h5").string() + " --out-dir " + (dir / "s").string() +
                                " --fractions 0.5,x,0.5"),
                            "--fractions");
    expect_quiet_user_error(run(tool + " frobnicate"), "frobnicate");
    expect_quiet_user_error(run(tool + " verify"), "--manifest");
    expect_quiet_user_error(
        run(tool + " verify " + (dir / "text.h5").string() + " --manifest " + (dir / "SHA256SUMS").string()),
        "--manifest");
    expect_quiet_user_error(run(tool + " verify --manifest " + (dir / "SHA256SUMS").string()), "SHA256SUMS");
    std::ofstream(dir / "BADSUMS") << "not a digest  file.h5\n";
    expect_quiet_user_error(run(tool + " verify --manifest " + (dir / "BADSUMS").string()), "BADSUMS:1");
    expect_quiet_user_error(run(tool + " publish " + (dir / "nowhere").string()), "not a folder");
    fs::create_directories(dir / "empty");
    expect_quiet_user_error(run(tool + " publish " + (dir / "empty").string()), "no .h5");
    expect_quiet_user_error(run(tool + " publish " + dir.string()), "text.h5");
    EXPECT_FALSE(fs::exists(dir / "README.md"));
}

} // namespace
