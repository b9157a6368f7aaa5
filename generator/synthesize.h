// synthesize_pipeline: draws a random PipelineSpec from (config, seed). No Halide involved.
//
// The algorithm:
//   1. Pick the flavour (imaging: 3-D stages; DNN: 4-D with a batch dimension) and 1..N image
//      inputs sharing width and height; wrap each in a boundary condition stage.
//   2. Draw a target stage count T. While the stages so far plus the cost of merging every
//      unconsumed stage ("sink") into one output stay below T, draw a vocabulary kind by weight
//      and emit it (1-2 stages plus any alignment stages). Producers are drawn mostly from the
//      sinks (so the graph converges) and sometimes from any earlier stage (fan-out).
//   3. Merge the remaining sinks pairwise with pointwise stages into the single output.
// A stage that combines producers first aligns them: down/upsampling stages bring them to the
// same resolution per spatial dimension, and a slice or channel_mix stage to the same channel
// count. Every emitted stage keeps its element count and work within the config's bounds; an
// emission that breaks a bound, or would push the final count past stages.max, is rolled back.
#pragma once

#include "config.h"
#include "spec.h"

#include <cstdint>

namespace schedforge::gen {

// stage_count > 0 overrides the config's stage range with exactly that many stages (as far as
// the config's size bounds allow).
PipelineSpec synthesize_pipeline(const GeneratorConfig &config, uint64_t seed, int64_t stage_count = 0);

} // namespace schedforge::gen
