// A spec as bytes (generator/spec_codec.h) decodes to the very pipeline encoded, and damaged
// bytes decode to nothing, never to another pipeline.
#include "generator/spec_codec.h"
#include "generator/synthesize.h"

#include <gtest/gtest.h>

namespace schedforge::gen {
namespace {

TEST(SpecCodec, SpecsRoundTripExactly) {
    GeneratorConfig config;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        const PipelineSpec spec = synthesize_pipeline(config, seed);
        PipelineSpec back;
        ASSERT_TRUE(decode_spec(encode_spec(spec), &back)) << seed;
        EXPECT_EQ(back.to_text(), spec.to_text()) << seed;
        EXPECT_EQ(back.id(), spec.id());
        EXPECT_EQ(back.seed, spec.seed);
        EXPECT_EQ(back.dnn, spec.dnn);
    }
}

TEST(SpecCodec, DamagedBytesDoNotDecode) {
    const std::string bytes = encode_spec(synthesize_pipeline(GeneratorConfig(), 7));
    PipelineSpec out;
    int flips_decoded = 0;
    for (size_t cut = 0; cut < bytes.size(); cut += 13)
        EXPECT_FALSE(decode_spec(bytes.substr(0, cut), &out)) << "truncated at " << cut;
    EXPECT_FALSE(decode_spec(bytes + "x", &out));
    // A flipped byte either fails to decode or (a field the text does not show) leaves the same program.
    for (size_t at = 0; at < bytes.size(); at += 7) {
        std::string damaged = bytes;
        damaged[at] = char(damaged[at] ^ 0x5a);
        PipelineSpec d;
        if (decode_spec(damaged, &d)) {
            flips_decoded++;
            EXPECT_EQ(d.to_text(), synthesize_pipeline(GeneratorConfig(), 7).to_text()) << "flip at " << at;
        }
    }
    EXPECT_LT(flips_decoded, int(bytes.size() / 7 / 4));
}

} // namespace
} // namespace schedforge::gen
