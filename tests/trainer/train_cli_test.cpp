// train-cost-model as a user runs it, on a dataset file written with the datasets library, and
// its weights used by the search (autoschedule --weights) and refused where they do not fit.
#include "tests/datasets/fixtures.h"
#include "tests/support/commands.h"
#include "tests/trainer/reference_model.h"

#include "common/timing_note.h"
#include "datasets/writer.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

namespace schedforge::trainer {
namespace {

using schedforge::testing::count_lines;
using schedforge::testing::expect_user_error;
using schedforge::testing::read_file;
using schedforge::testing::run;
using schedforge::testing::scratch;
namespace fs = std::filesystem;

std::string train_cli(const std::string &args) { return std::string(TRAIN_COST_MODEL) + " " + args; }

// 12 pipelines x 6 ok schedules with runtimes from fixed coefficients, one failed sample and one
// timed under contention.
std::string write_dataset(const fs::path &dir, const std::string &name = "train.h5", uint64_t first_id = 1) {
    fs::create_directories(dir);
    const std::string path = (dir / name).string();
    auto writer = datasets::DatasetWriter::create(path, schedforge::testing::test_file_info());
    common::Rng rng(5);
    testing::WeightsD exact{};
    for (int t = 0; t < kNumTensors; t++) exact[size_t(t)].assign(size_t(tensor_shapes()[size_t(t)].size()), 0.0);
    for (int o = 0; o < kTerms; o++) exact[size_t(Tensor::Bias1)][size_t(o)] = 0.1 + 0.03 * o;
    for (uint64_t i = 0; i < 12; i++) {
        const int stages = 3;
        datasets::PipelineRecord p = schedforge::testing::test_pipeline(common::mix64(i + first_id), stages);
        const PipelineInput input = testing::synthetic_pipeline(rng, stages);
        p.features = input.pipeline_features;
        const uint64_t row = writer->add_pipeline(p);
        const StateBatch states = testing::synthetic_states(rng, 6, stages, false);
        const std::vector<double> runtimes = testing::reference_forward(exact, input, states);
        for (uint32_t n = 0; n < 6; n++) {
            datasets::ScheduleRecord s = schedforge::testing::test_schedule(row, n, stages);
            const auto *f = &states.schedule_features[size_t(n) * stages * kScheduleFeatures];
            s.features.assign(f, f + stages * kScheduleFeatures);
            s.runtime_min = runtimes[n] / kSecondsToModelUnits;
            s.timings = {s.runtime_min, s.runtime_min * 1.01};
            writer->add_schedule(s);
        }
        if (i == 0) writer->add_schedule(schedforge::testing::test_schedule(row, 6, stages, datasets::Status::Crash));
        if (i == 1) { // an ok label timed while other processes held the CPUs: left out
            datasets::ScheduleRecord s = schedforge::testing::test_schedule(row, 6, stages);
            s.message = std::string(common::kContendedTimingNote) + ": its threads waited up to 90%";
            writer->add_schedule(s);
        }
    }
    writer->close();
    return path;
}

TEST(TrainCostModelCli, TrainsWritesReportsAndTheSearchUsesTheWeights) {
    const fs::path dir = scratch("train_cli");
    const std::string data = write_dataset(dir);
    const std::string weights = (dir / "w.weights").string();
    const auto r = run(train_cli("--data " + data + " --random-init 3 --weights-out " + weights +
                                 " --epochs 5 --lr 0.01 --validation-fraction 0.25"));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("12 pipelines, 72 ok schedules (2 schedules and 0 pipelines skipped: not ok (1 of them "
                         "timed under contention)"),
              std::string::npos)
        << r.out;
    const Weights w = Weights::load(weights);
    EXPECT_NE(w.origin.find("train-cost-model, 5 epochs"), std::string::npos) << w.origin;
    EXPECT_NE(w.origin.find("seed 3"), std::string::npos) << w.origin;
    const fs::path report = weights + ".report";
    EXPECT_EQ(count_lines(read_file(report / "metrics.csv")), 1 + 6); // header, epochs 0..5
    EXPECT_GT(count_lines(read_file(report / "predictions.csv")), 1);
    EXPECT_TRUE(fs::exists(report / "loss.png"));
    EXPECT_TRUE(fs::exists(report / "predictions.png"));

