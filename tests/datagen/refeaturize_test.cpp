// The loop nests datasets store are the schedules they timed: each reads back, for its pipeline
// drawn again from its seed, as the stored schedule source with the stored features. And
// `dataset refeaturize` rewrites a file with this build's features from those nests, refusing
// (exit 2, nothing written) what it cannot read; `dataset retime` times those nests again, and a
// retime killed or stopped midway continues with --resume, keeping what it had written.
#include "datagen/stored.h"
#include "datasets/reader.h"
#include "datasets/verify.h"
#include "featurize/apply.h"
#include "featurize/function_dag.h"
#include "featurize/loop_nest_text.h"
#include "featurize/schedule_features.h"
#include "generator/build.h"
#include "generator/config.h"
#include "generator/synthesize.h"
#include "tests/support/commands.h"
#include "tests/support/growing_dataset.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <map>
#include <regex>
#include <set>

namespace {

using namespace schedforge::testing;
namespace ds = schedforge::datasets;
namespace sf = schedforge::featurize;
namespace gen = schedforge::gen;

// Small pipelines (two by default), three short searches each.
std::string make_dataset(const fs::path &dir, int pipelines = 2) {
    const std::string config = write_config(dir, "version: 1\n"
                                                 "generator: " +
                                                     kSmallConfig +
                                                     "\n"
                                                     "pipelines: " +
                                                     std::to_string(pipelines) +
                                                     "\n"
                                                     "schedules_per_pipeline: 3\n"
                                                     "seed: 9\n"
                                                     "beam_sample: {beam_size: 4, passes: 2}\n"
                                                     "timing: {min_samples: 3, max_samples: 5, max_seconds: 0.05}\n");
    const std::string out = (dir / "a.h5").string();
    const Result g = run(std::string(GENERATE_DATASET) + " --config " + config + " --out " + out);
    EXPECT_EQ(g.exit_code, 0) << g.err;
    return out;
}

// Schedule source with identifiers renamed in order of first use: Halide's unique names
// ("sum$2", RVar "r28") depend on what the process built before, the structure does not.
std::string alpha_renamed(const std::string &source) {
    static const std::regex identifier("[A-Za-z_][A-Za-z0-9_]*");
    std::map<std::string, std::string> names;
    std::string out;
    auto last = source.cbegin();
    for (std::sregex_iterator it(source.begin(), source.end(), identifier), end; it != end; ++it) {
        out.append(last, (*it)[0].first);
        auto [name, fresh] = names.emplace(it->str(), "id" + std::to_string(names.size()));
        out += name->second;
        last = (*it)[0].second;
    }
    return out.append(last, source.cend());
}

std::string dataset(const std::string &args) { return std::string(DATASET) + " " + args; }

// A stored schedule is the one its nest describes: the pipeline drawn again from its seed is
// the stored one, and the nest gives the stored features and (`compare_source`) source.
void expect_nest_gives_the_record(const ds::DatasetReader &r, uint64_t row, const gen::GeneratorConfig &cfg,
                                  bool compare_source = true) {
    const ds::ScheduleRecord s = r.schedule(row);
    const ds::PipelineRecord p = r.pipeline(s.pipeline_row);
    const gen::PipelineSpec spec = gen::synthesize_pipeline(cfg, p.seed);
    ASSERT_EQ(spec.to_text(), p.spec) << "schedule row " << row;
    gen::BuiltPipeline built = gen::build_pipeline(spec);
    const sf::FunctionDAG dag = sf::FunctionDAG::build(built.pipeline);
    ASSERT_FALSE(s.nest.empty()) << "schedule row " << row;
    const sf::LoopNest nest = sf::parse_nest_text(dag, s.nest);
    if (compare_source) {
        EXPECT_EQ(alpha_renamed(sf::schedule_source(dag, nest)), alpha_renamed(s.source)) << "schedule row " << row;
    }
    std::vector<float> features;
    // The caches of the machine that made the file (generate-dataset searches with its own).
    const sf::CacheSizes caches = schedforge::datagen::recorded_cache_sizes(r.info().hardware);
    for (const sf::StageFeatures &f :
         sf::compute_schedule_features(dag, nest, Halide::Target(r.info().target), caches)) {
        for (double v : f.features.values()) features.push_back(float(v));
    }
    EXPECT_EQ(features, s.features) << "schedule row " << row;
}

TEST(StoredLoopNests, AreTheScheduleThatRan) {
    const fs::path dir = scratch("stored_nests");
    const auto r = ds::DatasetReader::open(make_dataset(dir));
    ASSERT_EQ(r->num_schedules(), 6u);
    const gen::GeneratorConfig cfg = gen::load_generator_config(kSmallConfig);
    for (uint64_t row = 0; row < r->num_schedules(); row++) expect_nest_gives_the_record(*r, row, cfg);
}

// The held-out corpus in corpora/ (README there) is read by this build, and its first pipelines
// and features are this build's: a change to the generator or the features shows here, and then
// the corpus is refeaturized (`dataset refeaturize`) or, for the generator, made again.
TEST(CommittedCorpus, IsReadAndItsFeaturesAreThisBuilds) {
    const std::string path = std::string(SCHEDFORGE_SOURCE_DIR) + "/corpora/amd-epyc-avx512-2core/heldout-4000.h5";
    EXPECT_TRUE(ds::verify_dataset(path).ok());
    const auto r = ds::DatasetReader::open(path);
    EXPECT_EQ(r->info().schedule_feature_version, sf::ScheduleFeatures::version());
    EXPECT_EQ(r->info().schedule_feature_names, sf::ScheduleFeatures::names());
    ASSERT_EQ(r->num_pipelines(), 60u);
    ASSERT_EQ(r->num_schedules(), 960u);
    const gen::GeneratorConfig cfg =
        gen::load_generator_config(std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/generator/default.yaml");
    // Its sources were printed by a build that declared RVars in another order.
    for (uint64_t row = 0; row < 48; row++) expect_nest_gives_the_record(*r, row, cfg, false); // pipelines 0-2
}

// Every committed corpus, of every machine kind, holds this build's features: a change of the
// schedule features fails here until each file is refeaturized (corpora/README.md).
TEST(CommittedCorpus, EveryFileHasThisBuildsFeatures) {
    int files = 0;
    for (const auto &entry : fs::recursive_directory_iterator(std::string(SCHEDFORGE_SOURCE_DIR) + "/corpora")) {
        if (entry.path().extension() != ".h5") continue;
        files++;
        const std::string path = entry.path().string();
        EXPECT_TRUE(ds::verify_dataset(path).ok()) << path;
        const auto r = ds::DatasetReader::open(path);
        EXPECT_EQ(r->info().schedule_feature_version, sf::ScheduleFeatures::version()) << path;
        EXPECT_EQ(r->info().schedule_feature_names, sf::ScheduleFeatures::names()) << path;
    }
    EXPECT_GE(files, 14); // corpora/README.md lists them
}

TEST(Refeaturize, RewritesTheSameRecordsAndRefusesWhatItCannotRead) {
    const fs::path dir = scratch("refeaturize");
    const std::string in = make_dataset(dir), out = (dir / "b.h5").string();
    const Result ok = run(dataset("refeaturize " + in + " --out " + out));
    ASSERT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_NE(ok.out.find("6 refeaturized"), std::string::npos) << ok.out;
    EXPECT_TRUE(ds::verify_dataset(out).ok());
    {
        const auto a = ds::DatasetReader::open(in), b = ds::DatasetReader::open(out);
        ASSERT_EQ(b->num_schedules(), a->num_schedules());
        for (uint64_t row = 0; row < a->num_schedules(); row++) {
            const ds::ScheduleRecord x = a->schedule(row), y = b->schedule(row);
            EXPECT_EQ(x.features, y.features); // the same build: the same features
            EXPECT_EQ(x.nest, y.nest);
            EXPECT_EQ(x.source, y.source);
            EXPECT_EQ(x.timings, y.timings);
            EXPECT_EQ(x.pipeline_row, y.pipeline_row);
        }
    } // readers closed: h5py opens the file below
    // Refeaturized again, the file names only the latest recompute after the producer that measured.
    const std::string again = (dir / "again.h5").string();
    ASSERT_EQ(run(dataset("refeaturize " + out + " --out " + again)).exit_code, 0);
    {
        const std::string measured = ds::DatasetReader::open(in)->info().producer;
        const std::string producer = ds::DatasetReader::open(again)->info().producer;
        EXPECT_EQ(producer.rfind(measured + " (features recomputed by ", 0), 0u) << producer;
        EXPECT_EQ(producer.find("recomputed"), producer.rfind("recomputed")) << producer;
    }

    expect_user_error(run(dataset("refeaturize " + in + " --out " + out)), "already exists");
    expect_user_error(run(dataset("refeaturize " + (dir / "none.h5").string() + " --out " + (dir / "c.h5").string())),
                      "none.h5");
    // A nest of a format version this build does not read: refused, and nothing is left behind.
    const Result edit = run("/usr/bin/python3 -c \"import h5py; f = h5py.File('" + in +
                            "', 'r+'); t = f['schedule_text']; b = t[:].tobytes(); "
                            "i = b.index(b'schedforge-loop-nest 1'); t[i + 21] = ord('7'); f.close()\"");
    ASSERT_EQ(edit.exit_code, 0) << edit.err;
    const std::string damaged_out = (dir / "d.h5").string();
    expect_user_error(run(dataset("refeaturize " + in + " --out " + damaged_out)), "version 7");
    EXPECT_FALSE(fs::exists(damaged_out));
    EXPECT_FALSE(fs::exists(damaged_out + ".partial"));
}

// The same schedules timed again: every record keeps its schedule and pipeline and gets this
// run's labels, checked outputs and timing samples; the file names this machine and protocol.
TEST(Retime, TimesTheStoredSchedulesAgain) {
    const fs::path dir = scratch("retime");
    const std::string in = make_dataset(dir), out = (dir / "b.h5").string();
    const std::string config =
        write_config(dir, "version: 1\ntiming: {min_samples: 2, max_samples: 4, max_seconds: 0.02, "
                          "min_sampling_seconds: 0, rounds: 2}\n");
    const Result ok = run(dataset("retime " + in + " --out " + out + " --config " + config + " --threads 1"));
    ASSERT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_NE(ok.out.find("6 timed again, 6 ok"), std::string::npos) << ok.out;
    EXPECT_TRUE(ds::verify_dataset(out).ok());
    {
        const auto a = ds::DatasetReader::open(in), b = ds::DatasetReader::open(out);
        EXPECT_NE(b->info().timing_protocol.find("max_samples = 4"), std::string::npos) << b->info().timing_protocol;
        EXPECT_NE(b->info().timing_protocol.find("rounds = 2\nlabel = median of the rounds' minima"), std::string::npos)
            << b->info().timing_protocol;
        EXPECT_NE(b->info().producer.find("timed again"), std::string::npos) << b->info().producer;
        EXPECT_EQ(b->info().config, a->info().config); // what draws the pipelines again
        ASSERT_EQ(b->num_pipelines(), a->num_pipelines());
        for (uint64_t row = 0; row < a->num_pipelines(); row++) {
            EXPECT_EQ(b->pipeline(row).spec, a->pipeline(row).spec);
            EXPECT_GT(b->pipeline(row).reference_runtime, 0);
        }
        ASSERT_EQ(b->num_schedules(), a->num_schedules());
        for (uint64_t row = 0; row < a->num_schedules(); row++) {
            const ds::ScheduleRecord x = a->schedule(row), y = b->schedule(row);
            EXPECT_EQ(y.status, ds::Status::Ok) << y.message;
            EXPECT_EQ(x.nest, y.nest);
            EXPECT_EQ(x.source, y.source);
            EXPECT_EQ(x.sample, y.sample);
            EXPECT_EQ(x.search_seconds, y.search_seconds);
            EXPECT_EQ(x.features, y.features); // this build, this machine's target: as generated here
            EXPECT_EQ(y.threads, 1);
            EXPECT_GE(y.timings.size(), 2u); // at least one sample a round, at most two
            EXPECT_LE(y.timings.size(), 4u);
            EXPECT_GE(y.runtime_min, *std::min_element(y.timings.begin(), y.timings.end())); // the rounds' median
            EXPECT_LE(y.runtime_min, *std::max_element(y.timings.begin(), y.timings.end()));
        }
    }
    expect_user_error(run(dataset("retime " + in + " --out " + out)), "already exists");
    expect_user_error(run(dataset("retime " + in + " --out " + (dir / "c.h5").string() + " --config " +
                                  (dir / "none.yaml").string())),
                      "none.yaml");
    const std::string bad = write_config(dir, "version: 1\ntiming: {max_samples: 0}\n");
    expect_user_error(run(dataset("retime " + in + " --out " + (dir / "c.h5").string() + " --config " + bad)),
                      "max_samples");
    EXPECT_FALSE(fs::exists(dir / "c.h5"));
}

// A retime killed after its first pipeline was written, then resumed: the written records are
// kept as they were (not timed again), the rest are timed, and the file is whole; a partial file
// is never overwritten by a fresh run, nor continued under another protocol.
TEST(Retime, KilledAndResumedKeepsWhatItWrote) {
    const fs::path dir = scratch("retime_resume");
    const std::string in = make_dataset(dir), out = (dir / "b.h5").string(), partial = out + ".partial";
    // Long enough a timing (a pipeline takes seconds) that the kill lands between pipelines.
    const std::string config = write_config(dir / "slow", "version: 1\ntiming: {min_samples: 5, max_samples: 20, "
                                                          "max_seconds: 0.2, min_sampling_seconds: 0.1, rounds: 2}\n");
    const pid_t pid = spawn(DATASET, {"retime", in, "--out", out, "--config", config, "--threads", "1"});
    wait_for_schedules(partial, 3); // the first pipeline's three schedules
    ::kill(pid, SIGKILL);
    EXPECT_EQ(wait_exit(pid), 128 + SIGKILL);
    ASSERT_FALSE(fs::exists(out)) << "the run finished before it was killed";
    std::map<std::pair<uint64_t, uint32_t>, std::vector<double>> written; // (pipeline id, sample) -> timings
    {
        const auto r = ds::DatasetReader::open(partial);
        for (uint64_t i = 0; i < r->num_schedules(); i++) {
            const ds::ScheduleRecord s = r->schedule(i);
            written[{r->pipeline(s.pipeline_row).id, s.sample}] = s.timings;
        }
    }
    ASSERT_GE(written.size(), 3u);
    ASSERT_LT(written.size(), 6u) << "the run finished before it was killed";

    expect_user_error(run(dataset("retime " + in + " --out " + out + " --config " + config + " --threads 1")),
                      "--resume");
    const std::string other = write_config(dir / "other", "version: 1\ntiming: {min_samples: 5, max_samples: 20, "
                                                          "max_seconds: 0.3, min_sampling_seconds: 0.1, rounds: 2}\n");
    expect_user_error(run(dataset("retime " + in + " --out " + out + " --config " + other + " --threads 1 --resume")),
                      "another timing protocol");

    const Result resumed =
        run(dataset("retime " + in + " --out " + out + " --config " + config + " --threads 1 --resume"));
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_NE(resumed.out.find(std::to_string(written.size()) + " timed by the run resumed"), std::string::npos)
        << resumed.out;
    EXPECT_FALSE(fs::exists(partial));
    EXPECT_TRUE(ds::verify_dataset(out).ok());
    const auto a = ds::DatasetReader::open(in), b = ds::DatasetReader::open(out);
    EXPECT_EQ(b->num_pipelines(), a->num_pipelines());
    ASSERT_EQ(b->num_schedules(), a->num_schedules());
    std::set<std::pair<uint64_t, uint32_t>> seen;
    size_t kept = 0;
    for (uint64_t i = 0; i < b->num_schedules(); i++) {
        const ds::ScheduleRecord s = b->schedule(i);
        const std::pair<uint64_t, uint32_t> key{b->pipeline(s.pipeline_row).id, s.sample};
        EXPECT_TRUE(seen.insert(key).second) << "sample " << s.sample << " twice";
        EXPECT_EQ(s.status, ds::Status::Ok) << s.message;
        const auto w = written.find(key);
        if (w == written.end()) continue;
        EXPECT_EQ(s.timings, w->second) << "sample " << s.sample << " was timed again";
        kept++;
    }
    EXPECT_EQ(kept, written.size());
}

// Ctrl-C stops a retime after the pipelines in flight: exit 130, no output under the final name,
// a valid partial file without the pipelines never started; --resume completes it.
TEST(Retime, CtrlCStopsAfterThePipelinesInFlight) {
    const fs::path dir = scratch("retime_interrupt");
    const std::string in = make_dataset(dir, 4), out = (dir / "b.h5").string(), partial = out + ".partial";
    const std::string config = write_config(dir / "slow", "version: 1\ntiming: {min_samples: 5, max_samples: 20, "
                                                          "max_seconds: 0.2, min_sampling_seconds: 0.1, rounds: 2}\n");
    const pid_t pid = spawn(DATASET, {"retime", in, "--out", out, "--config", config, "--threads", "1"});
    wait_for_schedules(partial, 3); // the first pipeline; the last two have not started
    ::kill(pid, SIGINT);
    EXPECT_EQ(wait_exit(pid), 130);
    EXPECT_FALSE(fs::exists(out));
    ASSERT_TRUE(fs::exists(partial));
    EXPECT_TRUE(ds::verify_dataset(partial).ok());
    const uint64_t saved = ds::DatasetReader::open(partial)->num_schedules();
    EXPECT_GE(saved, 3u);
    EXPECT_LE(saved, 6u);

    const Result resumed =
        run(dataset("retime " + in + " --out " + out + " --config " + config + " --threads 1 --resume"));
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_NE(resumed.out.find("12 schedules"), std::string::npos) << resumed.out;
    EXPECT_EQ(ds::DatasetReader::open(out)->num_schedules(), 12u);
}

} // namespace
