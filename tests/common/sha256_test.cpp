// SHA-256 against FIPS 180-4's examples and a file hashed in pieces larger and smaller than a block.
#include "common/sha256.h"

#include "tests/support/process.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace schedforge::common {
namespace {

TEST(Sha256, MatchesTheStandardsExamples) {
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, UpdatesInAnyPiecesGiveTheSameDigest) {
    std::string text;
    for (int i = 0; i < 3000; i++) text += char('a' + i * 7 % 26);
    const std::string whole = sha256_hex(text);
    for (size_t piece : {1, 55, 56, 63, 64, 65, 1000}) {
        Sha256 h;
        for (size_t at = 0; at < text.size(); at += piece)
            h.update(text.data() + at, std::min(piece, text.size() - at));
        EXPECT_EQ(h.hex_digest(), whole) << "pieces of " << piece;
    }
    const std::filesystem::path dir = testing::scratch("sha256");
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "text", std::ios::binary) << text;
    EXPECT_EQ(sha256_of_file((dir / "text").string()), whole);
    EXPECT_THROW(sha256_of_file((dir / "missing").string()), std::runtime_error);
}

} // namespace
} // namespace schedforge::common
