#include "trainer/weights.h"

#include "common/build_info.h"
#include "common/errors.h"
#include "common/rng.h"
#include "common/text.h"
#include "common/wire.h"
#include "datasets/schema.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace schedforge::trainer {

namespace {

constexpr char kMagic[8] = {'S', 'F', 'W', 'E', 'I', 'G', 'H', 'T'};

uint64_t fnv1a(const char *data, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ uint8_t(data[i])) * 0x100000001b3ULL;
    return h;
}

std::string features_key(int version, int count) { return std::to_string(version) + " x " + std::to_string(count); }

// Header values must stay on one line.
std::string one_line(std::string s) {
    for (char &c : s) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    return s;
}

// Networks of earlier schedule feature versions: each added features and terms at the end only
// (versions 5 to 9, 11 to 13 and 16 to 19 none; 10, 14 and 15 a feature, no term), so their weights load widened, the
// new entries zero, and predict what they did (on features whose meaning may since have changed: retrain to follow
// them). Versions 1-3 were never trained with a correction bound; should a later version add terms, widening a bounded
// file (version 4 on) must also set the new terms' term_log_scale to log(kMinCoefficient), as from_coefficients does
// for a zero coefficient: a zero row gives a bounded multiplier of about 0.67, not 0, and the new terms would be priced
// at 0.67 ns per unit (held-out R² of v6 fell to -1.27 when this was tried).
struct LegacyNetwork {
    int schedule_feature_version, schedule_features, terms;
};
constexpr LegacyNetwork kLegacyNetworks[] = {
    {1, 39, 27},  // before bytes_read_past_cache
    {2, 40, 28},  // before bytes_read_from_memory
    {3, 41, 29},  // before library_calls and accumulator_bytes_spilled
    {4, 43, 31},  // the same shape: versions 5 to 9 added no feature, they changed meanings
    {5, 43, 31},  // before run-time divisions in library_calls
    {6, 43, 31},  // before library calls hoisted out of loops they do not depend on
    {7, 43, 31},  // before 64-bit divisions by constants in library_calls
    {8, 43, 31},  // before per-vector footprints counted call by call
    {9, 43, 31},  // before heap_realizations (term 23 counted every realization over 16 KiB)
    {10, 44, 31}, // before library calls on every lane of a guarded tail's vectors
    {11, 44, 31}, // before accumulators priced in L1 and by the FP pipes' latency
    {12, 44, 31}, // before consumers' loops one by one and the machine's caches in bytes_read_past_cache
    {13, 44, 31}, // before heap_bytes_refaulted (the page_faults term counted the first touch only)
    {14, 45, 31}, // before tlb_pages_rewalked and whole cache lines in the cache features
    {15, 46, 31}, // the same shape: versions 16 and 17 changed heap_bytes_refaulted's meaning
    {16, 46, 31}, // before glibc's arena simulated (heap_bytes_refaulted; the page_faults term's first touch)
    {17, 46, 31}, // before an update's writes were its left-hand side (a scan's step: one row)
    {18, 46, 31}, // before a parallel loop's tasks were shared among the threads' arenas
    {19, 46, 31}, // before each parallel task's blocks were sized by its own region
};
static_assert(kScheduleFeatures == 46 && kTerms == 31, "add the previous network to kLegacyNetworks");

TensorShape legacy_shape(TensorShape shape, const LegacyNetwork &legacy) {
    for (int &d : shape.dims) {
        if (d == kTerms) d = legacy.terms;
        if (d == kScheduleFeatures) d = legacy.schedule_features;
    }
    return shape;
}

// `values` of shape `from` in shape `to` (each dimension as large or larger), new entries zero.
std::vector<float> widened(const std::vector<float> &values, const TensorShape &from, const TensorShape &to) {
    std::vector<float> out(size_t(to.size()), 0.0f);
    for (int j = 0; j < from.dims[1]; j++) {
        for (int i = 0; i < from.dims[0]; i++) {
            out[size_t(i + j * to.dims[0])] = values[size_t(i + j * from.dims[0])];
        }
    }
    return out;
}

} // namespace

std::string network_signature(int terms, int schedule_features) {
    return "schedforge-cost-model head1=" + std::to_string(kHead1Channels) +
           " head2=" + std::to_string(kHead2Channels) + " terms=" + std::to_string(terms) +
           " pipeline=" + std::to_string(kPipelineFeatures) + " schedule=" + std::to_string(schedule_features);
}

