#include "synthesize.h"

#include "common/rng.h"
#include "expr_eval.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

namespace schedforge::gen {

namespace {

using K = StageKind;
using T = ScalarType;

// Largest magnitude a value of type t can have (floats: treated as unbounded).
double max_abs(T t) {
    switch (t) {
    case T::Bool: return 1;
    case T::UInt8: return 255;
    case T::UInt16: return 65535;
    case T::UInt32: return 4294967295.0;
    case T::Int8: return 128;
    case T::Int16: return 32768;
    case T::Int32: return 2147483648.0;
    case T::Float32: return INFINITY;
    }
    return INFINITY;
}

std::string ints_to_param(const std::vector<int64_t> &values) {
    std::string s;
    for (size_t i = 0; i < values.size(); i++) s += (i ? "," : "") + std::to_string(values[i]);
    return s;
}

// The attempts one emission gets before the synthesizer falls back to a plain pointwise stage.
constexpr int kMaxFailedAttempts = 24;

class Synthesizer {
public:
    Synthesizer(const GeneratorConfig &config, uint64_t seed, int64_t stage_count)
        : cfg_(config), rng_(common::derive_seed(seed, 0x5eed)) {
        spec_.seed = seed;
        stage_range_ = config.stages;
        if (stage_count > 0) stage_range_ = IntRange{stage_count, stage_count};
    }

    PipelineSpec run() {
        spec_.dnn = rng_.chance(cfg_.dnn_fraction);
        spec_.dims = spec_.dnn ? 4 : 3;
        mix_ = spec_.dnn ? &cfg_.dnn : &cfg_.imaging;
        make_inputs();

        const int64_t target = rng_.uniform_int(stage_range_.min, stage_range_.max);
        int failures = 0;
        while (stages() + plan_cost() < target) {
            const size_t snapshot = spec_.nodes.size();
            const bool fallback = failures >= kMaxFailedAttempts;
            const bool ok = fallback ? emit_pointwise(/*unary_on_sink=*/true) : emit(pick_kind());
            if (ok && new_nodes_fit(snapshot) && stages() + plan_cost() <= stage_range_.max) {
                failures = 0;
                continue;
            }
            spec_.nodes.resize(snapshot);
            if (fallback) break; // not even a pointwise stage fits: stop growing
            failures++;
        }
        merge_sinks();
        return std::move(spec_);
    }

private:
    // ---- bookkeeping -------------------------------------------------------------------------

    int64_t stages() const { return spec_.num_stages(); }

    // Alignment stages are not checked where they are made: check everything an emission added.
    bool new_nodes_fit(size_t first) const {
        for (size_t i = first; i < spec_.nodes.size(); i++) {
            const Node &n = spec_.nodes[i];
            if (n.kind == K::Input) continue; // weights are not stages
            if (n.elements() > cfg_.elements.max || n.elements() < cfg_.elements.min) return false;
        }
        return true;
    }

    bool is_image_stage(int i) const {
        const Node &n = spec_.nodes[size_t(i)];
        return n.kind != K::Input && n.image;
    }

    // Image stages nothing reads yet, oldest first.
    std::vector<int> sinks() const {
        std::vector<bool> consumed(spec_.nodes.size(), false);
        for (const Node &n : spec_.nodes) {
            for (int p : n.producers) consumed[size_t(p)] = true;
        }
        std::vector<int> result;
        for (size_t i = 0; i < spec_.nodes.size(); i++) {
            if (!consumed[i] && is_image_stage(int(i))) result.push_back(int(i));
        }
        return result;
    }

    const Node &node(int i) const { return spec_.nodes[size_t(i)]; }
    int64_t width(int i) const { return node(i).extents[0]; }
    int64_t height(int i) const { return node(i).extents[1]; }
    int64_t channels(int i) const { return node(i).extents[2]; }

    int add(Node n) {
        for ([[maybe_unused]] int p : n.producers) {
            assert(p >= 0 && size_t(p) < spec_.nodes.size() && "producers come before consumers");
        }
        spec_.nodes.push_back(std::move(n));
        return int(spec_.nodes.size()) - 1;
    }

