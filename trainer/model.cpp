#include "trainer/model.h"

#include "schedforge_cost_model.h"
#include "schedforge_train_cost_model.h"

#include <HalideBuffer.h>

#include <array>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

namespace schedforge::trainer {

using Halide::Runtime::Buffer;

namespace {

std::vector<int> tensor_dims(const TensorShape &shape) {
    return std::vector<int>(shape.dims.begin(), shape.dims.begin() + shape.rank);
}

void check(int status, const char *what) {
    if (status != 0)
        throw std::runtime_error(std::string(what) + " failed with Halide error " + std::to_string(status));
}

// The network's per-pipeline and per-batch inputs as the pipelines index them.
struct InputViews {
    std::vector<float> transposed; // (state, feature, stage) with state innermost
    Buffer<float> pipeline_features, schedule_features, is_output;

    InputViews(const PipelineInput &p, const StateBatch &b) {
        const int S = p.num_stages, N = b.num_states, F = kScheduleFeatures;
        if (S < 1 || N < 1 || p.pipeline_features.size() != size_t(S) * kPipelineFeatures ||
            p.is_output.size() != size_t(S) || b.schedule_features.size() != size_t(N) * S * F) {
            throw std::invalid_argument("cost model: inconsistent feature sizes");
        }
        transposed.resize(b.schedule_features.size());
        for (int n = 0; n < N; n++) {
            for (int s = 0; s < S; s++) {
                const float *row = &b.schedule_features[(size_t(n) * S + s) * F];
                for (int f = 0; f < F; f++) transposed[(size_t(s) * F + f) * N + n] = row[f];
            }
        }
        pipeline_features =
            Buffer<float>(const_cast<float *>(p.pipeline_features.data()), std::vector<int>{kPipelineFeatures, S});
        schedule_features = Buffer<float>(transposed.data(), std::vector<int>{N, F, S});
        is_output = Buffer<float>(const_cast<float *>(p.is_output.data()), std::vector<int>{S});
    }
};

// Halide's runtime allocates every compute_root intermediate anew on each call. For a batch of
// states of a large pipeline they exceed glibc's mmap threshold, so each call mapped, faulted in
// and unmapped fresh pages: about half of inference time on local_laplacian. The pipelines'
// runtime (ours alone: libHalide's JIT has its own) keeps freed blocks instead, per thread, in
// power-of-two size classes.
class BlockCache {
public:
    static void *allocate(void *, size_t bytes) {
        int k = kMinClass;
        while ((size_t(1) << k) < bytes) k++;
        std::vector<char *> &free = cache().free_[size_t(k)];
        if (!free.empty()) {
            char *p = free.back();
            free.pop_back();
            return p;
        }
        // A header of one alignment unit in front records the class.
        char *base = static_cast<char *>(std::aligned_alloc(kAlign, (size_t(1) << k) + kAlign));
        if (!base) return nullptr; // Halide reports the failed allocation
        *reinterpret_cast<int *>(base) = k;
        return base + kAlign;
    }
    static void release(void *, void *p) {
        if (!p) return;
        char *block = static_cast<char *>(p);
        const int k = *reinterpret_cast<int *>(block - kAlign);
        std::vector<char *> &free = cache().free_[size_t(k)];
        if (free.size() < kMaxKept) {
            free.push_back(block);
        } else {
            std::free(block - kAlign);
        }
    }

private:
    static constexpr size_t kAlign = 128; // what Halide's own allocator guarantees
    static constexpr int kMinClass = 7, kClasses = 48;
    static constexpr size_t kMaxKept = 32; // per class: more than one call's intermediates of a size

    static BlockCache &cache() {
        thread_local BlockCache c;
        return c;
    }
    ~BlockCache() {
        for (auto &list : free_)
            for (char *p : list) std::free(p - kAlign);
    }
    std::array<std::vector<char *>, kClasses> free_;
};

void use_block_cache() {
    static std::once_flag once;
    std::call_once(once, [] {
        halide_set_custom_malloc(&BlockCache::allocate);
        halide_set_custom_free(&BlockCache::release);
    });
}

} // namespace

// Per tensor, Adam's state as the training pipeline indexes it: (..., k), k = 0 value, 1 first
// moment, 2 second moment; k is outermost, so the values are the first size() floats. Two copies,
// the pipeline reading one and writing the other.
struct Model::Buffers {
    std::array<std::array<std::vector<float>, 2>, kNumTensors> state;
    int current = 0;