Weights Weights::random(uint64_t seed) {
    Weights w;
    common::Rng rng(common::derive_seed(seed, 0x77656967687473ULL)); // "weights"
    for (int t = 0; t < kNumTensors; t++) {
        w.tensors[size_t(t)].resize(size_t(tensor_shapes()[size_t(t)].size()));
        if (Tensor(t) == Tensor::TermLogScale) continue; // zero: drawn last, so the others keep their draws
        for (float &v : w.tensors[size_t(t)]) v = float(rng.uniform01() - 0.5);
    }
    w.origin = "random initialization, uniform in [-0.5, 0.5], seed " + std::to_string(seed);
    return w;
}

void check_correction_bound_option(double bound, bool from_coefficients) {
    if (bound != 0 && !from_coefficients)
        throw UserError("--correction-bound bounds corrections to a manual model: give --from-coefficients");
    if (!valid_correction_bound(bound)) throw UserError("--correction-bound must be 0 (unbounded) or above 1");
}

Weights Weights::from_coefficients(const std::array<double, kTerms> &coefficients, uint64_t seed,
                                   const std::string &origin, double correction_bound) {
    Weights w = random(seed);
    w.correction_bound = correction_bound;
    std::fill(w[Tensor::Filter1].begin(), w[Tensor::Filter1].end(), 0.0f);
    std::fill(w[Tensor::Bias1].begin(), w[Tensor::Bias1].end(), 1.0f);
    for (int i = 0; i < kTerms; i++) {
        w[Tensor::TermLogScale][size_t(i)] = float(std::log(std::max(coefficients[size_t(i)], kMinCoefficient)));
    }
    w.origin = origin;
    return w;
}

std::string Weights::serialize() const {
    common::ByteWriter out;
    for (char c : kMagic) out.put(c);
    out.put<uint32_t>(kWeightsFormatVersion);
    std::ostringstream header;
    header << "network = " << network_signature() << "\n"
           << "pipeline_features = "
           << features_key(featurize::PipelineFeatures::version(), featurize::PipelineFeatures::num_features()) << "\n"
           << "schedule_features = "
           << features_key(featurize::ScheduleFeatures::version(), featurize::ScheduleFeatures::num_features()) << "\n"
           << "producer = " << common::producer() << "\n"
           << "commit = " << common::producer_commit() << "\n"
           << "created = " << datasets::utc_timestamp() << "\n"
           << "origin = " << one_line(origin) << "\n"
           << "compute_terms = " << (compute_per_op ? "per_op" : "per_point") << "\n"
           << "correction_bound = " << correction_bound << "\n";
    out.put_string(header.str());
    out.put<uint64_t>(kNumTensors);
    for (int t = 0; t < kNumTensors; t++) {
        const TensorShape &shape = tensor_shapes()[size_t(t)];
        out.put_string(shape.name);
        out.put<uint64_t>(uint64_t(shape.rank));
        for (int d = 0; d < shape.rank; d++) out.put<uint64_t>(uint64_t(shape.dims[size_t(d)]));
        out.put_vector(tensors[size_t(t)]);
    }
    std::string bytes = out.bytes();
    const uint64_t sum = fnv1a(bytes.data(), bytes.size());
    bytes.append(reinterpret_cast<const char *>(&sum), sizeof(sum));
    return bytes;
}

