// A PipelineSpec as bytes (common/wire.h), for processes that must build the very pipeline another
// one drew: the benchmark runner's pooled workers receive their jobs' pipelines so. Decoding
// checks that the pipeline is whole and is the one encoded (the same id), so a damaged or
// truncated spec is an error, never another pipeline.
#pragma once

#include "generator/spec.h"

#include <string>

namespace schedforge::gen {

std::string encode_spec(const PipelineSpec &spec);
// False for bytes that do not decode to a whole spec with the id they carry.
bool decode_spec(const std::string &bytes, PipelineSpec *spec);

} // namespace schedforge::gen
