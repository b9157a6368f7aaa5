// PipelineSpec: the canonical, Halide-free description of one random pipeline.
//
// The synthesizer (synthesize.h) draws a PipelineSpec from (seed, config); the builder
// (build.h) turns it into Halide Funcs. Keeping the spec plain data means:
//   - synthesis is fast and needs no Halide.h (tests draw 10,000 specs in well under a second);
//   - the canonical text (to_text) is the identity of a pipeline: its 64-bit id is the hash of
//     that text, so two runs agree on an id exactly when they built the same program.
//
// Nodes are in topological order. Input nodes are buffers (images or DNN weights); every other
// node is a stage and becomes exactly one Halide Func. "Image" nodes have the dimensions
// (x, y, c) or (x, y, c, n) and a resolution per spatial dimension relative to the inputs;
// "aux" nodes (histograms, lookup tables, weights) have their own dimensions and are read only
// by the stage that was generated together with them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace schedforge::gen {

// Bumped whenever the same (seed, config) would give a different pipeline.
constexpr uint32_t kGeneratorVersion = 1;

enum class ScalarType : uint8_t { Bool, UInt8, UInt16, UInt32, Int8, Int16, Int32, Float32 };
constexpr int kNumScalarTypes = 8;

const char *type_name(ScalarType t);       // "uint8", ... (config and spec spelling)
const char *type_short_name(ScalarType t); // "u8", ... (expression text)
bool parse_type_name(std::string_view name, ScalarType *out);
int type_bits(ScalarType t); // Bool counts as 1
bool is_float(ScalarType t);
bool is_signed_int(ScalarType t);
bool is_unsigned_int(ScalarType t); // Bool is not an unsigned int here

enum class StageKind : uint8_t {
    Input,          // a buffer parameter (not a stage)
    Boundary,       // boundary condition wrapped around an input image
    Pointwise,      // random expression tree over 1..max_fan_in aligned producers
    Stencil,        // 1-D or 2-D weighted window (unrolled, RDom update, or inline sum())
    Conv,           // DNN convolution with a channel reduction and a stride
    ChannelMix,     // all-to-all channel mixing (1x1 convolution / fully connected)
    Pool,           // max or average pooling
    Activation,     // relu / tanh / sigmoid, optionally downcast
    Pad,            // boundary condition on an intermediate stage
    Upsample,       // nearest or linear, integer factor per spatial dimension
    Downsample,     // nearest or box, integer factor per spatial dimension
    Matmul,         // out(x, y) = sum_k A(k, y) * B(x, k), per channel and batch
    Scan,           // running sum along x or y, forward or backward (recursive update)
    Histogram,      // aux: tiled histogram (scatter reduction)
    HistogramApply, // reads its Histogram at each pixel's bin and tile
    Lut,            // aux: 1-D lookup table computed from its index
    LutApply,       // data-dependent gather from its Lut
    Gather,         // data-dependent slice (channel) or displacement (spatial) of a producer
    Transpose,      // swaps x and y
    Concat,         // channel concatenation of two producers
    Slice,          // strided channel slice
};
constexpr int kNumStageKinds = 21;

const char *kind_name(StageKind k);
bool parse_kind_name(std::string_view name, StageKind *out);
// The kinds a config weights (the rest are only ever emitted alongside another kind).
bool is_vocabulary_kind(StageKind k);
std::vector<StageKind> vocabulary_kinds();

// A positive rational, for resolutions (a stage downsampled by 2 has resolution 1/2).
struct Ratio {
    int64_t num = 1, den = 1;
    static Ratio make(int64_t num, int64_t den); // reduced
    Ratio operator*(const Ratio &o) const { return make(num * o.num, den * o.den); }
    Ratio operator/(const Ratio &o) const { return make(num * o.den, den * o.num); }
    bool operator==(const Ratio &o) const { return num == o.num && den == o.den; }
    bool operator!=(const Ratio &o) const { return !(*this == o); }
};

// Expression trees for Pointwise and Lut stages, stored flat (children precede parents).
enum class ExprOp : uint8_t {
    Load, // value = producer slot (Lut: the table index)
    Const,
    Add,
    Sub,
    Mul,
    Div, // by a positive constant (ints) or by 1 + |b| (floats)
    Min,
    Max,
    AbsDiff,
    Lt,
    Le,
    Eq,
    Ne,
    And,
    Or,
    Not,
    Select,
    Cast,
    Exp,
    Log,
    Sqrt,
    Sin,
    Tanh,
    Abs,
};
const char *expr_op_name(ExprOp op);

struct ExprNode {
    ExprOp op;
    ScalarType type;   // result type
    int64_t value = 0; // Load: slot; Const: the constant; Div: the int divisor
    std::vector<int> args;
};

struct Node {
    StageKind kind = StageKind::Input;
    ScalarType type = ScalarType::UInt8;
    std::vector<int64_t> extents;              // estimated extent of each dimension
    bool image = true;                         // (x, y, c[, n]) layout; false for aux nodes and weights
    Ratio res_x, res_y;                        // image nodes: resolution relative to the inputs
    std::vector<int> producers;                // node indices, all smaller than this node's
    std::map<std::string, std::string> params; // kind-specific, sorted for canonical text
    std::vector<ExprNode> expr;                // Pointwise / Lut: root is the last node

    int64_t elements() const;
    int64_t param_int(const std::string &key) const; // asserts the key exists
    const std::string &param(const std::string &key) const;
    std::vector<int64_t> param_ints(const std::string &key) const; // "1,2,1"
};

struct PipelineSpec {
    uint32_t generator_version = kGeneratorVersion;
    uint64_t seed = 0;
    bool dnn = false; // DNN-flavoured pipeline (4-D stages with a batch dimension)
    int dims = 3;     // dimensions of image nodes
    std::vector<Node> nodes;
    int output = -1; // the node that is the pipeline's output

    int num_stages() const; // nodes that are not inputs
    std::vector<int> input_nodes() const;
    std::string to_text() const; // canonical, human-readable, one node a line
    uint64_t id() const;         // stable hash of to_text()
};

std::string expr_to_text(const std::vector<ExprNode> &expr);
std::string format_id(uint64_t id); // 16 hex digits

} // namespace schedforge::gen