Weights Weights::deserialize(const std::string &bytes, const std::string &path) {
    auto fail = [&](const std::string &why) -> void { throw UserError("weights file " + path + ": " + why); };
    if (bytes.size() < sizeof(kMagic) + sizeof(uint64_t) || bytes.compare(0, sizeof(kMagic), kMagic, sizeof(kMagic)))
        fail("not a schedforge weights file");
    uint64_t stored_sum = 0;
    std::memcpy(&stored_sum, bytes.data() + bytes.size() - sizeof(stored_sum), sizeof(stored_sum));
    const std::string body = bytes.substr(0, bytes.size() - sizeof(stored_sum));
    common::ByteReader in(body);
    for (size_t i = 0; i < sizeof(kMagic); i++) in.get<char>();
    const uint32_t version = in.get<uint32_t>();
    if (version < 1 || version > uint32_t(kWeightsFormatVersion)) {
        fail("format version " + std::to_string(version) + ", this build reads versions 1 to " +
             std::to_string(kWeightsFormatVersion));
    }
    if (fnv1a(body.data(), body.size()) != stored_sum) fail("checksum mismatch (the file is truncated or corrupt)");
    const std::map<std::string, std::string> header = common::key_value_lines(in.get_string());
    auto value = [&](const std::string &key) {
        const auto it = header.find(key);
        if (it == header.end()) fail("header has no '" + key + "'");
        return it->second;
    };
    // Weights trained on earlier schedule features (kLegacyNetworks) load widened: the new
    // features' filter columns and the new terms' coefficients zero, head 2's filter scaled for
    // its wider fan-in, so that they predict exactly what they did.
    const LegacyNetwork *legacy = nullptr;
    for (const LegacyNetwork &l : kLegacyNetworks) {
        if (value("network") == network_signature(l.terms, l.schedule_features) &&
            value("schedule_features") == features_key(l.schedule_feature_version, l.schedule_features))
            legacy = &l;
    }
    if (!legacy && value("network") != network_signature())
        fail("network '" + value("network") + "', this build's is '" + network_signature() + "'");
    const std::string pf = features_key(featurize::PipelineFeatures::version(), kPipelineFeatures);
    const std::string sf = features_key(featurize::ScheduleFeatures::version(), kScheduleFeatures);
    if (value("pipeline_features") != pf) {
        fail("trained on pipeline features " + value("pipeline_features") + ", this build computes " + pf +
             " (retrain with train-cost-model)");
    }
    if (!legacy && value("schedule_features") != sf) {
        fail("trained on schedule features " + value("schedule_features") + ", this build computes " + sf +
             " (retrain with train-cost-model)");
    }
    Weights w;
    w.producer = value("producer");
    w.commit = value("commit");
    w.created = value("created");
    w.origin = value("origin");
    w.compute_per_op = false; // versions 1 and 2
    if (version >= 3) {
        const std::string compute = value("compute_terms");
        if (compute != "per_op" && compute != "per_point") fail("compute_terms is '" + compute + "'");
        w.compute_per_op = compute == "per_op";
    }
    if (version >= 4) {
        const std::string bound = value("correction_bound");
        char *end = nullptr;
        w.correction_bound = std::strtod(bound.c_str(), &end);
        if (bound.empty() || *end || !valid_correction_bound(w.correction_bound))
            fail("correction_bound is '" + bound + "' (0, or a number above 1)");
    }
    const int tensors = version == 1 ? kNumTensors - 1 : kNumTensors; // version 1: no term_log_scale
    if (in.get<uint64_t>() != uint64_t(tensors)) fail("wrong number of tensors");
    w[Tensor::TermLogScale].assign(size_t(kTerms), 0.0f);
    for (int t = 0; t < tensors; t++) {
        const TensorShape &shape = tensor_shapes()[size_t(t)];
        const std::string name = in.get_string();
        if (name != shape.name)
            fail("tensor " + std::to_string(t) + " is '" + name + "', expected '" + shape.name + "'");
        const TensorShape stored = legacy ? legacy_shape(shape, *legacy) : shape;
        const uint64_t rank = in.get<uint64_t>();
        bool same = in.ok() && rank == uint64_t(stored.rank);
        for (uint64_t d = 0; same && d < rank; d++) same = in.get<uint64_t>() == uint64_t(stored.dims[size_t(d)]);
        if (!same) fail("tensor '" + name + "' has another shape");
        w.tensors[size_t(t)] = in.get_vector<float>();
        if (int64_t(w.tensors[size_t(t)].size()) != stored.size()) fail("tensor '" + name + "' has the wrong size");
        if (legacy) w.tensors[size_t(t)] = widened(w.tensors[size_t(t)], stored, shape);
    }
    if (legacy) {
        for (float &v : w[Tensor::Head2Filter])
            v *= fan_in_scale(legacy->schedule_features) / fan_in_scale(kScheduleFeatures);
    }
    if (!in.ok() || !in.at_end()) fail("malformed");
    return w;
}

Weights Weights::load(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw UserError("cannot read weights file " + path);
    std::ostringstream bytes;
    bytes << f.rdbuf();
    return deserialize(bytes.str(), path);
}

void Weights::save(const std::string &path) const {
    const std::string partial = path + ".partial";
    const std::string bytes = serialize();
    {
        std::ofstream f(partial, std::ios::binary | std::ios::trunc);
        if (!f) throw UserError("cannot write weights file " + path);
        f.write(bytes.data(), std::streamsize(bytes.size()));
        f.flush();
        if (!f) {
            std::remove(partial.c_str());
            throw std::runtime_error("writing " + partial + " failed");
        }
    }
    if (std::rename(partial.c_str(), path.c_str()) != 0) {
        std::remove(partial.c_str());
        throw std::runtime_error("renaming " + partial + " to " + path + " failed");
    }
}

} // namespace schedforge::trainer