    Buffer<float> values(int t) const {
        const TensorShape &shape = tensor_shapes()[size_t(t)];
        return Buffer<float>(const_cast<float *>(state[size_t(t)][size_t(current)].data()), tensor_dims(shape));
    }
    Buffer<float> full(int t, int copy) {
        std::vector<int> dims = tensor_dims(tensor_shapes()[size_t(t)]);
        dims.push_back(3);
        return Buffer<float>(state[size_t(t)][size_t(copy)].data(), dims);
    }
};

Model::Model(const Weights &weights) : buffers_(std::make_unique<Buffers>()), meta_(weights) {
    use_block_cache();
    for (int t = 0; t < kNumTensors; t++) {
        const size_t size = size_t(tensor_shapes()[size_t(t)].size());
        if (weights.tensors[size_t(t)].size() != size) throw std::invalid_argument("cost model: wrong tensor size");
        for (auto &copy : buffers_->state[size_t(t)]) copy.assign(3 * size, 0.0f);
        std::copy(weights.tensors[size_t(t)].begin(), weights.tensors[size_t(t)].end(),
                  buffers_->state[size_t(t)][0].begin());
    }
    for (auto &t : meta_.tensors) t.clear();
}

Model::~Model() = default;

void Model::predict(const PipelineInput &pipeline, const StateBatch &batch, std::vector<double> &costs) const {
    InputViews in(pipeline, batch);
    Buffer<float> out(batch.num_states);
    const Buffers &b = *buffers_;
    check(schedforge_cost_model(in.pipeline_features, in.schedule_features, in.is_output, pipeline.num_cores,
                                int(meta_.compute_per_op), float(meta_.correction_bound), b.values(0), b.values(1),
                                b.values(2), b.values(3), b.values(4), b.values(5), b.values(6), out),
          "cost model inference");
    costs.assign(size_t(batch.num_states), 0.0);
    for (int n = 0; n < batch.num_states; n++) costs[size_t(n)] = double(out(n));
}

float Model::train_step(const PipelineInput &pipeline, const TrainingBatch &batch, LossKind loss, float learning_rate,
                        std::vector<float> *predictions) {
    InputViews in(pipeline, batch.states);
    const int N = batch.states.num_states;
    if (batch.runtimes.size() != size_t(N) || batch.sample_weights.size() != size_t(N)) {
        throw std::invalid_argument("cost model: inconsistent batch sizes");
    }
    Buffer<float> runtimes(const_cast<float *>(batch.runtimes.data()), N);
    Buffer<float> weights(const_cast<float *>(batch.sample_weights.data()), N);
    Buffer<float> loss_out = Buffer<float>::make_scalar();
    Buffer<float> predicted(N);
    Buffers &b = *buffers_;
    const int cur = b.current, nxt = 1 - b.current;
    timestep_++;
    check(schedforge_train_cost_model(in.pipeline_features, in.schedule_features, in.is_output, pipeline.num_cores,
                                      int(meta_.compute_per_op), float(meta_.correction_bound), b.full(0, cur),
                                      b.full(1, cur), b.full(2, cur), b.full(3, cur), b.full(4, cur), b.full(5, cur),
                                      b.full(6, cur), runtimes, weights, batch.reference, int(loss), learning_rate,
                                      timestep_, loss_out, predicted, b.full(0, nxt), b.full(1, nxt), b.full(2, nxt),
                                      b.full(3, nxt), b.full(4, nxt), b.full(5, nxt), b.full(6, nxt)),
          "cost model training step");
    b.current = nxt;
    if (predictions) predictions->assign(predicted.data(), predicted.data() + N);
    return loss_out();
}

Weights Model::weights() const {
    Weights w = meta_;
    for (int t = 0; t < kNumTensors; t++) {
        const auto &s = buffers_->state[size_t(t)][size_t(buffers_->current)];
        w.tensors[size_t(t)].assign(s.begin(), s.begin() + tensor_shapes()[size_t(t)].size());
    }
    return w;
}

std::vector<float> Model::moment(Tensor t, int which) const {
    const auto &s = buffers_->state[size_t(t)][size_t(buffers_->current)];
    const size_t size = size_t(tensor_shapes()[size_t(t)].size());
    return std::vector<float>(s.begin() + long(which * size), s.begin() + long((which + 1) * size));
}

} // namespace schedforge::trainer
