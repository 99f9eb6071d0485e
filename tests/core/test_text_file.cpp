// Tests for read_text_file and write_text_file (core/text_file.h).
#include "core/text_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
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

// A file of `bytes` bytes in the test's temporary directory (sparse: resize_file writes nothing).
std::string file_of_size(const std::string& name, std::uintmax_t bytes) {
  const std::string path = ::testing::TempDir() + name;
  { std::ofstream(path, std::ios::binary | std::ios::trunc); }
  std::filesystem::resize_file(path, bytes);
  return path;
}

// The InputError `read` throws; fails the test if it throws none.
InputError error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected InputError";
  return InputError("", "");
}

TEST(ReadTextFile, ReadsTheBytes) {
  const std::string path = ::testing::TempDir() + "chorus_read_text_file.bin";
  const std::string content = std::string("a,b\n") + '\0' + "\xc3\xa9\n";
  write_text_file(path, content);
  EXPECT_EQ(read_text_file(path, "the test file"), content);
  EXPECT_EQ(read_text_file(path, "the test file", content.size()), content);  // the limit itself is allowed
  std::remove(path.c_str());
}

TEST(ReadTextFile, RegularFileOverTheLimitIsRefusedBeforeItIsRead) {
  const auto path = file_of_size("chorus_read_1025.bin", 1025);
  const auto e = error_of([&] { read_text_file(path, "the test file", 1024); });
  EXPECT_EQ(e.where(), path);
  EXPECT_NE(e.detail().find("the test file is 1025 bytes, more than the 1 KiB limit on input files"), std::string::npos)
      << e.detail();
  EXPECT_NE(e.detail().find("CHORUS_MAX_INPUT_BYTES"), std::string::npos) << e.detail();
  std::remove(path.c_str());
}

TEST(ReadTextFile, SparseFileOfGigabytesIsRefusedByItsSize) {
  // 1500 MiB = 1,572,864,000 bytes, 1.46 GiB: more than the default 256 MiB, never allocated.
  const auto path = file_of_size("chorus_read_1500M.bin", std::uintmax_t{1500} << 20);
  ::unsetenv("CHORUS_MAX_INPUT_BYTES");
  const auto e = error_of([&] { read_text_file(path, "the test file"); });
  EXPECT_NE(e.detail().find("is 1.5 GiB (1572864000 bytes), more than the 256 MiB limit"), std::string::npos)
      << e.detail();
  std::remove(path.c_str());
}

TEST(ReadTextFile, EndlessDeviceIsReadToTheLimitAndRefused) {
  const auto e = error_of([] { read_text_file("/dev/zero", "the test file", 4096); });
  EXPECT_EQ(e.where(), "/dev/zero");
  EXPECT_NE(e.detail().find("the test file goes on past the 4 KiB limit on input files"), std::string::npos)
      << e.detail();
}

TEST(ReadTextFile, DirectoryAndMissingFileAreInputErrors) {
  auto e = error_of([] { read_text_file(::testing::TempDir(), "the test file"); });
  EXPECT_NE(e.detail().find("cannot open the test file: Is a directory"), std::string::npos) << e.detail();
  e = error_of([] { read_text_file("/nonexistent-dir-for-chorus-tests/in.json", "the test file"); });
  EXPECT_NE(e.detail().find("cannot open the test file: No such file or directory"), std::string::npos) << e.detail();
}

TEST(ReadTextFile, LimitFromTheEnvironment) {
  const auto path = file_of_size("chorus_read_11.bin", 11);
  ::unsetenv("CHORUS_MAX_INPUT_BYTES");
  EXPECT_EQ(max_input_bytes(), std::uint64_t{256} * 1024 * 1024);
  ::setenv("CHORUS_MAX_INPUT_BYTES", "10", 1);
  EXPECT_EQ(max_input_bytes(), 10u);
  EXPECT_NE(error_of([&] { read_text_file(path, "the test file"); }).detail().find("the 10 B limit"),
            std::string::npos);
  ::setenv("CHORUS_MAX_INPUT_BYTES", "1KiB", 1);
  EXPECT_EQ(max_input_bytes(), 1024u);
  EXPECT_EQ(read_text_file(path, "the test file").size(), 11u);
  for (const char* bad : {"0", "ten", "-1"}) {
    ::setenv("CHORUS_MAX_INPUT_BYTES", bad, 1);
    EXPECT_EQ(error_of([] { max_input_bytes(); }).where(), "CHORUS_MAX_INPUT_BYTES") << bad;
  }
  ::unsetenv("CHORUS_MAX_INPUT_BYTES");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace chorus
