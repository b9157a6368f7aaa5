// The dataset library: records round-trip exactly, a killed writer's file reads and resumes,
// verify catches corruption and broken offsets, merge/split/export keep every record once.
#include "common/errors.h"
#include "datasets/operations.h"
#include "datasets/reader.h"
#include "datasets/verify.h"
#include "datasets/writer.h"
#include "tests/datasets/fixtures.h"
#include "tests/support/process.h"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <fstream>
#include <set>

namespace {

using namespace schedforge::testing;
namespace ds = schedforge::datasets;
using schedforge::UserError;

void expect_same(const ds::ScheduleRecord &a, const ds::ScheduleRecord &b) {
    EXPECT_EQ(a.pipeline_row, b.pipeline_row);
    EXPECT_EQ(a.sample, b.sample);
    EXPECT_EQ(a.seed, b.seed);
    EXPECT_EQ(a.mode, b.mode);
    EXPECT_EQ(a.beam_size, b.beam_size);
    EXPECT_EQ(a.passes, b.passes);
    EXPECT_EQ(a.dropout, b.dropout);
    EXPECT_EQ(a.status, b.status);
    EXPECT_EQ(a.predicted_cost, b.predicted_cost);
    if (std::isnan(a.runtime_min)) {
        EXPECT_TRUE(std::isnan(b.runtime_min));
    } else {
        EXPECT_EQ(a.runtime_min, b.runtime_min);
        EXPECT_EQ(a.runtime_median, b.runtime_median);
    }
    EXPECT_EQ(a.search_seconds, b.search_seconds);
    EXPECT_EQ(a.compile_seconds, b.compile_seconds);
    EXPECT_EQ(a.benchmark_seconds, b.benchmark_seconds);
    EXPECT_EQ(a.threads, b.threads);
    EXPECT_EQ(a.source, b.source);
    EXPECT_EQ(a.message, b.message);
    EXPECT_EQ(a.nest, b.nest);
    EXPECT_EQ(a.features, b.features);
    EXPECT_EQ(a.timings, b.timings);
}

// Three pipelines (3, 1 and 4 stages) with 2, 0 and 3 schedules, one of them a crash.
std::string write_sample_file(const fs::path &dir, const std::string &name, uint64_t first_id = 10) {
    fs::create_directories(dir);
    const std::string path = (dir / name).string();
    auto w = ds::DatasetWriter::create(path, test_file_info());
    const uint64_t a = w->add_pipeline(test_pipeline(first_id, 3));
    const uint64_t b = w->add_pipeline(test_pipeline(first_id + 1, 1));
    const uint64_t c = w->add_pipeline(test_pipeline(first_id + 2, 4));
    EXPECT_EQ(b, 1u);
    w->add_schedule(test_schedule(a, 0, 3));
    w->add_schedule(test_schedule(a, 1, 3, ds::Status::Crash));
    for (uint32_t s = 0; s < 3; s++) w->add_schedule(test_schedule(c, s, 4));
    w->close();
    return path;
}

TEST(Dataset, RecordsRoundTripExactly) {
    const fs::path dir = scratch("dataset_round_trip");
    const std::string path = write_sample_file(dir, "a.h5");
    const auto r = ds::DatasetReader::open(path);
    const ds::FileInfo want = test_file_info();
    EXPECT_EQ(r->info().schema_version, ds::kSchemaVersion);
    EXPECT_EQ(r->info().pipeline_feature_names, want.pipeline_feature_names);
    EXPECT_EQ(r->info().schedule_feature_names, want.schedule_feature_names);
    EXPECT_EQ(r->info().config, want.config);
    EXPECT_EQ(r->info().hardware, want.hardware);
    EXPECT_EQ(r->info().created, want.created);
    ASSERT_EQ(r->num_pipelines(), 3u);
    ASSERT_EQ(r->num_schedules(), 5u);
    for (uint64_t i = 0; i < 3; i++) {
        const ds::PipelineRecord want_p = test_pipeline(10 + i, i == 0 ? 3 : i == 1 ? 1 : 4);
        const ds::PipelineRecord got = r->pipeline(i);
        EXPECT_EQ(got.id, want_p.id);
        EXPECT_EQ(got.seed, want_p.seed);
        EXPECT_EQ(got.spec, want_p.spec);
        EXPECT_EQ(got.stages, want_p.stages);
        EXPECT_EQ(got.features, want_p.features);
        EXPECT_EQ(got.reference_runtime, want_p.reference_runtime);
    }
    expect_same(r->schedule(0), test_schedule(0, 0, 3));
    expect_same(r->schedule(1), test_schedule(0, 1, 3, ds::Status::Crash));
    expect_same(r->schedule(4), test_schedule(2, 2, 4));
    EXPECT_TRUE(ds::verify_dataset(path).ok());
}

TEST(Dataset, AnUnclosedWriterLeavesAReadableResumableFile) {
    const fs::path dir = scratch("dataset_killed");
    fs::create_directories(dir);
    const std::string path = (dir / "k.h5").string();
    // A child writes two records and dies without closing (as kill -9 would leave it).
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto w = ds::DatasetWriter::create(path, test_file_info());
        w->add_pipeline(test_pipeline(1, 2));
        w->add_schedule(test_schedule(0, 0, 2));
        ::_exit(0); // no close, no destructors
    }
    int status = 0;
    waitpid(child, &status, 0);
    {
        const auto r = ds::DatasetReader::open(path);
        EXPECT_EQ(r->num_pipelines(), 1u);
        EXPECT_EQ(r->num_schedules(), 1u);
        expect_same(r->schedule(0), test_schedule(0, 0, 2));
    }
    {
        auto w = ds::DatasetWriter::reopen(path);
        EXPECT_EQ(w->num_schedules(), 1u);
        w->add_schedule(test_schedule(0, 1, 2));
        w->close();
    }
    const auto r = ds::DatasetReader::open(path);
    ASSERT_EQ(r->num_schedules(), 2u);
    expect_same(r->schedule(1), test_schedule(0, 1, 2));
    EXPECT_TRUE(ds::verify_dataset(path).ok()) << ds::verify_dataset(path).problems.front();
}