    // An image node shaped like the pipeline (batch dimension included for DNN pipelines).
    Node image(K kind, T type, int64_t w, int64_t h, int64_t c, Ratio rx, Ratio ry, std::vector<int> producers) const {
        Node n;
        n.kind = kind;
        n.type = type;
        n.extents = {std::max<int64_t>(1, w), std::max<int64_t>(1, h), std::max<int64_t>(1, c)};
        if (spec_.dims == 4) n.extents.push_back(batch_);
        n.res_x = rx;
        n.res_y = ry;
        n.producers = std::move(producers);
        return n;
    }

    // Same shape as producer p, new kind and type.
    Node like(K kind, T type, int p, std::vector<int> producers) const {
        const Node &src = node(p);
        return image(kind, type, width(p), height(p), channels(p), src.res_x, src.res_y, std::move(producers));
    }

    bool fits(const Node &n, int64_t taps = 1) const {
        const int64_t e = n.elements();
        return e >= cfg_.elements.min && e <= cfg_.elements.max && double(e) * double(taps) <= double(cfg_.max_work);
    }

    // ---- random choices ----------------------------------------------------------------------

    K pick_kind() {
        std::vector<double> w(mix_->kind_weights.begin(), mix_->kind_weights.end());
        return K(rng_.weighted_index(w));
    }

    T pick_type(bool allow_bool) {
        std::vector<double> w(mix_->type_weights.begin(), mix_->type_weights.end());
        if (!allow_bool) w[int(T::Bool)] = 0;
        return T(rng_.weighted_index(w));
    }

    int64_t pick_factor() { return rng_.pick(cfg_.resample_factors); }

    // Mostly an unconsumed stage (the newest more often), sometimes any earlier image stage.
    int pick_producer() {
        const std::vector<int> s = sinks();
        if (!s.empty() && rng_.chance(0.75)) {
            return rng_.chance(0.5) ? s.back() : rng_.pick(s);
        }
        std::vector<int> all;
        for (size_t i = 0; i < spec_.nodes.size(); i++) {
            if (is_image_stage(int(i))) all.push_back(int(i));
        }
        return rng_.pick(all);
    }

    // The type to accumulate a weighted sum of values of type `in` in, when the weights'
    // absolute sum is at most `gain`: widen as integer code does (u8 sums in u16 or i32, ...),
    // fall back to wrapping uint32 where even int32 could overflow.
    T accumulator(T in, double gain) {
        if (is_float(in)) return T::Float32;
        const double mag = max_abs(in) * gain;
        if (mag < 32767 && rng_.chance(0.25)) return T::Int16;
        if (mag < 65535 && !is_signed_int(in) && rng_.chance(0.5)) return T::UInt16;
        if (mag < 2147483647.0) return T::Int32;
        return T::UInt32;
    }

    // Weights type for a conv / channel_mix / matmul accumulating in `acc`.
    static T weight_type(T acc) {
        if (acc == T::Float32) return T::Float32;
        return is_signed_int(acc) ? T::Int8 : T::UInt8;
    }

    int add_weights(T type, std::vector<int64_t> extents) {
        Node w;
        w.kind = K::Input;
        w.type = type;
        w.extents = std::move(extents);
        w.image = false;
        w.params["role"] = "weights";
        return add(std::move(w));
    }

    // ---- inputs ------------------------------------------------------------------------------

    void make_inputs() {
        batch_ = spec_.dnn ? rng_.uniform_int(cfg_.batch.min, cfg_.batch.max) : 1;
        int64_t w = rng_.uniform_int(cfg_.width.min, cfg_.width.max);
        int64_t h = rng_.uniform_int(cfg_.height.min, cfg_.height.max);
        std::vector<int64_t> channels(size_t(rng_.uniform_int(cfg_.input_count.min, cfg_.input_count.max)));
        int64_t most_channels = 1;
        for (int64_t &c : channels) {
            c = rng_.uniform_int(cfg_.channels.min, cfg_.channels.max);
            most_channels = std::max(most_channels, c);
        }
        // Inputs share width and height (same units); shrink them until every input fits.
        while (w * h * most_channels * batch_ > cfg_.elements.max && (w > 1 || h > 1)) {
            if (w >= h)
                w = std::max<int64_t>(1, w / 2);
            else
                h = std::max<int64_t>(1, h / 2);
        }
        static const char *modes[] = {"repeat_edge", "constant_exterior", "mirror_image", "mirror_interior"};
        for (size_t i = 0; i < channels.size(); i++) {
            const size_t snapshot = spec_.nodes.size();
            Node in = image(K::Input, pick_type(false), w, h, channels[i], Ratio{}, Ratio{}, {});
            in.params["role"] = "image";
            const int in_index = add(std::move(in));
            Node b = like(K::Boundary, node(in_index).type, in_index, {in_index});
            b.params["mode"] = modes[rng_.uniform_int(0, 3)];
            add(std::move(b));
            if (i > 0 && stages() + plan_cost() > stage_range_.max) {
                spec_.nodes.resize(snapshot); // merging this input would overshoot the stage range
                break;
            }
        }
    }

