// The dataset library: records round-trip exactly, a killed writer's file reads and resumes,
// verify catches corruption and broken offsets, merge/split/export keep every record once.
#include "common/errors.h"
#include "datasets/operations.h"
#include "datasets/publish.h"
#include "datasets/reader.h"
#include "datasets/verify.h"
#include "datasets/virtual_merge.h"
#include "datasets/writer.h"
#include "tests/datasets/fixtures.h"
#include "tests/support/process.h"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <csignal>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

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

// The path of file `file` in a fresh scratch folder `name`.
std::string scratch_file(const std::string &name, const std::string &file) {
    const fs::path dir = scratch(name);
    fs::create_directories(dir);
    return (dir / file).string();
}

// Problems, one per line.
std::string lines(const std::vector<std::string> &problems) {
    std::string all;
    for (const std::string &p : problems) all += p + "\n";
    return all;
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
    const std::string path = scratch_file("dataset_killed", "k.h5");
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

// A writer's forked children (benchmark workers, timing rounds) may outlive it by a moment when it
// is killed; the file must be free to reopen as soon as the writer itself is gone.
TEST(Dataset, AForkedChildDoesNotKeepTheWriteLock) {
    const std::string path = scratch_file("dataset_lock_fork", "l.h5");
    auto w = ds::DatasetWriter::create(path, test_file_info());
    w->add_pipeline(test_pipeline(1, 2));
    int go[2];
    ASSERT_EQ(::pipe(go), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) { // lives until the parent has reopened the file
        char c;
        ::close(go[1]);
        (void)!::read(go[0], &c, 1);
        ::_exit(0);
    }
    ::close(go[0]);
    w->close();
    w.reset();
    std::string error;
    try {
        auto again = ds::DatasetWriter::reopen(path);
        again->add_schedule(test_schedule(0, 0, 2));
        again->close();
    } catch (const UserError &e) {
        error = e.what();
    }
    ::close(go[1]); // the child ends
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_EQ(error, "");
    EXPECT_EQ(ds::DatasetReader::open(path)->num_schedules(), 1u);
}

// Overwrites four bytes in the middle of the first chunk of `dataset` (stored compressed and
// checksummed: the damage shows on reading it).
void corrupt_first_chunk(const std::string &path, const char *dataset) {
    haddr_t address = 0;
    hsize_t size = 0;
    {
        const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        const hid_t d = H5Dopen2(f, dataset, H5P_DEFAULT);
        const hid_t space = H5Dget_space(d);
        hsize_t offset[2];
        unsigned mask = 0;
        ASSERT_GE(H5Dget_chunk_info(d, space, 0, offset, &mask, &address, &size), 0);
        H5Sclose(space);
        H5Dclose(d);
        H5Fclose(f);
    }
    ASSERT_GT(size, 16u);
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(std::streamoff(address + size / 2));
    const char garbage[4] = {'\x5a', '\x00', '\x7f', '\x13'};
    file.write(garbage, sizeof(garbage));
}

TEST(Dataset, VerifyFindsACorruptedChunk) {
    const fs::path dir = scratch("dataset_corrupt");
    const std::string path = write_sample_file(dir, "c.h5");
    ASSERT_TRUE(ds::verify_dataset(path).ok());
    corrupt_first_chunk(path, "schedule_features");
    const ds::VerifyReport report = ds::verify_dataset(path);
    ASSERT_FALSE(report.ok());
    bool named = false;
    for (const std::string &p : report.problems) named |= p.find("schedule_features") != std::string::npos;
    EXPECT_TRUE(named) << report.problems.front();
}

// Every record of a file as bytes (doubles by their bits, so NaN equals NaN): two files hold the
// same records exactly when their texts are equal.
std::string all_records(const std::string &path) {
    const auto r = ds::DatasetReader::open(path);
    std::string out;
    auto put = [&](const void *data, size_t bytes) { out.append(static_cast<const char *>(data), bytes); };
    auto text = [&](const std::string &t) {
        const uint64_t n = t.size();
        put(&n, sizeof(n));
        out += t;
    };
    auto floats = [&](const auto &v) {
        text(std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(v[0])));
    };
    for (uint64_t i = 0; i < r->num_pipelines(); i++) {
        const ds::PipelineRecord p = r->pipeline(i);
        put(&p.id, sizeof(p.id)), put(&p.seed, sizeof(p.seed)), put(&p.generator_version, sizeof(p.generator_version));
        put(&p.reference_status, sizeof(p.reference_status)), put(&p.reference_runtime, sizeof(p.reference_runtime));
        text(p.spec);
        for (const std::string &stage : p.stages) text(stage);
        floats(p.features);
    }
    for (uint64_t i = 0; i < r->num_schedules(); i++) {
        const ds::ScheduleRecord s = r->schedule(i);
        for (double v : {double(s.pipeline_row), double(s.sample), double(s.seed), double(s.mode), double(s.beam_size),
                         double(s.passes), s.dropout, double(s.status), s.predicted_cost, s.runtime_min,
                         s.runtime_median, s.search_seconds, s.compile_seconds, s.benchmark_seconds, double(s.threads)})
            put(&v, sizeof(v));
        text(s.source), text(s.message), text(s.nest);
        floats(s.features), floats(s.timings);
    }
    return out;
}