TEST(Dataset, VerifyFindsACorruptedChunk) {
    const fs::path dir = scratch("dataset_corrupt");
    const std::string path = write_sample_file(dir, "c.h5");
    ASSERT_TRUE(ds::verify_dataset(path).ok());
    // Where the first chunk of schedule_features lies in the file.
    haddr_t address = 0;
    hsize_t size = 0;
    {
        const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        const hid_t d = H5Dopen2(f, "schedule_features", H5P_DEFAULT);
        const hid_t space = H5Dget_space(d);
        hsize_t offset[2];
        unsigned mask = 0;
        ASSERT_GE(H5Dget_chunk_info(d, space, 0, offset, &mask, &address, &size), 0);
        H5Sclose(space);
        H5Dclose(d);
        H5Fclose(f);
    }
    ASSERT_GT(size, 16u);
    {
        std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
        file.seekp(std::streamoff(address + size / 2));
        const char garbage[4] = {'\x5a', '\x00', '\x7f', '\x13'};
        file.write(garbage, sizeof(garbage));
    }
    const ds::VerifyReport report = ds::verify_dataset(path);
    ASSERT_FALSE(report.ok());
    bool named = false;
    for (const std::string &p : report.problems) named |= p.find("schedule_features") != std::string::npos;
    EXPECT_TRUE(named) << report.problems.front();
}

TEST(Dataset, VerifyFindsBrokenOffsetsAndValues) {
    const fs::path dir = scratch("dataset_offsets");
    fs::create_directories(dir);
    const std::string path = (dir / "o.h5").string();
    auto w = ds::DatasetWriter::create(path, test_file_info());
    w->add_pipeline(test_pipeline(1, 2));
    ds::ScheduleRecord wrong_stages = test_schedule(0, 0, 3); // 3 feature rows, the pipeline has 2
    w->add_schedule(wrong_stages);
    ds::ScheduleRecord bad_runtime = test_schedule(0, 1, 2);
    bad_runtime.runtime_min = 1.0; // not the fastest timing sample
    w->add_schedule(bad_runtime);
    w->add_schedule(test_schedule(0, 1, 2)); // sample 1 twice
    w->close();
    const ds::VerifyReport report = ds::verify_dataset(path);
    std::string all;
    for (const std::string &p : report.problems) all += p + "\n";
    EXPECT_NE(all.find("3 feature rows for a pipeline of 2 stages"), std::string::npos) << all;
    EXPECT_NE(all.find("runtime_min is not the fastest"), std::string::npos) << all;
    EXPECT_NE(all.find("appears twice"), std::string::npos) << all;
}