    // ---- alignment ---------------------------------------------------------------------------

    // Stages needed to bring sink s to target's resolution and channel count.
    int align_cost(int s, int target) const {
        const Ratio rx = node(target).res_x / node(s).res_x;
        const Ratio ry = node(target).res_y / node(s).res_y;
        int cost = 0;
        if (rx.den > 1 || ry.den > 1) cost++; // downsample
        if (rx.num > 1 || ry.num > 1) cost++; // upsample
        if (channels(s) != channels(target)) cost++;
        return cost;
    }

    // Stages the final merge will add: one pointwise merge per extra sink plus its alignment,
    // plus a cast if the single output would be bool.
    int64_t plan_cost() const {
        const std::vector<int> s = sinks();
        if (s.empty()) return 0;
        int64_t cost = 0;
        for (size_t i = 1; i < s.size(); i++) cost += 1 + align_cost(s[i], s[0]);
        if (s.size() == 1 && node(s[0]).type == T::Bool) cost++;
        return cost;
    }

    // s resampled by integer factors: upsampling multiplies extents and resolution, downsampling
    // divides them.
    Node resample(K kind, int s, int64_t fx, int64_t fy) {
        const Node &src = node(s);
        const bool up = kind == K::Upsample;
        Node n = up ? image(kind, src.type, width(s) * fx, height(s) * fy, channels(s), src.res_x * Ratio{fx, 1},
                            src.res_y * Ratio{fy, 1}, {s})
                    : image(kind, src.type, width(s) / fx, height(s) / fy, channels(s), src.res_x / Ratio{fx, 1},
                            src.res_y / Ratio{fy, 1}, {s});
        n.params["fx"] = std::to_string(fx);
        n.params["fy"] = std::to_string(fy);
        n.params["mode"] = up ? (rng_.chance(0.5) ? "linear" : "nearest") : (rng_.chance(0.5) ? "box" : "nearest");
        return n;
    }

    int align_resolution(int s, int target) {
        const Ratio rx = node(target).res_x / node(s).res_x;
        const Ratio ry = node(target).res_y / node(s).res_y;
        const int64_t target_w = width(target), target_h = height(target);
        const bool down = rx.den > 1 || ry.den > 1, up = rx.num > 1 || ry.num > 1;
        // Downsampling first keeps the intermediate small, unless that takes it below elements.min.
        const bool up_first =
            down && up && (width(s) / rx.den) * (height(s) / ry.den) * channels(s) * batch_ < cfg_.elements.min;
        auto step = [&](K kind) {
            const bool is_up = kind == K::Upsample;
            s = add(resample(kind, s, is_up ? rx.num : rx.den, is_up ? ry.num : ry.den));
        };
        if (up_first) {
            step(K::Upsample);
            step(K::Downsample);
        } else {
            if (down) step(K::Downsample);
            if (up) step(K::Upsample);
        }
        // Extents are estimates: after rounding, take the target's exactly.
        spec_.nodes[size_t(s)].extents[0] = target_w;
        spec_.nodes[size_t(s)].extents[1] = target_h;
        return s;
    }

    int align_channels(int s, int64_t want) {
        const int64_t have = channels(s);
        if (have == want) return s;
        if (have > want || have == 1) {
            // Slice the first channels, or broadcast a single channel (step 0).
            Node n = like(K::Slice, node(s).type, s, {s});
            n.extents[2] = want;
            n.params["offset"] = std::to_string(have > want ? rng_.uniform_int(0, have - want) : 0);
            n.params["step"] = have == 1 ? "0" : "1";
            return add(std::move(n));
        }
        return add_channel_mix(s, want);
    }

    // Fewer channels first and more channels last, so that no alignment stage is larger than
    // the target (which already fits the element bound).
    int align(int s, int target) {
        const bool reduce_first = channels(s) > channels(target);
        if (reduce_first) s = align_channels(s, channels(target));
        s = align_resolution(s, target);
        return reduce_first ? s : align_channels(s, channels(target));
    }

