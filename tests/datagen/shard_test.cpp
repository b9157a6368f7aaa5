// Shards of a generate-dataset run: K/N parsing, the round-robin partition of the run's
// pipelines, and the shard a launcher's environment gives (Open MPI, MPICH's PMI, Slurm arrays).
#include "datagen/shard.h"

#include "common/errors.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace schedforge::datagen {
namespace {

TEST(Shard, ParsesKOfN) {
    EXPECT_EQ(parse_shard("0/1"), (Shard{0, 1}));
    EXPECT_EQ(parse_shard("3/4"), (Shard{3, 4}));
    EXPECT_EQ(parse_shard("3/4").text(), "3/4");
    EXPECT_EQ(parse_shard("3/4").file_name(), "shard-3-of-4.h5");
    for (const char *bad :
         {"", "4/4", "1/0", "-1/2", "1", "1/", "/2", "a/2", "1/2/3", "1 /2", "99999999999999999999/2"}) {
        SCOPED_TRACE(bad);
        try {
            parse_shard(bad);
            ADD_FAILURE() << "accepted";
        } catch (const UserError &e) {
            EXPECT_NE(std::string(e.what()).find("K/N"), std::string::npos) << e.what();
        }
    }
}

TEST(Shard, EveryPipelineIsInExactlyOneShard) {
    for (int64_t n = 1; n <= 5; n++) {
        for (int64_t i = 0; i < 40; i++) {
            int holders = 0;
            for (int64_t k = 0; k < n; k++) holders += Shard{k, n}.holds(i) ? 1 : 0;
            EXPECT_EQ(holders, 1) << "pipeline " << i << " in " << n << " shards";
        }
    }
    // Round robin: shards differ in size by at most one pipeline.
    int64_t sizes[3] = {};
    for (int64_t i = 0; i < 10; i++) {
        for (int64_t k = 0; k < 3; k++) sizes[k] += Shard{k, 3}.holds(i) ? 1 : 0;
    }
    EXPECT_EQ(sizes[0], 4);
    EXPECT_EQ(sizes[1], 3);
    EXPECT_EQ(sizes[2], 3);
}

// An environment of the given variables only.
Environment env(std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](const char *name) -> const char * {
        const auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
    };
}

TEST(Shard, LaunchersSayWhichShardAProcessIs) {
    EXPECT_FALSE(shard_from_environment(env({})));
    const auto ompi = shard_from_environment(
        env({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}));
    ASSERT_TRUE(ompi);
    EXPECT_EQ(ompi->shard, (Shard{2, 4}));
    EXPECT_EQ(ompi->processes_on_machine, 2);
    EXPECT_EQ(ompi->launcher, "Open MPI");

    const auto pmi = shard_from_environment(env({{"PMI_RANK", "0"}, {"PMI_SIZE", "3"}}));
    ASSERT_TRUE(pmi);
    EXPECT_EQ(pmi->shard, (Shard{0, 3}));
    EXPECT_EQ(pmi->processes_on_machine, 1);

    // Slurm array ids count from the array's first (--array=1-4 runs tasks 1 to 4).
    const auto slurm = shard_from_environment(
        env({{"SLURM_ARRAY_TASK_ID", "4"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}));
    ASSERT_TRUE(slurm);
    EXPECT_EQ(slurm->shard, (Shard{3, 4}));
    EXPECT_EQ(slurm->launcher, "Slurm array");

    // A launcher of one process: the whole run.
    EXPECT_FALSE(shard_from_environment(env({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "1"}})));
    EXPECT_FALSE(shard_from_environment(
        env({{"SLURM_ARRAY_TASK_ID", "7"}, {"SLURM_ARRAY_TASK_MIN", "7"}, {"SLURM_ARRAY_TASK_COUNT", "1"}})));
}

TEST(Shard, InconsistentLaunchersAreUserErrors) {
    const std::map<std::string, std::string> cases[] = {
        {{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}},
        {{"OMPI_COMM_WORLD_RANK", "x"}, {"OMPI_COMM_WORLD_SIZE", "4"}},
        {{"PMI_RANK", "0"}, {"PMI_SIZE", "0"}},
        // --array=1,5,9: ids are not contiguous
        {{"SLURM_ARRAY_TASK_ID", "9"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_COUNT", "3"}},
    };
    for (const auto &vars : cases) {
        SCOPED_TRACE(vars.begin()->first + "=" + vars.begin()->second);
        EXPECT_THROW(shard_from_environment(env(vars)), UserError);
    }
}

} // namespace
} // namespace schedforge::datagen