// With timing rounds the label is the median of the rounds' minima (boundaries not stored): a
// label among the samples passes, one outside them does not.
TEST(Dataset, VerifyChecksARoundsLabelLiesAmongItsSamples) {
    const fs::path dir = scratch("dataset_rounds");
    fs::create_directories(dir);
    const std::string path = (dir / "r.h5").string();
    ds::FileInfo info = test_file_info();
    info.timing_protocol = "min_samples = 5\nrounds = 3\nlabel = median of the rounds' minima\n";
    EXPECT_EQ(ds::protocol_rounds(info.timing_protocol), 3);
    EXPECT_EQ(ds::protocol_rounds(test_file_info().timing_protocol), 1);
    auto w = ds::DatasetWriter::create(path, info);
    w->add_pipeline(test_pipeline(1, 2));
    ds::ScheduleRecord median_label = test_schedule(0, 0, 2);
    median_label.runtime_min = median_label.timings[2]; // not the fastest, but a sample's
    w->add_schedule(median_label);
    ds::ScheduleRecord outside = test_schedule(0, 1, 2);
    outside.runtime_min = 1.0;
    w->add_schedule(outside);
    w->close();
    const ds::VerifyReport report = ds::verify_dataset(path);
    ASSERT_EQ(report.problems.size(), 1u);
    EXPECT_NE(report.problems[0].find("schedules row 1: runtime_min lies outside its timing samples"),
              std::string::npos)
        << report.problems[0];
}

TEST(Dataset, MergeKeepsEveryRecordOnceAndRefusesOtherHardware) {
    const fs::path dir = scratch("dataset_merge");
    const std::string a = write_sample_file(dir, "a.h5", 10);
    const std::string b = write_sample_file(dir, "b.h5", 12); // pipeline 12 is in both
    const std::string out = (dir / "m.h5").string();
    const ds::MergeReport m = ds::merge_datasets({a, b}, out, false);
    EXPECT_EQ(m.pipelines, 5u); // 10, 11, 12, 13, 14
    EXPECT_EQ(m.schedules, 8u); // 5 + 5 minus b's 2 samples of pipeline 12, which a has
    EXPECT_EQ(m.duplicates_skipped, 2u);
    EXPECT_TRUE(ds::verify_dataset(out).ok());
    const auto r = ds::DatasetReader::open(out);
    EXPECT_EQ(r->num_schedules(), 8u);
    expect_same(r->schedule(0), test_schedule(0, 0, 3));

    // A shard from other hardware: refused, nothing written; --force merges it.
    const std::string other = (dir / "other.h5").string();
    ds::FileInfo info = test_file_info();
    info.hardware = "cpu_model = elsewhere\n";
    ds::DatasetWriter::create(other, info)->close();
    const std::string out2 = (dir / "m2.h5").string();
    EXPECT_THROW(ds::merge_datasets({a, other}, out2, false), UserError);
    EXPECT_FALSE(fs::exists(out2));
    EXPECT_FALSE(fs::exists(out2 + ".partial"));
    EXPECT_EQ(ds::merge_datasets({a, other}, out2, true).schedules, 5u);
    EXPECT_THROW(ds::merge_datasets({a}, out, false), UserError); // exists
}

TEST(Dataset, CompactKeepsEveryRecordAndShedsWhatTheFlushesLeft) {
    const fs::path dir = scratch("dataset_compact");
    fs::create_directories(dir);
    const std::string path = (dir / "c.h5").string();
    auto w = ds::DatasetWriter::create(path, test_file_info()); // durable: a flush per record
    for (uint64_t p = 0; p < 20; p++) {
        const uint64_t row = w->add_pipeline(test_pipeline(500 + p, 3));
        for (uint32_t s = 0; s < 15; s++) w->add_schedule(test_schedule(row, s, 3));
    }
    // Another writer may not compact (and rename over) a file being written.
    EXPECT_THROW(ds::compact_dataset(path), UserError);
    w->close();

    const ds::CompactReport r = ds::compact_dataset(path);
    EXPECT_EQ(r.pipelines, 20u);
    EXPECT_EQ(r.schedules, 300u);
    EXPECT_EQ(r.bytes_after, fs::file_size(path));
    // 1,104,520 -> 63,749 bytes (17x) when written; generate-dataset's files shrink 30-50x.
    EXPECT_LT(r.bytes_after * 3, r.bytes_before) << r.bytes_before << " -> " << r.bytes_after;
    EXPECT_FALSE(fs::exists(path + ".partial"));
    EXPECT_TRUE(ds::verify_dataset(path).ok());
    const auto in = ds::DatasetReader::open(path);
    EXPECT_EQ(in->info().created, test_file_info().created);
    EXPECT_EQ(in->info().config, test_file_info().config);
    ASSERT_EQ(in->num_schedules(), 300u);
    for (uint64_t i = 0; i < 300; i++) expect_same(in->schedule(i), test_schedule(i / 15, uint32_t(i % 15), 3));
    EXPECT_EQ(in->pipeline(19).features, test_pipeline(519, 3).features);
}

