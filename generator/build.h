// Building Halide pipelines from a PipelineSpec.
//
// define_pipeline() is the one place that knows how each stage kind is written in Halide; the
// in-process builder (build_pipeline) and the `random_pipeline` Generator both call it, with
// ImageParams or Generator inputs as the sources. Every stage is one named Func ("s<node>_<kind>").
//
// All stages are defined on the whole integer domain: inputs are read only through a boundary
// condition stage, and channel/table indices are clamped, so any schedule and any realized
// region are legal. Values are kept well defined for every schedule: int32 arithmetic that could
// overflow wraps through uint32 (Halide leaves int32 overflow undefined), float-to-int casts
// saturate, and float transcendentals get operands in their domain (no NaN or Inf is produced;
// Halide compiles with no-NaN fast-math flags).
#pragma once

#include "spec.h"

#include <Halide.h>

#include <cstdint>
#include <vector>

namespace schedforge::gen {

Halide::Type halide_type(ScalarType t);

// A raw input as the builder sees it: something callable and its bounds per dimension.
struct InputSource {
    Halide::Func func;
    std::vector<Halide::Range> bounds; // min and extent of each dimension
};

// One Func per spec node, indexed like spec.nodes (input nodes get their source's Func).
// `inputs` are given in the order of spec.input_nodes().
std::vector<Halide::Func> define_pipeline(const PipelineSpec &spec, const std::vector<InputSource> &inputs);

// The estimate of every dimension of a node: [0, extent).
Halide::Region estimate_region(const Node &node);

// Deterministic pseudo-random contents for an input node (images: the type's range, floats in
// [-1, 1); weights: small values).
Halide::Buffer<> make_input_data(const Node &node, uint64_t seed);

// A spec built in this process: ImageParams bound to deterministic data, estimates set.
struct BuiltPipeline {
    PipelineSpec spec;
    std::vector<Halide::ImageParam> params; // one per input node
    std::vector<Halide::Buffer<>> inputs;   // bound to params
    std::vector<Halide::Func> funcs;        // one per node
    Halide::Func output;
    Halide::Pipeline pipeline;

    std::vector<int> output_extents() const;
    // Applies the all-compute_root schedule (every stage realized at root).
    void schedule_compute_root();
    // Realizes the output over its estimated extents (JIT-compiles on first use).
    Halide::Buffer<> run(const Halide::Target &target);
};

BuiltPipeline build_pipeline(const PipelineSpec &spec);

} // namespace schedforge::gen
