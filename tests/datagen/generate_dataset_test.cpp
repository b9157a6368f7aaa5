// generate-dataset as a user runs it: a
// run killed with SIGKILL and resumed holds the same samples as an uninterrupted one, Ctrl-C
// stops with every finished sample saved, and Python's h5py reads what the C++ reader reads.
#include "datasets/reader.h"
#include "datasets/verify.h"
#include "tests/support/commands.h"
#include "tests/support/growing_dataset.h"

#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <map>
#include <sstream>

namespace {

using namespace schedforge::testing;
namespace ds = schedforge::datasets;

// Tiny pipelines, short searches and timings: a sample takes about a second.
std::string tiny_config(const fs::path &dir, const std::string &extra = "") {
    return write_config(dir, "version: 1\n"
                             "generator: " +
                                 kSmallConfig +
                                 "\n"
                                 "pipelines: 3\n"
                                 "schedules_per_pipeline: 4\n"
                                 "seed: 5\n"
                                 "beam_sample: {beam_size: 4, passes: 2}\n"
                                 "timing: {min_samples: 3, max_samples: 10, max_seconds: 0.05}\n" +
                                 extra);
}

// The content of a sample that does not depend on timing: keyed by (pipeline id, sample).
struct Sample {
    std::string status, source;
    std::vector<float> features;
    double predicted_cost;
    uint64_t seed;
    bool operator==(const Sample &o) const {
        return status == o.status && source == o.source && features == o.features &&
               predicted_cost == o.predicted_cost && seed == o.seed;
    }
};
using Content = std::map<std::pair<uint64_t, uint32_t>, Sample>;

Content content(const std::string &path) {
    const auto r = ds::DatasetReader::open(path);
    Content c;
    for (uint64_t i = 0; i < r->num_schedules(); i++) {
        const ds::ScheduleRecord s = r->schedule(i);
        const ds::PipelineRecord p = r->pipeline(s.pipeline_row);
        const bool fresh = c.emplace(std::pair{p.id, s.sample},
                                     Sample{ds::status_name(s.status), s.source, s.features, s.predicted_cost, s.seed})
                               .second;
        EXPECT_TRUE(fresh) << "duplicate sample " << s.sample << " of pipeline " << p.id;
    }
    return c;
}

// `got` holds exactly `want`'s samples.
void expect_same_samples(const Content &want, const Content &got) {
    EXPECT_EQ(got.size(), want.size());
    for (const auto &[key, sample] : want) {
        const auto it = got.find(key);
        ASSERT_NE(it, got.end()) << "sample " << key.second << " of pipeline " << key.first << " missing";
        EXPECT_TRUE(it->second == sample) << "sample " << key.second << " of pipeline " << key.first << " differs";
    }
}

// generate-dataset started without a shell.
pid_t spawn_generate(const std::vector<std::string> &args) { return spawn(GENERATE_DATASET, args); }

std::string generate(const std::string &args) { return std::string(GENERATE_DATASET) + " " + args; }

TEST(GenerateDataset, KilledAndResumedEqualsUninterrupted) {
    const fs::path dir = scratch("datagen_resume");
    const std::string config = tiny_config(dir);
    const std::string whole = (dir / "whole.h5").string(), killed = (dir / "killed.h5").string();
    const Result a = run(generate("--config " + config + " --out " + whole));
    ASSERT_EQ(a.exit_code, 0) << a.err;

    const pid_t pid = spawn_generate({"--config", config, "--out", killed});
    wait_for_schedules(killed, 3);
    ::kill(pid, SIGKILL);
    EXPECT_EQ(wait_exit(pid), 128 + SIGKILL);
    const uint64_t before = ds::DatasetReader::open(killed)->num_schedules();
    EXPECT_LT(before, 12u) << "the run finished before it was killed";

    const Result b = run(generate("--config " + config + " --out " + killed + " --resume"));
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_NE(b.out.find("were already there"), std::string::npos) << b.out;
    const Content want = content(whole);
    EXPECT_EQ(want.size(), 12u);
    expect_same_samples(want, content(killed));
    const ds::VerifyReport v = ds::verify_dataset(killed);
    EXPECT_TRUE(v.ok()) << v.problems.front();

    // Resuming a complete file runs nothing; resuming with another config is refused.
    const Result again = run(generate("--config " + config + " --out " + killed + " --resume"));
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_NE(again.out.find("wrote 0 samples"), std::string::npos) << again.out;
    const Result other = run(generate("--config " + config + " --out " + killed + " --resume --seed 6"));
    EXPECT_EQ(other.exit_code, 2);
    EXPECT_NE(other.err.find("different config"), std::string::npos) << other.err;
}

// The shards of a run (--shard K/N, or the ranks of mpirun, whose variables are set here as
// mpirun sets them) hold together exactly the unsharded run's samples, also when one is killed
// and resumed, and merge into one file.
TEST(GenerateDataset, ShardsTogetherHoldTheWholeRun) {
    const fs::path dir = scratch("datagen_shards");
    const std::string config = tiny_config(dir);
    const std::string whole = (dir / "whole.h5").string(), shards = (dir / "shards").string() + "/";
    const Result a = run(generate("--config " + config + " --out " + whole));
    ASSERT_EQ(a.exit_code, 0) << a.err;

    // Shard 0 is killed mid-run and resumed: nothing lost, nothing twice (content() counts).
    const std::string f0 = shards + "shard-0-of-2.h5", f1 = shards + "shard-1-of-2.h5";
    const pid_t killed = spawn_generate({"--config", config, "--out", shards, "--shard", "0/2"});
    wait_for_schedules(f0, 2);
    ::kill(killed, SIGKILL);
    EXPECT_EQ(wait_exit(killed), 128 + SIGKILL);
    EXPECT_LT(ds::DatasetReader::open(f0)->num_schedules(), 8u) << "the shard finished before it was killed";
    const Result s0 = run(generate("--config " + config + " --out " + shards + " --shard 0/2 --resume"));
    ASSERT_EQ(s0.exit_code, 0) << s0.err;
    EXPECT_NE(s0.out.find("shard 0/2 of the run"), std::string::npos) << s0.out;
    EXPECT_NE(s0.out.find("were already there"), std::string::npos) << s0.out;
    const Result s1 = run("OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_SIZE=2 " +
                          generate("--config " + config + " --out " + shards));
    ASSERT_EQ(s1.exit_code, 0) << s1.err;

    // Round robin: pipelines 0 and 2 in shard 0, pipeline 1 in shard 1; no sample in both.
    const Content c0 = content(f0), c1 = content(f1);
    EXPECT_EQ(ds::DatasetReader::open(f0)->num_pipelines(), 2u);
    EXPECT_EQ(ds::DatasetReader::open(f1)->num_pipelines(), 1u);
    Content both = c0;
    for (const auto &[key, sample] : c1) EXPECT_TRUE(both.emplace(key, sample).second) << "in both shards";
    expect_same_samples(content(whole), both);

    // Each file says which shard it is, and how the rank shared its machine.
    const ds::FileInfo i1 = ds::DatasetReader::open(f1)->info();
    EXPECT_NE(i1.config.find("shard: 1/2"), std::string::npos) << i1.config;
    EXPECT_NE(i1.timing_protocol.find("processes_on_machine = 2"), std::string::npos) << i1.timing_protocol;
    EXPECT_EQ(i1.timing_protocol.find("machine_lock = none"), std::string::npos) << i1.timing_protocol;
    // Each timing round ran in a process of its own (the default).
    EXPECT_NE(i1.timing_protocol.find("round_processes = fresh\n"), std::string::npos) << i1.timing_protocol;
    // Timed code allocates with glibc's malloc, the search and compiles with the program's.
    EXPECT_NE(i1.timing_protocol.find("timed_malloc = libc.so.6\n"), std::string::npos) << i1.timing_protocol;
#ifdef SCHEDFORGE_FAST_MALLOC
    EXPECT_NE(i1.timing_protocol.find("process_malloc = libjemalloc.so.2\n"), std::string::npos) << i1.timing_protocol;
#endif
    EXPECT_EQ(ds::DatasetReader::open(whole)->info().config.find("shard:"), std::string::npos);

    // The same under a real mpirun (Open MPI, tools/setup installs it): two ranks on this machine.
    const std::string mpi = (dir / "mpi").string() + "/";
    const Result r = run("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 --oversubscribe " +
                         generate("--config " + config + " --out " + mpi));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    Content ranks = content(mpi + "shard-0-of-2.h5");
    for (const auto &[key, sample] : content(mpi + "shard-1-of-2.h5")) ranks.emplace(key, sample);
    expect_same_samples(content(whole), ranks);
    EXPECT_NE(ds::DatasetReader::open(mpi + "shard-0-of-2.h5")->info().timing_protocol.find("processes_on_machine = 2"),
              std::string::npos);

    const std::string merged = (dir / "merged.h5").string();
    const Result m = run(std::string(DATASET) + " merge --out " + merged + " " + f0 + " " + f1);
    ASSERT_EQ(m.exit_code, 0) << m.err;
    expect_same_samples(content(whole), content(merged));

    // The ranks' files as one virtual dataset beside them: the whole run, verified, and published
    // with them (the shards compacted, the virtual merge made again over them).
    const std::string all = mpi + "all.h5";
    const Result v = run(std::string(DATASET) + " merge --virtual " + all + " " + mpi + "shard-0-of-2.h5 " + mpi +
                         "shard-1-of-2.h5");
    ASSERT_EQ(v.exit_code, 0) << v.err;
    EXPECT_NE(v.out.find(all + " (virtual)"), std::string::npos) << v.out;
    expect_same_samples(content(whole), content(all));
    const Result info = run(std::string(DATASET) + " info " + all);
    EXPECT_NE(info.out.find("virtual merge of 2 shards: shard-0-of-2.h5 shard-1-of-2.h5"), std::string::npos)
        << info.out;
    ASSERT_EQ(run(std::string(DATASET) + " publish " + mpi).exit_code, 0);
    EXPECT_NE(read_file(mpi + "README.md").find("`all.h5` is a virtual merge"), std::string::npos);
    const Result published = run(std::string(DATASET) + " verify --manifest " + mpi + "SHA256SUMS");
    EXPECT_EQ(published.exit_code, 0) << published.out << published.err;
    expect_same_samples(content(whole), content(all));
    EXPECT_EQ(run(std::string(DATASET) + " merge --virtual " + all + " " + f0).exit_code, 2); // exists

    // A shard resumes as itself only.
    const Result other = run(generate("--config " + config + " --out " + f1 + " --shard 0/2 --resume"));
    EXPECT_EQ(other.exit_code, 2);
    EXPECT_NE(other.err.find("different config"), std::string::npos) << other.err;
    const Result same = run(generate("--config " + config + " --out " + f1 + " --shard 1/2 --resume"));
    EXPECT_EQ(same.exit_code, 0) << same.err;
    EXPECT_NE(same.out.find("wrote 0 samples"), std::string::npos) << same.out;

    // The shards published as they are: a card, and a manifest that checks the folder.
    const Result pub = run(std::string(DATASET) + " publish " + shards);
    ASSERT_EQ(pub.exit_code, 0) << pub.err;
    EXPECT_NE(pub.out.find("published " + shards), std::string::npos) << pub.out;
    EXPECT_NE(read_file(shards + "README.md").find("`shard-1-of-2.h5`"), std::string::npos);
    const Result check = run(std::string(DATASET) + " verify --manifest " + shards + "SHA256SUMS");
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
    expect_same_samples(content(whole), content(merged));
}

// The Slurm array script, run as Slurm runs a task (its variables set here): the task writes its
// shard, and the same task requeued continues its file.
TEST(GenerateDataset, SlurmArrayTasksWriteAndResumeTheirShard) {
    const fs::path dir = scratch("datagen_slurm");
    const std::string config = tiny_config(dir), out = (dir / "run").string() + "/";
    const std::string task = "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_COUNT=3 "
                             "SCHEDFORGE_GENERATE_DATASET=" GENERATE_DATASET " " SCHEDFORGE_SOURCE_DIR
                             "/tools/slurm-generate-dataset " +
                             config + " " + out;
    const Result first = run(task);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_NE(first.out.find("shard 1/3 of the run"), std::string::npos) << first.out;
    {
        const auto shard = ds::DatasetReader::open(out + "shard-1-of-3.h5"); // closed again: a reader blocks writers
        EXPECT_EQ(shard->num_pipelines(), 1u);
        EXPECT_EQ(shard->num_schedules(), 4u);
    }

    const Result requeued = run(task);
    ASSERT_EQ(requeued.exit_code, 0) << requeued.err;
    EXPECT_NE(requeued.out.find("(resumed)"), std::string::npos) << requeued.out;
    EXPECT_NE(requeued.out.find("wrote 0 samples"), std::string::npos) << requeued.out;
    EXPECT_EQ(run(SCHEDFORGE_SOURCE_DIR "/tools/slurm-generate-dataset " + config + " " + out).exit_code, 2);
}

TEST(GenerateDataset, CtrlCStopsWithEveryFinishedSampleSaved) {
    const fs::path dir = scratch("datagen_interrupt");
    const std::string config = tiny_config(dir);
    const std::string out = (dir / "i.h5").string();
    const pid_t pid = spawn_generate({"--config", config, "--out", out});
    wait_for_schedules(out, 2);
    ::kill(pid, SIGINT);
    EXPECT_EQ(wait_exit(pid), 130);
    const uint64_t saved = ds::DatasetReader::open(out)->num_schedules(); // closed again: a reader blocks writers
    EXPECT_GE(saved, 2u);
    EXPECT_LT(saved, 12u);
    const ds::VerifyReport v = ds::verify_dataset(out);
    EXPECT_TRUE(v.ok()) << v.problems.front();
    const Result rest = run(generate("--config " + config + " --out " + out + " --resume"));
    ASSERT_EQ(rest.exit_code, 0) << rest.err;
    EXPECT_EQ(ds::DatasetReader::open(out)->num_schedules(), 12u);
}

// Python's h5py (Debian's interpreter) reads the attributes, shapes and one schedule as the C++
// reader does.
TEST(GenerateDataset, PythonReadsWhatCppReads) {
    const fs::path dir = scratch("datagen_python");
    const std::string out = (dir / "p.h5").string();
    const Result g = run(generate("--config " + tiny_config(dir) + " --out " + out + " --pipelines 2"));
    ASSERT_EQ(g.exit_code, 0) << g.err;
    const uint64_t row = 5;
    const Result py = run("/usr/bin/python3 " + std::string(SCHEDFORGE_SOURCE_DIR) +
                          "/tests/datasets/read_dataset.py " + out + " " + std::to_string(row));
    ASSERT_EQ(py.exit_code, 0) << py.err;
    std::map<std::string, std::string> said;
    std::istringstream lines(py.out);
    for (std::string line; std::getline(lines, line);) {
        const size_t space = line.find(' ');
        said[line.substr(0, space)] = space == std::string::npos ? "" : line.substr(space + 1);
    }
    const auto r = ds::DatasetReader::open(out);
    const ds::ScheduleRecord s = r->schedule(row);
    const ds::PipelineRecord p = r->pipeline(s.pipeline_row);
    const size_t scols = r->info().schedule_feature_names.size();
    EXPECT_EQ(said["schema_version"], std::to_string(ds::kSchemaVersion));
    EXPECT_EQ(said["producer"], r->info().producer);
    EXPECT_EQ(said["schedule_feature_names"], std::to_string(scols));
    EXPECT_EQ(said["pipelines"], std::to_string(r->num_pipelines()));
    EXPECT_EQ(said["schedules"], std::to_string(r->num_schedules()));
    EXPECT_EQ(said["status"], ds::status_name(s.status));
    EXPECT_EQ(said["sample"], std::to_string(s.sample));
    std::string stages = std::to_string(p.stages.size());
    for (const std::string &name : p.stages) stages += " " + name;
    EXPECT_EQ(said["stages"], stages);
    double sum = 0;
    for (float f : s.features) sum += double(f);
    std::istringstream features(said["features"]);
    size_t rows = 0, columns = 0;
    double python_sum = -1;
    features >> rows >> columns >> python_sum;
    EXPECT_EQ(rows, p.stages.size());
    EXPECT_EQ(columns, scols);
    EXPECT_EQ(python_sum, sum); // the same float32 values, summed in the same order in double
    EXPECT_DOUBLE_EQ(std::stod(said["runtime_min"]), s.runtime_min);
    EXPECT_EQ(said["timings"].substr(0, said["timings"].find(' ')), std::to_string(s.timings.size()));
    EXPECT_EQ(said["source_bytes"], std::to_string(s.source.size()));
    EXPECT_EQ(said["nest_bytes"], std::to_string(s.nest.size()));
    EXPECT_GT(s.nest.size(), 0u);
}

} // namespace