    void merge_sinks() {
        std::vector<int> s = sinks();
        assert(!s.empty() && "a pipeline always has a sink");
        int acc = s[0];
        for (size_t i = 1; i < s.size(); i++) {
            const int other = align(s[i], acc);
            acc = add_pointwise({acc, other}, pick_type(false));
        }
        if (node(acc).type == T::Bool) acc = add_pointwise({acc}, pick_type(false));
        spec_.output = acc;
    }

    // ---- expression trees --------------------------------------------------------------------

    struct ExprBuilder {
        Synthesizer &syn;
        std::vector<ExprNode> nodes;
        std::vector<T> slot_types;
        std::vector<bool> used;

        int push(ExprOp op, T type, std::vector<int> args, int64_t value = 0) {
            nodes.push_back(ExprNode{op, type, value, std::move(args)});
            return int(nodes.size()) - 1;
        }

        int cast_to(int e, T type) { return nodes[size_t(e)].type == type ? e : push(ExprOp::Cast, type, {e}); }

        int leaf(T type) {
            common::Rng &rng = syn.rng_;
            // Constants are never zero and never bool, so no operand can annihilate the other
            // (x * 0, b && false) and make Halide drop a producer the spec says is read.
            if (type != T::Bool && rng.chance(0.15)) {
                int64_t v = rng.uniform_int(1, 16);
                if (!is_unsigned_int(type) && rng.chance(0.5)) v = -v;
                return push(ExprOp::Const, type, {}, v);
            }
            // Prefer a slot not read yet, so every producer is used.
            std::vector<int> unused;
            for (size_t i = 0; i < used.size(); i++) {
                if (!used[i]) unused.push_back(int(i));
            }
            const int slot = unused.empty() ? int(rng.uniform_int(0, int64_t(used.size()) - 1)) : rng.pick(unused);
            used[size_t(slot)] = true;
            return cast_to(push(ExprOp::Load, slot_types[size_t(slot)], {}, slot), type);
        }

        std::string text(int e) const {
            const ExprNode &n = nodes[size_t(e)];
            std::string s =
                std::string(expr_op_name(n.op)) + ":" + type_short_name(n.type) + ":" + std::to_string(n.value);
            for (int a : n.args) s += "(" + text(a) + ")";
            return s;
        }

        // Operands of one op that differ from `first` (a - a, absd(a, a), a == a, select(c, a, a)
        // simplify to constants or drop an operand, and with it maybe a producer).
        int distinct(T type, int depth, int first) {
            for (int attempt = 0; attempt < 4; attempt++) {
                const int e = gen(type, depth);
                if (text(e) != text(first)) return e;
            }
            return -1;
        }

        int gen(T type, int depth) {
            common::Rng &rng = syn.rng_;
            if (depth <= 0 || rng.chance(0.2)) return leaf(type);
            if (type == T::Bool) {
                switch (rng.uniform_int(0, 3)) {
                case 0: return push(ExprOp::Not, T::Bool, {gen(T::Bool, depth - 1)});
                case 1: {
                    const ExprOp op = rng.chance(0.5) ? ExprOp::And : ExprOp::Or;
                    return binary(op, T::Bool, T::Bool, depth);
                }
                default: {
                    static const ExprOp cmp[] = {ExprOp::Lt, ExprOp::Le, ExprOp::Eq, ExprOp::Ne};
                    const T operand = rng.chance(0.6)
                                          ? slot_types[size_t(rng.uniform_int(0, int64_t(slot_types.size()) - 1))]
                                          : syn.pick_type(false);
                    const T op_type = operand == T::Bool ? T::UInt8 : operand;
                    const ExprOp op = cmp[rng.uniform_int(0, 3)]; // drawn before the operands
                    return binary(op, T::Bool, op_type, depth);
                }
                }
            }
            std::vector<ExprOp> ops = {ExprOp::Add, ExprOp::Sub,     ExprOp::Mul,    ExprOp::Div,  ExprOp::Min,
                                       ExprOp::Max, ExprOp::AbsDiff, ExprOp::Select, ExprOp::Cast, ExprOp::Add};
            if (!is_unsigned_int(type)) ops.push_back(ExprOp::Abs);
            if (is_float(type)) {
                for (ExprOp op : {ExprOp::Exp, ExprOp::Log, ExprOp::Sqrt, ExprOp::Sin, ExprOp::Tanh}) ops.push_back(op);
            }
            const ExprOp op = rng.pick(ops);
            switch (op) {
            case ExprOp::Div: {
                const int64_t divisor = rng.uniform_int(2, 7); // drawn before the operands
                return binary(op, type, type, depth, divisor);
            }
            case ExprOp::Select: {
                const int cond = gen(T::Bool, depth - 1);
                const int a = gen(type, depth - 1);
                const int b = distinct(type, depth - 1, a);
                return b < 0 ? a : push(op, type, {cond, a, b});
            }
            case ExprOp::Cast: {
                T from = syn.pick_type(true);
                if (from == type) from = is_float(type) ? T::Int16 : T::Float32;
                return push(op, type, {gen(from, depth - 1)});
            }
            case ExprOp::Abs:
            case ExprOp::Exp:
            case ExprOp::Log:
            case ExprOp::Sqrt:
            case ExprOp::Sin:
            case ExprOp::Tanh: return push(op, type, {gen(type, depth - 1)});
            default: return binary(op, type, type, depth);
            }
        }