    // Continue from those weights; then schedule with them, and check the schedule's output.
    const std::string again = (dir / "w2.weights").string();
    const auto r2 = run(train_cli("--data " + data + " --weights-in " + weights + " --weights-out " + again +
                                  " --epochs 1 --report " + (dir / "r2").string()));
    ASSERT_EQ(r2.exit_code, 0) << r2.out << r2.err;
    EXPECT_NE(Weights::load(again).origin.find("from: train-cost-model"), std::string::npos);
    // From a search config's coefficients: epoch 0 is that manual model, and the origin says so.
    const std::string warm = (dir / "w3.weights").string();
    const std::string coefficients = std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/search/default.yaml";
    const auto r3 = run(train_cli("--data " + data + " --from-coefficients " + coefficients + " --weights-out " + warm +
                                  " --epochs 1 --report " + (dir / "r3").string()));
    ASSERT_EQ(r3.exit_code, 0) << r3.out << r3.err;
    EXPECT_NE(Weights::load(warm).origin.find("the manual model with the coefficients of " + coefficients),
              std::string::npos)
        << Weights::load(warm).origin;
    const auto s = run(schedforge::testing::autoschedule("--pipeline 3 --config " + schedforge::testing::kSmallConfig +
                                                         " --beam 4 --passes 1 --check --weights " + again));
    ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
    EXPECT_NE(s.out.find("check: the output matches compute_root's"), std::string::npos) << s.out;
}

TEST(TrainCostModelCli, BadInputsAreUserErrors) {
    const fs::path dir = scratch("train_cli_errors");
    const std::string data = write_dataset(dir);
    const std::string out = (dir / "o.weights").string();
    expect_user_error(run(train_cli("--data " + data + " --weights-out " + out)), "give --weights-in, or");
    expect_user_error(run(train_cli("--data " + data + " --weights-in " + out + " --from-coefficients " +
                                    (dir / "s.yaml").string() + " --weights-out " + out)),
                      "give --weights-in, or");
    expect_user_error(run(train_cli("--data " + data + " --from-coefficients " + (dir / "none.yaml").string() +
                                    " --weights-out " + out)),
                      "none.yaml");
    expect_user_error(run(train_cli("--data " + (dir / "none.h5").string() + " --random-init 1 --weights-out " + out)),
                      "none.h5");
    expect_user_error(run(train_cli("--data " + data + " --random-init 1 --weights-out " + out + " --lr 0")), "--lr");
    expect_user_error(run(train_cli("--data " + data + " --random-init 1 --correction-bound 2 --weights-out " + out)),
                      "give --from-coefficients");
    expect_user_error(run(train_cli("--data " + data + " --from-coefficients " + (dir / "none.yaml").string() +
                                    " --correction-bound 0.5 --weights-out " + out)),
                      "--correction-bound must be 0 (unbounded) or above 1");
    expect_user_error(run(train_cli("--data " + data + " --random-init 1 --weights-out " + out + " --loss l1")),
                      "--loss");
    expect_user_error(
        run(train_cli("--data " + data + " --random-init 1 --weights-out " + (dir / "no" / "w").string())),
        "does not exist");
    EXPECT_FALSE(fs::exists(out));

    // Weights trained on other features: refused by the trainer and by the search.
    const std::string stale = (dir / "stale.weights").string();
    const int version = featurize::ScheduleFeatures::version();
    auto key = [](int v) { return std::to_string(v) + " x " + std::to_string(kScheduleFeatures); };
    std::ofstream(stale, std::ios::binary)
        << testing::edited_weights(Weights::random(1).serialize(), "schedule_features = " + key(version),
                                   "schedule_features = " + key(version + 1));
    expect_user_error(run(train_cli("--data " + data + " --weights-in " + stale + " --weights-out " + out)),
                      "trained on schedule features " + key(version + 1) + ", this build computes " + key(version));
    expect_user_error(run(schedforge::testing::autoschedule("--pipeline 3 --config " +
                                                            schedforge::testing::kSmallConfig + " --weights " + stale)),
                      "trained on schedule features " + key(version + 1));
    EXPECT_FALSE(fs::exists(out));
}

// learning-curve as a user runs it: a row per size and model, the training data growing with
// the size and the validation set fixed; bad sizes and no held-out pipelines refused.
TEST(LearningCurveCli, GrowsTheTrainingSetAndScoresTheSameHeldOutPipelines) {
    const fs::path dir = scratch("learning_curve_cli");
    const std::string data = write_dataset(dir);
    const std::string out = (dir / "curve").string(), tool = std::string(LEARNING_CURVE) + " --data " + data;
    const auto r = run(tool + " --out " + out + " --sizes 1,0.5 --epochs 3 --validation-fraction 0.25");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const std::string csv = read_file(fs::path(out) / "curve.csv");
    EXPECT_EQ(count_lines(csv), 9u) << csv; // header + 2 sizes x 4 models
    std::istringstream lines(csv);
    std::string line;
    std::getline(lines, line);
    EXPECT_EQ(line.rfind("model,pipelines,schedules,best_epoch,validation_loss,", 0), 0u) << line;
    std::map<std::string, std::vector<std::pair<int, int>>> rows; // model: (pipelines, schedules)
    while (std::getline(lines, line)) {
        std::istringstream cells(line);
        std::string model, pipelines, schedules;
        std::getline(cells, model, ',');
        std::getline(cells, pipelines, ',');
        std::getline(cells, schedules, ',');
        rows[model].push_back({std::stoi(pipelines), std::stoi(schedules)});
    }
    ASSERT_EQ(rows.size(), 4u) << csv;
    for (const auto &[model, points] : rows) {
        ASSERT_EQ(points.size(), 2u) << model;
        EXPECT_LT(points[0].first, points[1].first) << model; // sizes sorted, nested prefixes
        EXPECT_LT(points[0].second, points[1].second) << model;
        EXPECT_EQ(points[1].second, points[1].first * 6) << model; // 6 ok schedules each
    }
    EXPECT_NE(r.out.find("validation: "), std::string::npos) << r.out;

    // Scored on held-out files too: their columns follow; files sharing a pipeline are refused.
    const std::string other = write_dataset(dir, "other.h5", 100);
    const auto h =
        run(tool + " --out " + out + "-h --sizes 1 --epochs 2 --validation-fraction 0.25 --heldout " + other);
    ASSERT_EQ(h.exit_code, 0) << h.out << h.err;
    EXPECT_NE(h.out.find("held out: 12 pipelines, 72 schedules"), std::string::npos) << h.out;
    EXPECT_NE(h.out.find("scored on the held-out files"), std::string::npos) << h.out;
    const std::string hcsv = read_file(fs::path(out + "-h") / "curve.csv");
    EXPECT_NE(hcsv.substr(0, hcsv.find('\n')).find(",heldout_pairwise_accuracy,"), std::string::npos) << hcsv;
    expect_user_error(
        run(tool + " --out " + out + "-h --sizes 1 --epochs 1 --validation-fraction 0.25 --heldout " + data),
        "is in --data too");

    expect_user_error(run(tool + " --out " + out + " --sizes 0,1"), "--sizes: '0' is not a fraction in (0, 1]");
    expect_user_error(run(tool + " --out " + out + " --validation-fraction 0"), "--validation-fraction");
}

// Every weights file in configs/weights/ loads in this build (a stale one must be retrained:
// configs/weights/README.md) and schedules pipelines that compute what compute_root computes.
TEST(CommittedWeights, LoadAndScheduleCorrectly) {
    int files = 0;
    for (const auto &entry : fs::directory_iterator(std::string(SCHEDFORGE_SOURCE_DIR) + "/configs/weights")) {
        if (entry.path().extension() != ".weights") continue;
        const std::string path = entry.path().string();
        SCOPED_TRACE(path);
        const Weights w = Weights::load(path);
        EXPECT_NE(w.origin.find("train-cost-model"), std::string::npos) << w.origin;
        for (const char *pipeline : {"1", "4"}) {
            const auto s = run(schedforge::testing::autoschedule(std::string("--pipeline ") + pipeline + " --config " +
                                                                 schedforge::testing::kSmallConfig +
                                                                 " --beam 8 --passes 2 --check --weights " + path));
            ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
            EXPECT_NE(s.out.find("check: the output matches compute_root's"), std::string::npos) << s.out;
        }
        files++;
    }
    EXPECT_GE(files, 5);
}

} // namespace
} // namespace schedforge::trainer
