// Tests for write_text_file (core/text_file.h).
#include "core/text_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace chorus {
namespace {

TEST(TextFile, WritesTheBytesAndTruncates) {
  const std::string path = ::testing::TempDir() + "chorus_text_file_test.csv";
  write_text_file(path, "a much longer first content\n");
  const std::string content = std::string("a,b\n1,2\n") + '\0' + "\xc3\xa9\n";
  write_text_file(path, content);
  std::ifstream in(path, std::ios::binary);
  std::ostringstream back;
  back << in.rdbuf();
  EXPECT_EQ(back.str(), content);
  std::remove(path.c_str());
}

TEST(TextFile, UnwritablePathIsAnInputErrorNamingIt) {
  const std::string bad = "/nonexistent-dir-for-chorus-tests/out.csv";
  try {
    write_text_file(bad, "x");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), bad);
    EXPECT_NE(e.detail().find("cannot open for writing"), std::string::npos) << e.detail();
  }
}

}  // namespace
}  // namespace chorus
