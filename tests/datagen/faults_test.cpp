// The dataset engine with the runner and the sink passed in: samples made to fail on purpose
// after their search (a crash, a hang, an out-of-memory, a compile error, a wrong output;
// tests/support/faults.h, which wraps the benchmark runner) are recorded with their status and
// reason while the run goes on, and the file they are in verifies; records go in order to any
// sink, and what a sink already holds is not run again.
#include "datagen/config.h"
#include "datagen/generate.h"
#include "datasets/reader.h"
#include "datasets/verify.h"
#include "tests/support/faults.h"
#include "tests/support/process.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace schedforge::testing;
namespace ds = schedforge::datasets;
namespace sh = schedforge::datagen;

// Tiny pipelines, short searches and timings: a sample takes about a second.
sh::DatasetConfig tiny_config(const fs::path &dir, int64_t pipelines, int64_t samples) {
    fs::create_directories(dir);
    return sh::parse_dataset_config("version: 1\ngenerator: " + kSmallConfig +
                                        "\npipelines: " + std::to_string(pipelines) +
                                        "\nschedules_per_pipeline: " + std::to_string(samples) +
                                        "\nseed: 5\nbeam_sample: {beam_size: 4, passes: 2}\n"
                                        "timing: {min_samples: 3, max_samples: 10, max_seconds: 0.05}\n"
                                        "workers: {compile_timeout_s: 10, memory_limit_gb: 8}\n",
                                    "test config", dir.string());
}

// Records kept in memory; rows from 100, to tell them from positions.
struct MemorySink : ds::RecordSink {
    std::vector<ds::PipelineRecord> pipelines;
    std::vector<ds::ScheduleRecord> schedules;
    uint64_t add_pipeline(const ds::PipelineRecord &p) override {
        pipelines.push_back(p);
        return 100 + pipelines.size() - 1;
    }
    void add_schedule(const ds::ScheduleRecord &s) override { schedules.push_back(s); }
};

TEST(GenerateDataset, InjectedFailuresAreRecordedAndTheRunGoesOn) {
    const fs::path dir = scratch("datagen_faults");
    const sh::DatasetConfig config = tiny_config(dir, 2, 4);
    const std::string out = (dir / "f.h5").string();
    const sh::GenerationStats stats =
        sh::generate_dataset(config, out, false, nullptr, {},
                             faulty_runner({{"pipeline 0 sample 0", FaultKind::Crash},
                                            {"pipeline 0 sample 1", FaultKind::Hang},
                                            {"pipeline 0 sample 2", FaultKind::OutOfMemory},
                                            {"pipeline 0 sample 3", FaultKind::CompileError},
                                            {"pipeline 1 sample 2", FaultKind::WrongOutput}}));
    EXPECT_EQ(stats.samples_written, 8);
    EXPECT_FALSE(stats.stopped);
    const auto reader = ds::DatasetReader::open(out);
    ASSERT_EQ(reader->num_schedules(), 8u);
    const char *expected[4] = {"crash", "timeout", "oom", "compile_error"};
    for (uint64_t i = 0; i < 8; i++) {
        const ds::ScheduleRecord s = reader->schedule(i);
        const ds::PipelineRecord p = reader->pipeline(s.pipeline_row);
        SCOPED_TRACE("pipeline row " + std::to_string(s.pipeline_row) + " sample " + std::to_string(s.sample));
        const bool wrong = s.pipeline_row == 1 && s.sample == 2;
        EXPECT_EQ(ds::status_name(s.status), std::string(s.pipeline_row == 0 ? expected[s.sample]
                                                         : wrong             ? "wrong_output"
                                                                             : "ok"))
            << s.message;
        // A wrong output is checked again with StrictFloat (fast-math rounding is not a wrong output).
        if (wrong) {
            EXPECT_NE(s.message.find("with StrictFloat too"), std::string::npos) << s.message;
        }
        // The search finished before the fault: its schedule and features are kept either way.
        EXPECT_FALSE(s.source.empty());
        EXPECT_EQ(s.features.size(), p.stages.size() * reader->info().schedule_feature_names.size());
        if (s.status == ds::Status::Ok) {
            EXPECT_FALSE(s.timings.empty());
            EXPECT_GT(s.runtime_min, 0);
        } else {
            EXPECT_FALSE(s.message.empty());
            EXPECT_TRUE(std::isnan(s.runtime_min));
        }
    }
    const ds::VerifyReport v = ds::verify_dataset(out);
    EXPECT_TRUE(v.ok()) << v.problems.front();
    // Nothing of the faults reaches the file's config.
    EXPECT_EQ(reader->info().config.find("\nfaults:"), std::string::npos) << reader->info().config;
}

TEST(GenerateDataset, RecordsGoToAnySinkInOrderAndHeldSamplesAreNotRunAgain) {
    const sh::DatasetConfig config = tiny_config(scratch("datagen_sink"), 2, 2);
    MemorySink sink;
    const sh::GenerationStats stats = sh::generate_into(config, sink, {});
    EXPECT_EQ(stats.samples_written, 4);
    ASSERT_EQ(sink.pipelines.size(), 2u);
    ASSERT_EQ(sink.schedules.size(), 4u);
    for (size_t i = 0; i < 4; i++) {
        EXPECT_EQ(sink.schedules[i].pipeline_row, 100 + i / 2) << i;
        EXPECT_EQ(sink.schedules[i].sample, i % 2) << i;
        EXPECT_EQ(sink.schedules[i].status, ds::Status::Ok) << sink.schedules[i].message;
    }
    // A sink that holds pipeline 0's samples (at its row 7) gets only pipeline 1's.
    sh::HeldRecords held;
    const uint64_t first = sink.pipelines[0].id;
    held.pipeline_rows[first] = 7;
    held.samples = {{first, 0}, {first, 1}};
    MemorySink rest;
    const sh::GenerationStats more = sh::generate_into(config, rest, held);
    EXPECT_EQ(more.samples_present, 2);
    ASSERT_EQ(rest.pipelines.size(), 1u);
    EXPECT_EQ(rest.pipelines[0].id, sink.pipelines[1].id);
    ASSERT_EQ(rest.schedules.size(), 2u);
    EXPECT_EQ(rest.schedules[0].pipeline_row, 100u);
    EXPECT_EQ(rest.schedules[1].source, sink.schedules[3].source); // the same search, run again
}

} // namespace