        // op(a, b) with b distinct from a; just a when no distinct operand comes up.
        int binary(ExprOp op, T type, T operand_type, int depth, int64_t value = 0) {
            const int a = gen(operand_type, depth - 1);
            const int b = distinct(operand_type, depth - 1, a);
            return b < 0 ? cast_to(a, type) : push(op, type, {a, b}, value);
        }
    };

    std::vector<ExprNode> random_expr(const std::vector<T> &slot_types, T type) {
        constexpr int kAttempts = 8;
        for (int attempt = 0; attempt < kAttempts; attempt++) {
            ExprBuilder b{*this, {}, slot_types, std::vector<bool>(slot_types.size(), false)};
            int root = b.gen(type, int(rng_.uniform_int(cfg_.expr_depth.min, cfg_.expr_depth.max)));
            for (size_t slot = 0; slot < slot_types.size(); slot++) {
                if (b.used[slot]) continue;
                const int load = b.cast_to(b.push(ExprOp::Load, slot_types[slot], {}, int64_t(slot)), type);
                root = b.push(type == T::Bool ? ExprOp::Or : ExprOp::Add, type, {root, load});
            }
            // Reject trees where some producer cannot change the result: Halide would drop it.
            if (every_slot_matters(b.nodes, slot_types, rng_)) return std::move(b.nodes);
        }
        // Fallback: the slots combined directly, each converted to the result type.
        ExprBuilder b{*this, {}, slot_types, std::vector<bool>(slot_types.size(), false)};
        int root = -1;
        for (size_t slot = 0; slot < slot_types.size(); slot++) {
            const int load = b.cast_to(b.push(ExprOp::Load, slot_types[slot], {}, int64_t(slot)), type);
            root = root < 0 ? load : b.push(type == T::Bool ? ExprOp::Or : ExprOp::Add, type, {root, load});
        }
        return std::move(b.nodes);
    }

    // ---- emitters ----------------------------------------------------------------------------

    // Pointwise over `producers` (already aligned: same shape as the first).
    int add_pointwise(std::vector<int> producers, T type) {
        std::vector<T> slot_types;
        slot_types.reserve(producers.size());
        for (int p : producers) slot_types.push_back(node(p).type);
        Node n = like(K::Pointwise, type, producers[0], producers);
        n.expr = random_expr(slot_types, type);
        return add(std::move(n));
    }

    int add_channel_mix(int p, int64_t out_channels) {
        const T acc = accumulator(node(p).type, 8.0 * double(channels(p)));
        const int w = add_weights(weight_type(acc), {channels(p), out_channels});
        Node n = like(K::ChannelMix, acc, p, {p, w});
        n.extents[2] = out_channels;
        return add(std::move(n));
    }

