#include "datagen/shard.h"

#include "common/errors.h"

#include <algorithm>
#include <cstdlib>

namespace schedforge::datagen {

namespace {

// A non-negative integer, the whole of `text`; nullopt otherwise.
std::optional<int64_t> whole_number(const std::string &text) {
    if (text.empty() || text.size() > 18) return std::nullopt;
    int64_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + (c - '0');
    }
    return v;
}

} // namespace

std::string Shard::text() const { return std::to_string(index) + "/" + std::to_string(count); }

std::string Shard::file_name() const {
    return "shard-" + std::to_string(index) + "-of-" + std::to_string(count) + ".h5";
}

Shard parse_shard(const std::string &text, const std::string &what) {
    const size_t slash = text.find('/');
    const std::optional<int64_t> k = whole_number(text.substr(0, slash)),
                                 n = slash == std::string::npos ? std::nullopt : whole_number(text.substr(slash + 1));
    if (!k || !n || *n < 1 || *k >= *n)
        throw UserError(what + " must be K/N with 0 <= K < N (shard K of N), got '" + text + "'");
    return {*k, *n};
}

std::optional<LaunchedShard> shard_from_environment(const Environment &get) {
    const Environment env = get ? get : Environment([](const char *name) { return std::getenv(name); });
    auto number = [&](const char *name) -> std::optional<int64_t> {
        const char *v = env(name);
        if (!v) return std::nullopt;
        const std::optional<int64_t> n = whole_number(v);
        if (!n) throw UserError(std::string("the launcher's ") + name + " is '" + v + "', not a whole number");
        return n;
    };
    // An MPI launcher: rank and size, and how many ranks this machine runs.
    struct Mpi {
        const char *rank, *size, *local_size, *name;
    };
    for (const Mpi &m : {Mpi{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "Open MPI"},
                         Mpi{"PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS", "MPI (PMI)"}}) {
        const std::optional<int64_t> rank = number(m.rank), size = number(m.size);
        if (!rank || !size) continue;
        if (*size < 1 || *rank >= *size) {
            throw UserError(std::string(m.name) + " gave rank " + std::to_string(*rank) + " of " +
                            std::to_string(*size) + " processes");
        }
        if (*size == 1) return std::nullopt;
        return LaunchedShard{{*rank, *size}, std::max<int64_t>(1, number(m.local_size).value_or(1)), m.name};
    }
    // A Slurm array job: one task per shard, its ids contiguous from the array's first.
    const std::optional<int64_t> id = number("SLURM_ARRAY_TASK_ID"), count = number("SLURM_ARRAY_TASK_COUNT");
    if (id && count) {
        const int64_t first = number("SLURM_ARRAY_TASK_MIN").value_or(0);
        if (*count < 1 || *id < first || *id - first >= *count) {
            throw UserError("Slurm array task " + std::to_string(*id) + " is not among " + std::to_string(*count) +
                            " tasks numbered from " + std::to_string(first) +
                            " (shards need contiguous array ids, e.g. --array=0-" + std::to_string(*count - 1) + ")");
        }
        if (*count == 1) return std::nullopt;
        return LaunchedShard{{*id - first, *count}, 1, "Slurm array"};
    }
    return std::nullopt;
}

} // namespace schedforge::datagen