// The corruption drill: 16 bytes flipped at 48 offsets spread over a small file, one copy each.
// Each damaged copy is reported by verify (or refused when opened), or harmless: every record
// reads back as it was. And each answer comes within seconds: HDF5's SWMR reader used to retry
// failed metadata reads, asleep, for over five minutes (and damaged metadata can crash HDF5, or
// make it loop: verify reports both, by its time limit, set short here).
TEST(Dataset, FlippedBytesAnywhereAreReportedOrHarmlessAndAnsweredQuickly) {
    const fs::path dir = scratch("dataset_drill");
    const std::string original = write_sample_file(dir, "drill.h5"), damaged = (dir / "damaged.h5").string();
    ASSERT_TRUE(ds::verify_dataset(original).ok());
    const std::string records = all_records(original);
    const uint64_t size = fs::file_size(original);
    constexpr int kOffsets = 48, kVerifySeconds = 5, kSecondsEach = 30;
    enum Verdict { Reported = 10, Harmless, Undetected };
    int reported = 0, harmless = 0;
    for (int k = 0; k < kOffsets; k++) {
        const uint64_t offset = (size - 16) * uint64_t(k) / (kOffsets - 1);
        SCOPED_TRACE("16 bytes flipped at offset " + std::to_string(offset) + " of " + std::to_string(size));
        fs::copy_file(original, damaged, fs::copy_options::overwrite_existing);
        {
            std::fstream file(damaged, std::ios::in | std::ios::out | std::ios::binary);
            char bytes[16];
            file.seekg(std::streamoff(offset));
            file.read(bytes, sizeof(bytes));
            for (char &b : bytes) b = char(~b);
            file.seekp(std::streamoff(offset));
            file.write(bytes, sizeof(bytes));
        }
        // In a child, so that a hang is caught by its alarm and a crash by its signal.
        const pid_t pid = fork();
        if (pid == 0) {
            alarm(kSecondsEach);
            try {
                if (!ds::verify_dataset(damaged, kVerifySeconds).ok()) _exit(Reported);
            } catch (const std::exception &) {
                _exit(Reported); // refused as unopenable
            }
            try {
                _exit(all_records(damaged) == records ? Harmless : Undetected);
            } catch (const std::exception &) {
                _exit(Undetected); // verify passed a file that does not read
            }
        }
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_FALSE(WIFSIGNALED(status))
            << (WTERMSIG(status) == SIGALRM ? "no answer within the time limit"
                                            : "killed by signal " + std::to_string(WTERMSIG(status)));
        ASSERT_TRUE(WIFEXITED(status));
        EXPECT_NE(WEXITSTATUS(status), Undetected) << "verify passed a file whose records changed";
        EXPECT_TRUE(WEXITSTATUS(status) == Reported || WEXITSTATUS(status) == Harmless) << WEXITSTATUS(status);
        reported += WEXITSTATUS(status) == Reported;
        harmless += WEXITSTATUS(status) == Harmless;
    }
    EXPECT_GT(reported, kOffsets / 4); // the drill did damage something
    std::cout << "[          ] " << reported << " reported, " << harmless << " harmless\n";
}