    bool emit(K kind) {
        switch (kind) {
        case K::Pointwise: return emit_pointwise(false);
        case K::Stencil: return emit_stencil();
        case K::Conv: return emit_conv();
        case K::ChannelMix: return emit_channel_mix();
        case K::Pool: return emit_pool();
        case K::Activation: return emit_activation();
        case K::Pad: return emit_pad();
        case K::Upsample: return emit_resample(K::Upsample);
        case K::Downsample: return emit_resample(K::Downsample);
        case K::Matmul: return emit_matmul();
        case K::Scan: return emit_scan();
        case K::Histogram: return emit_histogram();
        case K::Lut: return emit_lut();
        case K::Gather: return emit_gather();
        case K::Transpose: return emit_transpose();
        case K::Concat: return emit_concat();
        case K::Slice: return emit_slice();
        default: assert(false && "not a vocabulary kind"); return false;
        }
    }

    bool emit_pointwise(bool unary_on_sink) {
        int first;
        int64_t fan_in = 1;
        if (unary_on_sink) {
            first = sinks().back();
        } else {
            first = pick_producer();
            fan_in = rng_.uniform_int(1, std::min<int64_t>(cfg_.max_fan_in, 3));
        }
        std::vector<int> producers = {first};
        for (int64_t i = 1; i < fan_in; i++) {
            // Distinct producers only: f(a, a) invites a - a, which Halide simplifies away.
            const int p = align(pick_producer(), first);
            if (std::find(producers.begin(), producers.end(), p) == producers.end()) producers.push_back(p);
        }
        const int n = add_pointwise(producers, pick_type(true));
        return unary_on_sink || fits(node(n));
    }

    bool emit_stencil() {
        const int p = pick_producer();
        const T in = node(p).type == T::Bool ? T::UInt8 : node(p).type;
        static const char *shapes[] = {"x", "y", "2d", "separable"};
        static const char *variants[] = {"unrolled", "rdom", "sum"};
        const std::string shape = shapes[rng_.uniform_int(0, 3)];
        const std::string variant = variants[rng_.uniform_int(0, 2)];
        const int64_t radius = rng_.uniform_int(1, 3);
        const int64_t taps_1d = 2 * radius + 1;
        // Weights: explicit for unrolled, a tent for rdom, a box for sum.
        std::vector<int64_t> weights;
        for (int64_t i = 0; i < taps_1d; i++) {
            if (variant == "unrolled") {
                weights.push_back(is_signed_int(in) || is_float(in) ? rng_.uniform_int(-2, 4) : rng_.uniform_int(1, 4));
            } else if (variant == "rdom") {
                weights.push_back(radius + 1 - std::abs(i - radius));
            } else {
                weights.push_back(1);
            }
        }
        double gain_1d = 0, sum_1d = 0;
        for (int64_t w : weights) gain_1d += double(std::abs(w)), sum_1d += double(w);
        const bool two_d = shape == "2d";
        const int64_t taps = two_d ? taps_1d * taps_1d : taps_1d;

        auto make = [&](int src, T src_type, const std::string &axis, int64_t stage_taps, double gain, bool last,
                        double norm) {
            const T acc = accumulator(src_type, gain);
            // rdom stages are update Funcs: their type is the accumulator. Others may normalize
            // back to the original type (integer rounding division, saturating).
            T out = acc;
            int64_t divisor = 1;
            if (last && variant != "rdom" && rng_.chance(0.5)) {
                out = in;
                divisor = std::max<int64_t>(1, int64_t(norm));
            }
            Node n = like(K::Stencil, out, src, {src});
            n.params["axis"] = axis;
            n.params["variant"] = variant;
            n.params["radius"] = std::to_string(radius);
            n.params["acc"] = type_name(acc);
            n.params["divisor"] = std::to_string(divisor);
            if (variant == "unrolled") n.params["weights"] = ints_to_param(weights);
            const int index = add(std::move(n));
            return fits(node(index), stage_taps) ? index : -1;
        };

        if (shape != "separable") {
            const double gain = two_d ? gain_1d * gain_1d : gain_1d;
            const double norm = two_d ? sum_1d * sum_1d : sum_1d;
            return make(p, in, shape, taps, gain, true, norm) >= 0;
        }
        const int first = make(p, in, "x", taps_1d, gain_1d, false, 1);
        if (first < 0) return false;
        // The second pass sums first-pass values: its magnitude bound is in's times both gains.
        return make(first, in, "y", taps_1d, gain_1d * gain_1d, true, sum_1d * sum_1d) >= 0;
    }

