// A function run in a child process: what it returns comes back, and a child that dies or exits
// without a result is reported as such; a shared buffer carries what the child wrote.
#include "runner/round_process.h"

#include <gtest/gtest.h>

#include <csignal>
#include <unistd.h>

namespace schedforge::runner {
namespace {

TEST(RunInChild, ReturnsWhatTheFunctionReturnedFromAnotherProcess) {
    const pid_t here = getpid();
    const ChildOutcome c = run_in_child([]() { return std::to_string(getpid()); });
    ASSERT_TRUE(c.returned);
    EXPECT_EQ(c.signal, 0);
    EXPECT_NE(std::stoi(c.bytes), int(here));
    // Large results come back whole (more than a pipe holds at once).
    const ChildOutcome big = run_in_child([]() { return std::string(1 << 20, 'x'); });
    ASSERT_TRUE(big.returned);
    EXPECT_EQ(big.bytes, std::string(1 << 20, 'x'));
}

TEST(RunInChild, ADeathOrAnExitWithoutAResultIsReported) {
    const ChildOutcome killed = run_in_child([]() -> std::string {
        ::raise(SIGSEGV);
        return "never";
    });
    EXPECT_FALSE(killed.returned);
    EXPECT_EQ(killed.signal, SIGSEGV);
    EXPECT_TRUE(killed.bytes.empty());
    const ChildOutcome exited = run_in_child([]() -> std::string { ::_exit(3); });
    EXPECT_FALSE(exited.returned);
    EXPECT_EQ(exited.signal, 0);
    EXPECT_EQ(exited.exit_code, 3);
}

TEST(SharedBufferLike, KeepsTheShapeAndShowsTheChildsWrites) {
    Halide::Buffer<float> original(7, 5);
    original.set_min(-3, 2);
    std::shared_ptr<void> mapping;
    Halide::Buffer<> shared = shared_buffer_like(original, &mapping);
    EXPECT_EQ(shared.type(), original.type());
    ASSERT_EQ(shared.dimensions(), 2);
    for (int d = 0; d < 2; d++) {
        EXPECT_EQ(shared.dim(d).min(), original.dim(d).min());
        EXPECT_EQ(shared.dim(d).extent(), original.dim(d).extent());
        EXPECT_EQ(shared.dim(d).stride(), original.dim(d).stride());
    }
    Halide::Buffer<float> view(shared);
    ASSERT_TRUE(run_in_child([&]() {
                    view.for_each_element([&](int x, int y) { view(x, y) = float(10 * x + y); });
                    return std::string();
                }).returned);
    EXPECT_EQ(view(-3, 2), -28.0f);
    EXPECT_EQ(view(3, 6), 36.0f);
}

} // namespace
} // namespace schedforge::runner
