// What workers send back: each record decodes as it was encoded, and a record of the other kind,
// of another version, cut short or with bytes left over is an error that says so (never an
// empty record).
#include "datagen/records.h"

#include <gtest/gtest.h>

namespace schedforge::datagen {
namespace {

SchedulePayload schedule() { return {"f.compute_root();\n", "nest text\n", 12.5, {1, 2, 3}, {0.5, 0.25}}; }
PipelinePayload pipeline() { return {{"f", "f.update(0)"}, {1, 2, 3, 4}}; }

TEST(Records, RoundTripExactly) {
    SchedulePayload s;
    ASSERT_EQ(decode(encode(schedule()), s), "");
    EXPECT_EQ(s.source, schedule().source);
    EXPECT_EQ(s.nest, schedule().nest);
    EXPECT_EQ(s.cost, 12.5);
    EXPECT_EQ(s.features, schedule().features);
    EXPECT_EQ(s.terms, schedule().terms);
    PipelinePayload p;
    ASSERT_EQ(decode(encode(pipeline()), p), "");
    EXPECT_EQ(p.stages, pipeline().stages);
    EXPECT_EQ(p.features, pipeline().features);
}

TEST(Records, MismatchesAreErrorsThatSaySo) {
    const std::string bytes = encode(schedule());
    SchedulePayload s;
    PipelinePayload p;
    EXPECT_NE(decode(bytes, p).find("pipeline record expected"), std::string::npos) << decode(bytes, p);
    EXPECT_TRUE(p.stages.empty());
    EXPECT_NE(decode(bytes.substr(0, bytes.size() - 3), s).find("cut short"), std::string::npos);
    EXPECT_NE(decode(bytes + "x", s).find("left over"), std::string::npos);
    EXPECT_NE(decode("", s).find("cut short"), std::string::npos);
    std::string other_version = bytes;
    other_version[1] = char(kPayloadVersion + 1);
    EXPECT_NE(decode(other_version, s).find("version " + std::to_string(kPayloadVersion + 1)), std::string::npos);
    EXPECT_EQ(s.source, ""); // left as it was
}

} // namespace
} // namespace schedforge::datagen