    bool emit_conv() {
        const int p = pick_producer();
        const int64_t k = rng_.chance(0.7) ? 3 : 5;
        const int64_t stride = rng_.chance(0.3) ? 2 : 1;
        const int64_t co = rng_.uniform_int(cfg_.dnn_channels.min, cfg_.dnn_channels.max);
        const int64_t taps = k * k * channels(p);
        const T acc = accumulator(node(p).type == T::Bool ? T::UInt8 : node(p).type, 128.0 * double(taps));
        const int w = add_weights(weight_type(acc), {k, k, channels(p), co});
        const Node &src = node(p);
        Node n = image(K::Conv, acc, width(p) / stride, height(p) / stride, co, src.res_x / Ratio{stride, 1},
                       src.res_y / Ratio{stride, 1}, {p, w});
        n.params["kernel"] = std::to_string(k);
        n.params["stride"] = std::to_string(stride);
        return fits(node(add(std::move(n))), taps);
    }

    bool emit_channel_mix() {
        const int p = pick_producer();
        const int64_t co = rng_.uniform_int(cfg_.dnn_channels.min, cfg_.dnn_channels.max);
        return fits(node(add_channel_mix(p, co)), channels(p));
    }

    bool emit_pool() {
        const int p = pick_producer();
        if (node(p).type == T::Bool) return false;
        const int64_t k = rng_.uniform_int(2, 3);
        const int64_t stride = rng_.chance(0.7) ? k : 1;
        const bool avg = rng_.chance(0.5);
        const Node &src = node(p);
        Node n = image(K::Pool, src.type, width(p) / stride, height(p) / stride, channels(p),
                       src.res_x / Ratio{stride, 1}, src.res_y / Ratio{stride, 1}, {p});
        n.params["op"] = avg ? "avg" : "max";
        n.params["window"] = std::to_string(k);
        n.params["stride"] = std::to_string(stride);
        if (avg) n.params["acc"] = type_name(accumulator(src.type, double(k * k)));
        return fits(node(add(std::move(n))), k * k);
    }

    bool emit_activation() {
        const int p = pick_producer();
        const T in = node(p).type;
        if (in == T::Bool) return false;
        static const char *fns[] = {"relu", "tanh", "sigmoid"};
        const std::string fn = fns[rng_.uniform_int(0, 2)];
        // Natural result type: relu keeps the type, tanh/sigmoid compute in float.
        T out = fn == "relu" ? in : T::Float32;
        if (rng_.chance(0.5)) {
            // Downcast (quantize) to a narrower type.
            if (is_float(out))
                out = fn == "sigmoid" ? T::UInt8 : rng_.chance(0.5) ? T::Int8 : T::UInt8;
            else if (type_bits(out) > 8)
                out = rng_.pick(std::vector<T>{T::UInt8, T::Int8, type_bits(out) > 16 ? T::Int16 : T::UInt8});
        }
        Node n = like(K::Activation, out, p, {p});
        n.params["fn"] = fn;
        return fits(node(add(std::move(n))));
    }

    bool emit_pad() {
        const int p = pick_producer();
        static const char *modes[] = {"constant_exterior", "repeat_edge", "mirror_image"};
        Node n = like(K::Pad, node(p).type, p, {p});
        n.params["mode"] = modes[rng_.uniform_int(0, 2)];
        return fits(node(add(std::move(n))));
    }

    bool emit_resample(K kind) {
        const int p = pick_producer();
        const int64_t fx = rng_.chance(0.85) ? pick_factor() : 1;
        const int64_t fy = rng_.chance(0.85) || fx == 1 ? pick_factor() : 1;
        if (kind == K::Downsample && (width(p) < fx || height(p) < fy)) return false;
        return fits(node(add(resample(kind, p, fx, fy))), fx * fy);
    }

    bool emit_matmul() {
        const int a = pick_producer();
        const int b = align_channels(pick_producer(), channels(a));
        const T ta = node(a).type, tb = node(b).type;
        if (ta == T::Bool || tb == T::Bool) return false;
        const int64_t k = std::min(width(a), height(b));
        const T acc = is_float(ta) || is_float(tb) ? T::Float32 : accumulator(ta, max_abs(tb) * double(k));
        Node n = image(K::Matmul, acc, width(b), height(a), channels(a), node(b).res_x, node(a).res_y, {a, b});
        n.params["k"] = std::to_string(k);
        return fits(node(add(std::move(n))), k);
    }

