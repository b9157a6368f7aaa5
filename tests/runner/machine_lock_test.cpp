// The machine lock that processes sharing a machine take turns to time by. flock(2) locks belong
// to open files, so two MachineLocks in one process contend as two processes would.
#include "runner/machine_lock.h"

#include "common/errors.h"
#include "tests/support/process.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

namespace schedforge::runner {
namespace {

using Held = MachineLock::Held;

std::string lock_path(const std::string &name) {
    const std::filesystem::path dir = testing::scratch("machine_lock_" + name);
    std::filesystem::create_directories(dir);
    return (dir / "timing.lock").string();
}

TEST(MachineLock, CompilesShareItAndTimingWaitsForThemAlone) {
    const std::string path = lock_path("share");
    MachineLock a(path), b(path), c(path);
    EXPECT_TRUE(a.try_compile());
    EXPECT_TRUE(b.try_compile()); // compiles run side by side
    EXPECT_EQ(a.held(), Held::Compiling);

    // c wants to time: refused while a and b compile, and from its first try no compile starts.
    EXPECT_FALSE(c.try_time());
    MachineLock d(path);
    EXPECT_FALSE(d.try_compile()) << "a new compile started while a process waits to time";
    EXPECT_FALSE(a.try_compile()) << "a compiling process started another while a process waits to time";
    EXPECT_EQ(a.held(), Held::Compiling); // its running compiles keep their share
    a.release();
    EXPECT_FALSE(c.try_time());
    b.release();
    EXPECT_TRUE(c.try_time());
    EXPECT_EQ(c.held(), Held::Timing);

    // While c times, nobody compiles or times.
    EXPECT_FALSE(a.try_compile());
    EXPECT_FALSE(d.try_time());
    c.release();
    EXPECT_TRUE(d.try_time());
    d.release();
    EXPECT_TRUE(a.try_compile());
}

TEST(MachineLock, AProcessThatDiesLeavesNothingHeld) {
    const std::string path = lock_path("dies");
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    const pid_t pid = fork();
    if (pid == 0) {
        MachineLock mine(path);
        const char ok = mine.try_time() ? 'y' : 'n';
        (void)!write(ready[1], &ok, 1);
        for (;;) pause();
    }
    char ok = 0;
    ASSERT_EQ(read(ready[0], &ok, 1), 1);
    EXPECT_EQ(ok, 'y');
    MachineLock other(path);
    EXPECT_FALSE(other.try_compile());
    ::kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    EXPECT_TRUE(other.try_compile());
}

TEST(MachineLock, AnUnusableLockFileIsAUserError) {
    EXPECT_THROW(MachineLock("/nonexistent-folder/schedforge-timing.lock"), UserError);
}

} // namespace
} // namespace schedforge::runner
