// Training samples in the binary ".sample" format that Halide 14's adams2019 `retrain_cost_model`
// reads, so that bench-cost-model can time Halide's trainer on the same synthetic set as ours.
//
// One file = one benchmarked schedule of one pipeline; all values are 4 bytes, native-endian
// (little-endian on x86-64), no header, no padding:
//   for each stage s in [0, num_stages):
//       39 float   schedule features of s            (Halide ScheduleFeatures order, see below)
//        7 float   "types in use" mask of s           (read past and ignored by the trainer)
//      280 float   pipeline features of s, row-major [40 rows][7 scalar types]
//   1 float    runtime in milliseconds
//   1 int32    pipeline id
//   1 int32    schedule id
// i.e. 326 * num_stages + 3 words. The trainer infers num_stages from the file size, so a file
// whose length is not 326 * n + 3 words is dropped as "Truncated".
//
// How retrain_cost_model uses them (why the rules below exist):
//   - It reads file paths from stdin, whitespace-separated, and skips any not ending in ".sample".
//   - Samples are grouped by the pipeline id field alone (not by file name or directory). The
//     first file seen for an id supplies the pipeline features and the stage count for all of
//     them, so every schedule of a pipeline must share the same stages, in the same order, with
//     the same pipeline features; distinct pipelines need distinct ids.
//   - Within a pipeline, schedules are deduplicated by the bit pattern of their schedule
//     features: identical features merge into one sample (the fastest runtime is kept).
//   - A pipeline with fewer than 8 distinct schedules is never trained on.
//   - A schedule feature that is negative, NaN or above 1e14 drops the whole sample; runtimes
//     over 100 s (100000 ms) are dropped; runtimes must be > 0 (the loss divides by them).
//   - Stage 0 is treated by the model as the pipeline's output stage (its stores are costed
//     differently), so stages go consumers-first like Halide's FunctionDAG: the output Func
//     first, and for a Func with updates, the last update first.
//   - The schedule id is only echoed (best schedule report); the trainer never groups by it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace schedforge::bench {

// Halide 14 NetworkSize.h: head2_w schedule features, head1_w x head1_h pipeline features.
inline constexpr int kHalideScheduleFeatures = 39; // head2_w
inline constexpr int kHalidePipelineRows = 40;     // head1_w: 24 op kinds + 4 access classes x 4 kinds
inline constexpr int kHalideScalarTypes = 7;       // head1_h: bool, u8, u16, u32, u64, f32, f64
inline constexpr int kHalidePipelineFeatures = kHalidePipelineRows * kHalideScalarTypes; // 280
// Per stage in the file: the 280 above are preceded by a 7-word type mask (Halide's
// PipelineFeatures struct starts with it), hence (head1_w + 1) * head1_h pipeline words.
inline constexpr int kHalideWordsPerStage =
    kHalideScheduleFeatures + (kHalidePipelineRows + 1) * kHalideScalarTypes; // 326
inline constexpr double kHalideMaxRuntimeMs = 100000.0;
inline constexpr double kHalideMaxScheduleFeature = 1e14;
inline constexpr int kHalideMinSchedulesPerPipeline = 8;

// Writes one sample to `path` (which should end in ".sample", or the trainer skips it).
//   schedule_features: num_stages * 39 floats, stage-major (stage s at [s * 39, s * 39 + 39)).
//   pipeline_features: num_stages * 280 floats, stage-major, each stage row-major [40][7].
//   runtime_seconds:   measured runtime; stored in milliseconds as the trainer expects.
// Returns false, with a reason in *error if given, on size mismatch, on a value the trainer would
// reject (so the problem shows here rather than as a silently dropped sample), or on I/O failure.
inline bool write_halide_sample(const std::string &path, int num_stages, const std::vector<float> &schedule_features,
                                const std::vector<float> &pipeline_features, double runtime_seconds,
                                int32_t pipeline_id, int32_t schedule_id, std::string *error = nullptr) {
    auto fail = [&](const std::string &why) {
        if (error) *error = why;
        return false;
    };
    if (num_stages <= 0) return fail("num_stages must be positive");
    const size_t n = size_t(num_stages);
    if (schedule_features.size() != n * kHalideScheduleFeatures)
        return fail("schedule_features must hold num_stages * 39 floats");
    if (pipeline_features.size() != n * kHalidePipelineFeatures)
        return fail("pipeline_features must hold num_stages * 280 floats");
    for (float f : schedule_features)
        if (!(f >= 0.0f && f <= kHalideMaxScheduleFeature)) // also catches NaN
            return fail("schedule feature negative, NaN or above 1e14: the trainer would drop the sample");
    for (float f : pipeline_features)
        if (!(f >= 0.0f) || std::isinf(f)) return fail("pipeline feature negative, NaN or infinite");
    const double runtime_ms = runtime_seconds * 1000.0;
    if (!(runtime_ms > 0.0 && runtime_ms <= kHalideMaxRuntimeMs)) return fail("runtime must be in (0, 100] seconds");

    std::vector<float> words;
    words.reserve(n * kHalideWordsPerStage + 1);
    for (size_t s = 0; s < n; s++) {
        const float *sched = schedule_features.data() + s * kHalideScheduleFeatures;
        const float *pipe = pipeline_features.data() + s * kHalidePipelineFeatures;
        words.insert(words.end(), sched, sched + kHalideScheduleFeatures);
        // The trainer skips the mask; write a 0/1 per-type flag (what the mask means) rather
        // than zeros so tools that dump features see which types the stage uses.
        for (int t = 0; t < kHalideScalarTypes; t++) {
            bool used = false;
            for (int r = 0; r < kHalidePipelineRows && !used; r++) used = pipe[r * kHalideScalarTypes + t] != 0.0f;
            words.push_back(used ? 1.0f : 0.0f);
        }
        words.insert(words.end(), pipe, pipe + kHalidePipelineFeatures);
    }
    words.push_back(float(runtime_ms));
    // The ids are raw int32s in float-sized slots, not converted values; written as ints so no
    // float copy can touch a bit pattern that happens to be a NaN.
    const int32_t ids[2] = {pipeline_id, schedule_id};

    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (!f) return fail("cannot open " + path);
    bool ok = std::fwrite(words.data(), sizeof(float), words.size(), f) == words.size();
    ok = std::fwrite(ids, sizeof(int32_t), 2, f) == 2 && ok;
    ok = std::fclose(f) == 0 && ok;
    if (!ok) return fail("short write to " + path);
    return true;
}

} // namespace schedforge::bench