    bool emit_scan() {
        const int p = pick_producer();
        const bool along_x = rng_.chance(0.5);
        const int64_t length = along_x ? width(p) : height(p);
        const T in = node(p).type == T::Bool ? T::UInt8 : node(p).type;
        T acc = is_float(in) ? T::Float32 : max_abs(in) * double(length) < 2147483647.0 ? T::Int32 : T::UInt32;
        Node n = like(K::Scan, acc, p, {p});
        n.params["axis"] = along_x ? "x" : "y";
        n.params["direction"] = rng_.chance(0.5) ? "forward" : "backward";
        n.params["length"] = std::to_string(length);
        return fits(node(add(std::move(n))));
    }

    // Bins for histograms and lookup tables are powers of two so integer values map by a shift.
    bool emit_histogram() {
        const int p = pick_producer();
        const int64_t bins = int64_t(1) << rng_.uniform_int(4, 6);
        const int64_t tile = int64_t(1) << rng_.uniform_int(3, 5);
        Node h;
        h.kind = K::Histogram;
        h.type = T::Int32;
        h.image = false;
        h.extents = {bins, (width(p) + tile - 1) / tile, (height(p) + tile - 1) / tile, channels(p)};
        if (spec_.dims == 4) h.extents.push_back(batch_);
        h.producers = {p};
        h.params["bins"] = std::to_string(bins);
        h.params["tile"] = std::to_string(tile);
        const int hist = add(std::move(h));
        if (!fits(node(hist))) return false;
        const int q = rng_.chance(0.5) ? p : align(pick_producer(), p); // the values to equalize
        Node apply = like(K::HistogramApply, rng_.chance(0.5) ? T::UInt16 : T::Int32, p, {hist, q});
        return fits(node(add(std::move(apply))));
    }

    bool emit_lut() {
        const int p = pick_producer();
        const int64_t size = int64_t(1) << rng_.uniform_int(6, 8);
        Node lut;
        lut.kind = K::Lut;
        lut.type = pick_type(false);
        lut.image = false;
        lut.extents = {size};
        lut.expr = random_expr({T::Int32}, lut.type);
        const int table = add(std::move(lut));
        if (!fits(node(table))) return false;
        Node apply = like(K::LutApply, node(table).type, p, {table, p});
        return fits(node(add(std::move(apply))));
    }

    bool emit_gather() {
        const int a = pick_producer();
        const int b = align(pick_producer(), a);
        Node n = like(K::Gather, node(a).type, a, {a, b});
        const bool spatial = rng_.chance(0.5);
        n.params["mode"] = spatial ? (rng_.chance(0.5) ? "offset_x" : "offset_y") : "channel";
        if (spatial) n.params["radius"] = std::to_string(rng_.uniform_int(1, 4));
        return fits(node(add(std::move(n))));
    }

    bool emit_transpose() {
        const int p = pick_producer();
        const Node &src = node(p);
        Node n = image(K::Transpose, src.type, height(p), width(p), channels(p), src.res_y, src.res_x, {p});
        return fits(node(add(std::move(n))));
    }

    bool emit_concat() {
        const int a = pick_producer();
        const int b = align_resolution(pick_producer(), a);
        Node n = like(K::Concat, node(a).type, a, {a, b});
        n.extents[2] = channels(a) + channels(b);
        return fits(node(add(std::move(n))));
    }

    bool emit_slice() {
        const int p = pick_producer();
        const int64_t have = channels(p);
        if (have < 2) return false;
        const int64_t step = rng_.uniform_int(1, 2);
        const int64_t offset = rng_.uniform_int(0, have - 1);
        const int64_t most = 1 + (have - 1 - offset) / step;
        const int64_t want = rng_.uniform_int(1, most);
        if (want == have) return false; // a copy, not a slice
        Node n = like(K::Slice, node(p).type, p, {p});
        n.extents[2] = want;
        n.params["offset"] = std::to_string(offset);
        n.params["step"] = std::to_string(step);
        return fits(node(add(std::move(n))));
    }

    const GeneratorConfig &cfg_;
    common::Rng rng_;
    PipelineSpec spec_;
    IntRange stage_range_;
    const FlavourMix *mix_ = nullptr;
    int64_t batch_ = 1;
};

} // namespace

PipelineSpec synthesize_pipeline(const GeneratorConfig &config, uint64_t seed, int64_t stage_count) {
    return Synthesizer(config, seed, stage_count).run();
}

} // namespace schedforge::gen