TEST(Dataset, SplitIsDeterministicByPipelineAndComplete) {
    const fs::path dir = scratch("dataset_split");
    fs::create_directories(dir);
    const std::string path = (dir / "s.h5").string();
    auto w = ds::DatasetWriter::create(path, test_file_info());
    for (uint64_t p = 0; p < 40; p++) {
        const uint64_t row = w->add_pipeline(test_pipeline(1000 + p * 7919, 1));
        for (uint32_t s = 0; s < 2; s++) w->add_schedule(test_schedule(row, s, 1));
    }
    w->close();
    const std::array<double, 3> fractions{0.6, 0.2, 0.2};
    const ds::SplitReport r = ds::split_dataset(path, (dir / "parts").string(), fractions);
    EXPECT_EQ(r.pipelines[0] + r.pipelines[1] + r.pipelines[2], 40u);
    EXPECT_EQ(r.schedules[0] + r.schedules[1] + r.schedules[2], 80u);
    for (int part = 0; part < 3; part++) EXPECT_GT(r.pipelines[size_t(part)], 0u) << part;
    const char *names[3] = {"train.h5", "validation.h5", "test.h5"};
    for (int part = 0; part < 3; part++) {
        const auto pr = ds::DatasetReader::open((dir / "parts" / names[part]).string());
        for (const ds::PipelineRecord &p : pr->pipeline_summaries()) EXPECT_EQ(ds::split_part(p.id, fractions), part);
        EXPECT_TRUE(ds::verify_dataset((dir / "parts" / names[part]).string()).ok());
    }
    EXPECT_THROW(ds::split_dataset(path, (dir / "parts").string(), fractions), UserError); // outputs exist
}

TEST(Dataset, ExportWritesCsvAndNpy) {
    const fs::path dir = scratch("dataset_export");
    const std::string path = write_sample_file(dir, "e.h5");
    ds::export_dataset(path, (dir / "csv").string(), "csv");
    const std::string schedules = read_file(dir / "csv" / "schedules.csv");
    EXPECT_EQ(count_lines(schedules), 6); // header + 5
    EXPECT_NE(schedules.find(",crash,"), std::string::npos);
    ds::export_dataset(path, (dir / "npy").string(), "npy");
    const std::string npy = read_file(dir / "npy" / "schedule_features.npy");
    ASSERT_GT(npy.size(), 128u);
    EXPECT_EQ(npy.substr(0, 6), "\x93NUMPY");
    const size_t header = 10 + size_t(uint8_t(npy[8])) + 256 * size_t(uint8_t(npy[9]));
    EXPECT_EQ(header % 64, 0u);
    EXPECT_NE(npy.find("'shape': (" + std::to_string(3 + 3 + 4 * 3) + ", " + std::to_string(kScheduleColumns) + ")"),
              std::string::npos);
    EXPECT_EQ(npy.size() - header, (3 + 3 + 4 * 3) * kScheduleColumns * 4);
    EXPECT_THROW(ds::export_dataset(path, (dir / "x").string(), "parquet"), UserError);
}

TEST(DatasetErrors, BadPathsAreUserErrors) {
    const fs::path dir = scratch("dataset_errors");
    fs::create_directories(dir);
    EXPECT_THROW(ds::DatasetReader::open((dir / "missing.h5").string()), UserError);
    std::ofstream(dir / "text.h5") << "not hdf5";
    EXPECT_THROW(ds::DatasetReader::open((dir / "text.h5").string()), UserError);
    EXPECT_THROW(ds::DatasetWriter::create((dir / "no" / "such" / "folder.h5").string(), test_file_info()), UserError);
    EXPECT_THROW(ds::DatasetWriter::create((dir / "text.h5").string(), test_file_info()), UserError);
    EXPECT_EQ(read_file(dir / "text.h5"), "not hdf5"); // untouched
    EXPECT_THROW(ds::DatasetWriter::reopen((dir / "missing.h5").string()), UserError);
    EXPECT_THROW(ds::DatasetWriter::reopen((dir / "text.h5").string()), UserError);
}

} // namespace