// A published folder: its card and example, a manifest that sha256sum and check_manifest accept,
// and a check that names each file missing, changed or unlisted. A damaged dataset stops the
// publish before anything is written.
TEST(Dataset, PublishWritesACardAnExampleAndAManifestThatChecksACopy) {
    const fs::path dir = scratch("dataset_publish");
    write_sample_file(dir, "a.h5", 10);
    write_sample_file(dir, "b.h5", 20);
    const std::vector<ds::PublishedFile> files = ds::prepare_for_publishing(dir.string());
    ASSERT_EQ(files.size(), 2u);
    EXPECT_EQ(files[0].name, "a.h5");
    EXPECT_EQ(files[1].summary.schedules, 5u);
    EXPECT_LE(files[0].summary.file_bytes, files[0].bytes_before);
    ds::write_dataset_card(dir.string(), files, {});
    ds::write_manifest(dir.string());
    const std::string card = read_file(dir / "README.md");
    for (const char *needle : {"`a.h5`", "`b.h5`", "6 pipelines, 10 schedules, 8 of them ok", "1 crash",
                               "cpu_model = test", "min_samples = 5", "ünïcødé", "read_dataset.py"})
        EXPECT_NE(card.find(needle), std::string::npos) << needle << "\n" << card;

    // The example reads what the C++ reader reads (Debian's interpreter, with h5py).
    const Result py = run("/usr/bin/python3 " + (dir / "read_dataset.py").string() + " " + (dir / "a.h5").string());
    ASSERT_EQ(py.exit_code, 0) << py.err;
    EXPECT_NE(py.out.find("ok schedules 4\npipelines 2\n"), std::string::npos) << py.out;

    const std::string manifest = (dir / "SHA256SUMS").string();
    const Result sums = run("cd " + dir.string() + " && sha256sum --check --quiet SHA256SUMS");
    EXPECT_EQ(sums.exit_code, 0) << sums.out << sums.err;
    const ds::ManifestCheck good = ds::check_manifest(manifest);
    EXPECT_TRUE(good.ok()) << good.problems.front();
    EXPECT_EQ(good.files, 4u); // a.h5, b.h5, README.md, read_dataset.py

    // A copy with one file changed, one gone and one added.
    {
        std::fstream f(dir / "b.h5", std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(100);
        f.put('\x42');
    }
    fs::remove(dir / "README.md");
    fs::copy_file(dir / "a.h5", dir / "c.h5");
    const std::string all = lines(ds::check_manifest(manifest).problems);
    EXPECT_NE(all.find("b.h5: changed"), std::string::npos) << all;
    EXPECT_NE(all.find("README.md: missing"), std::string::npos) << all;
    EXPECT_NE(all.find("c.h5: a dataset the manifest does not list"), std::string::npos) << all;
    EXPECT_EQ(all.find("a.h5:"), std::string::npos) << all;

    // Publishing a folder with a damaged dataset writes nothing.
    const fs::path damaged = scratch("dataset_publish_damaged");
    write_sample_file(damaged, "a.h5");
    corrupt_first_chunk((damaged / "a.h5").string(), "schedule_features");
    try {
        ds::prepare_for_publishing(damaged.string());
        ADD_FAILURE() << "published a damaged file";
    } catch (const UserError &e) {
        EXPECT_NE(std::string(e.what()).find("a.h5: "), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(damaged / "README.md"));
    const fs::path empty = scratch("dataset_publish_empty");
    fs::create_directories(empty);
    EXPECT_THROW(ds::prepare_for_publishing(empty.string()), UserError);
    EXPECT_THROW(ds::check_manifest((empty / "SHA256SUMS").string()), UserError);
}

TEST(Dataset, VerifyFindsBrokenOffsetsAndValues) {
    const std::string path = scratch_file("dataset_offsets", "o.h5");
    auto w = ds::DatasetWriter::create(path, test_file_info());
    w->add_pipeline(test_pipeline(1, 2));
    ds::ScheduleRecord wrong_stages = test_schedule(0, 0, 3); // 3 feature rows, the pipeline has 2
    w->add_schedule(wrong_stages);
    ds::ScheduleRecord bad_runtime = test_schedule(0, 1, 2);
    bad_runtime.runtime_min = 1.0; // not the fastest timing sample
    w->add_schedule(bad_runtime);
    w->add_schedule(test_schedule(0, 1, 2)); // sample 1 twice
    w->close();
    const std::string all = lines(ds::verify_dataset(path).problems);
    EXPECT_NE(all.find("3 feature rows for a pipeline of 2 stages"), std::string::npos) << all;
    EXPECT_NE(all.find("runtime_min is not the fastest"), std::string::npos) << all;
    EXPECT_NE(all.find("appears twice"), std::string::npos) << all;
}

// With timing rounds the label is the median of the rounds' minima (boundaries not stored): a
// label among the samples passes, one outside them does not.
TEST(Dataset, VerifyChecksARoundsLabelLiesAmongItsSamples) {
    const std::string path = scratch_file("dataset_rounds", "r.h5");
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

// A virtual merge reads as the copy a merge makes, through the C++ reader, h5py and h5dump, from
// any folder it is moved to with its shards; a missing or changed shard is named, never read as
// zeros.
TEST(Dataset, VirtualMergeReadsAsTheCopyAndNamesMissingOrChangedShards) {
    const fs::path dir = scratch("dataset_virtual_merge");
    const std::string a = write_sample_file(dir / "shards", "a.h5", 10);
    const std::string b = write_sample_file(dir / "shards", "c.h5", 20);
    const std::string copy = (dir / "copy.h5").string(), merged = (dir / "virtual.h5").string();
    ds::merge_datasets({a, b}, copy, false);
    const ds::MergeReport m = ds::merge_virtual({a, b}, merged, false);
    EXPECT_EQ(m.pipelines, 6u);
    EXPECT_EQ(m.schedules, 10u);
    EXPECT_EQ(m.duplicates_skipped, 0u);
    EXPECT_FALSE(fs::exists(merged + ".partial"));

    const ds::VerifyReport v = ds::verify_dataset(merged);
    EXPECT_TRUE(v.ok()) << lines(v.problems);
    EXPECT_EQ(v.schedules, 10u);
    const std::vector<ds::VirtualSource> shards = ds::virtual_sources(merged);
    ASSERT_EQ(shards.size(), 2u);
    EXPECT_EQ(shards[1].path, "shards/c.h5");
    EXPECT_EQ(shards[1].bytes, fs::file_size(b));
    EXPECT_TRUE(ds::virtual_sources(copy).empty());
    const auto expect_same_records = [](const std::string &got_path, const std::string &want_path) {
        const auto got = ds::DatasetReader::open(got_path), want = ds::DatasetReader::open(want_path);
        ASSERT_EQ(got->num_pipelines(), want->num_pipelines());
        ASSERT_EQ(got->num_schedules(), want->num_schedules());
        for (uint64_t i = 0; i < want->num_schedules(); i++) expect_same(got->schedule(i), want->schedule(i));
        for (uint64_t i = 0; i < want->num_pipelines(); i++) {
            EXPECT_EQ(got->pipeline(i).spec, want->pipeline(i).spec);
            EXPECT_EQ(got->pipeline(i).stages, want->pipeline(i).stages);
            EXPECT_EQ(got->pipeline(i).features, want->pipeline(i).features);
        }
        EXPECT_EQ(got->info().config, want->info().config);
    };
    expect_same_records(merged, copy);

    // h5py and h5dump need no schedforge code, and find the shards from another working folder.
    for (int row = 0; row < 10; row++) {
        const std::string py = "cd / && /usr/bin/python3 " SCHEDFORGE_SOURCE_DIR "/tests/datasets/read_dataset.py ";
        const Result got = run(py + merged + " " + std::to_string(row)),
                     want = run(py + copy + " " + std::to_string(row));
        ASSERT_EQ(got.exit_code, 0) << got.err;
        EXPECT_EQ(got.out, want.out);
    }
    const auto dump = [](const std::string &file) {
        const Result r = run("cd / && h5dump -d /schedule_features -d /pipeline_text -d /timings " + file);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        std::string data; // without the line naming the file and the extents' limits (a copy's grow)
        std::istringstream in(r.out);
        for (std::string line; std::getline(in, line);) {
            if (line.find("HDF5 \"") == std::string::npos && line.find("DATASPACE") == std::string::npos)
                data += line + "\n";
        }
        return data;
    };
    EXPECT_EQ(dump(merged), dump(copy));

    // A (pipeline id, sample) pair already taken is skipped, as a copying merge skips it (its
    // rows stay in the mapped arrays, unreferenced).
    const std::string overlapping = write_sample_file(dir / "shards", "b.h5", 12); // pipeline 12 is in a too
    const std::string dup_copy = (dir / "dup_copy.h5").string(), dup_merged = (dir / "dup_virtual.h5").string();
    ds::merge_datasets({a, overlapping}, dup_copy, false);
    const ds::MergeReport d = ds::merge_virtual({a, overlapping}, dup_merged, false);
    EXPECT_EQ(d.pipelines, 5u);
    EXPECT_EQ(d.schedules, 8u);
    EXPECT_EQ(d.duplicates_skipped, 2u);
    expect_same_records(dup_merged, dup_copy);
    EXPECT_TRUE(ds::verify_dataset(dup_merged).ok());

    // Moved with its shards, it still reads; without one, it is refused and verify names it.
    const fs::path moved = dir / "moved";
    fs::create_directories(moved / "shards");
    fs::copy_file(merged, moved / "virtual.h5");
    fs::copy_file(a, moved / "shards/a.h5");
    fs::copy_file(b, moved / "shards/c.h5");
    const std::string moved_merge = (moved / "virtual.h5").string();
    EXPECT_TRUE(ds::verify_dataset(moved_merge).ok());
    fs::rename(moved / "shards/c.h5", moved / "c.h5");
    EXPECT_THROW(ds::DatasetReader::open(moved_merge), UserError);
    const ds::VerifyReport missing = ds::verify_dataset(moved_merge);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.problems[0].find("shard shards/c.h5 is missing"), std::string::npos) << lines(missing.problems);
    // Changed (the same size, its last byte differs): the digest tells.
    {
        std::fstream f(moved / "c.h5", std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(-1, std::ios::end);
        const char x = char(0x5a);
        f.write(&x, 1);
    }
    fs::rename(moved / "c.h5", moved / "shards/c.h5");
    const ds::VerifyReport changed = ds::verify_dataset(moved_merge);
    ASSERT_FALSE(changed.ok());
    EXPECT_NE(lines(changed.problems).find("shard shards/c.h5 changed since the virtual merge"), std::string::npos)
        << lines(changed.problems);

    // What it cannot take: a virtual merge as a shard, an existing output, other hardware. A
    // virtual merge is not compacted (that would copy its shards into it).
    EXPECT_THROW(ds::merge_virtual({merged}, (dir / "again.h5").string(), false), UserError);
    EXPECT_THROW(ds::merge_virtual({a}, copy, false), UserError);
    EXPECT_THROW(ds::compact_dataset(merged), UserError);
    const std::string other = (dir / "other.h5").string(), out2 = (dir / "v2.h5").string();
    ds::FileInfo info = test_file_info();
    info.hardware = "cpu_model = elsewhere\n";
    ds::DatasetWriter::create(other, info)->close();
    EXPECT_THROW(ds::merge_virtual({a, other}, out2, false), UserError);
    EXPECT_FALSE(fs::exists(out2));
    EXPECT_FALSE(fs::exists(out2 + ".partial"));
    EXPECT_EQ(ds::merge_virtual({a, other}, out2, true).schedules, 5u); // other's arrays are empty
    EXPECT_TRUE(ds::verify_dataset(out2).ok());
}

TEST(Dataset, CompactKeepsEveryRecordAndShedsWhatTheFlushesLeft) {
    const std::string path = scratch_file("dataset_compact", "c.h5");
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
