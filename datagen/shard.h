// Sharding one generate-dataset run across processes or machines (MPI ranks, Slurm array tasks).
//
// Shard K of N holds the run's pipelines i with i % N == K. A pipeline's seed depends only on the
// run seed and its index, and its samples' seeds only on the pipeline's, so the N shards
// together plan exactly the unsharded run's pipelines and schedules, and `dataset merge` of their
// files holds what one run would. Round robin rather than blocks: a run later extended with
// --pipelines grows every shard alike.
//
// Launchers say which shard a process is through the environment: Open MPI's mpirun
// (OMPI_COMM_WORLD_RANK / _SIZE), MPICH's and Intel MPI's Hydra (PMI_RANK / PMI_SIZE), and Slurm
// array jobs (SLURM_ARRAY_TASK_ID from SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT). Reading it
// needs no MPI library: ranks never talk to each other.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace schedforge::datagen {

struct Shard {
    int64_t index = 0; // K, from 0
    int64_t count = 1; // N; 1: the whole run

    bool holds(int64_t pipeline) const { return pipeline % count == index; }
    bool whole() const { return count == 1; }
    std::string text() const;      // "K/N"
    std::string file_name() const; // "shard-K-of-N.h5"
    bool operator==(const Shard &o) const { return index == o.index && count == o.count; }
};

// "K/N" with 0 <= K < N; UserError naming `what` otherwise.
Shard parse_shard(const std::string &text, const std::string &what = "--shard");

// The shard a launcher gave this process, and how many of the launcher's processes share this
// machine (1 where it does not say), with the launcher's name for messages.
struct LaunchedShard {
    Shard shard;
    int64_t processes_on_machine = 1;
    std::string launcher; // "Open MPI", "MPI (PMI)", "Slurm array"
};

// Reads the launcher's variables through `get` (std::getenv by default). nullopt when no
// launcher says anything, or a launcher of one process; UserError when its variables are
// inconsistent (a rank beyond the size, an array whose task ids are not contiguous).
using Environment = std::function<const char *(const char *)>;
std::optional<LaunchedShard> shard_from_environment(const Environment &get = {});

} // namespace schedforge::datagen
