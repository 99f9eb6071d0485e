// Bad operation timeouts are InputErrors naming the setting (InitOptions::timeout_s,
// CHORUS_RT_TIMEOUT_S), never undefined behaviour in a cast; good
// ones are taken to the millisecond. Runs in a world of one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "core/error.h"
#include "rt/rendezvous/store.h"
#include "rt/runtime_config.h"
#include "rt/runtime_instance.h"

namespace rt = chorus::rt;

namespace {

// The InputError's text, or "" if `f` did not throw one.
template <typename F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const chorus::InputError& e) {
    return e.what();
  }
  return "";
}

std::string init_with(double seconds) {
  rt::InitOptions o;
  o.timeout_s = seconds;
  return input_error([&] { rt::init({"shm"}, o); });
}

std::string init_with_env(const char* value) {
  ::setenv("CHORUS_RT_TIMEOUT_S", value, 1);
  std::string e = input_error([] { rt::init({"shm"}); });
  ::unsetenv("CHORUS_RT_TIMEOUT_S");
  return e;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(RtTimeoutSettings, InitOptionRejectsNanInfZeroNegativeAndOutOfRange) {
  const double inf = std::numeric_limits<double>::infinity();
  const struct {
    double seconds;
    const char* says;
  } cases[] = {{std::nan(""), "NaN"},
               {inf, "infinite"},
               {-inf, "negative infinite"},
               {0.0, "not positive"},
               {-5.0, "not positive"},
               {-0.5, "not positive"},
               {0.0004, "below the resolution of 1 ms"},
               {1e8, "too large"},
               {1e300, "too large"}};
  for (const auto& c : cases) {
    const std::string e = init_with(c.seconds);
    EXPECT_TRUE(has(e, "InitOptions::timeout_s")) << c.seconds << ": " << e;
    EXPECT_TRUE(has(e, c.says)) << c.seconds << ": " << e;
    EXPECT_FALSE(rt::is_initialized());
  }
}

TEST(RtTimeoutSettings, EnvironmentRejectsNonNumbersAndBadValues) {
  const struct {
    const char* value;
    const char* says;
  } cases[] = {{"abc", "'abc' is not a number of seconds"},
               {"", "'' is not a number of seconds"},
               {"5s", "'5s' is not a number of seconds"},
               {"1 0", "is not a number of seconds"},
               {"nan", "is not a number of seconds"},
               {"inf", "is not a number of seconds"},
               {"1e400", "too large"},
               {"0", "not positive"},
               {"-3", "not positive"},
               {"1e-9", "below the resolution"},
               {"20000000", "too large"}};
  for (const auto& c : cases) {
    const std::string e = init_with_env(c.value);
    EXPECT_TRUE(has(e, "environment CHORUS_RT_TIMEOUT_S")) << c.value << ": " << e;
    EXPECT_TRUE(has(e, c.says)) << c.value << ": " << e;
    EXPECT_FALSE(rt::is_initialized());
  }
}

// The timeout is each runtime's own: two runtimes alive in one process keep theirs (there is
// no process-wide timeout for a second runtime to overwrite).
TEST(RtTimeoutSettings, EachRuntimeKeepsItsOwnTimeout) {
  auto world = [] {
    return std::make_shared<rt::ExternalWorld>(rt::ExternalWorld{0, 1, std::make_shared<rt::InMemoryStore>()});
  };
  rt::InitOptions a, b;
  a.timeout_s = 2.5;
  a.world = world();
  b.timeout_s = 7.25;
  b.world = world();
  rt::Runtime first({"shm"}, a);
  rt::Runtime second({"shm"}, b);
  EXPECT_EQ(first.timeout_ms(), 2500);
  EXPECT_EQ(second.timeout_ms(), 7250);
}

TEST(RtTimeoutSettings, GoodValuesAreTakenToTheMillisecond) {
  // 2.5 s = 2500 ms; 0.001 s = 1 ms (the smallest); 10^7 s = the largest.
  ASSERT_EQ(init_with(2.5), "");
  EXPECT_EQ(rt::operation_timeout_ms(), 2500);
  rt::finalize();
  ASSERT_EQ(init_with(0.001), "");
  EXPECT_EQ(rt::operation_timeout_ms(), 1);
  rt::finalize();
  ASSERT_EQ(init_with_env("7.25"), "");
  EXPECT_EQ(rt::operation_timeout_ms(), 7250);
  rt::finalize();
  EXPECT_EQ(rt::timeout_ms_from_seconds(1e7, "x"), rt::kMaxTimeoutMs);
  // -1 exactly means "not set": the environment, else 300 s.
  ASSERT_EQ(init_with(-1), "");
  EXPECT_EQ(rt::operation_timeout_ms(), 300000);
  rt::finalize();
}

namespace chorus::rt {
namespace {

// What env_bytes makes of `value` for CHORUS_SHM_ONE_STEP_BYTES in [0, 1 GiB] (fallback 7), or
// the InputError's text.
std::string one_step_bytes(const char* value) {
  ::setenv("CHORUS_SHM_ONE_STEP_BYTES", value, 1);
  std::string got;
  try {
    got = std::to_string(env_bytes("CHORUS_SHM_ONE_STEP_BYTES", 7, 0, std::size_t{1} << 30));
  } catch (const InputError& e) {
    got = e.what();
  }
  ::unsetenv("CHORUS_SHM_ONE_STEP_BYTES");
  return got;
}

// A byte count from the environment is a whole decimal number in range, or an error naming the
// variable and the range: never a wrapped -1, a 1 read off "1e999" or a 0 off "0x10".
TEST(RtEnvironmentBytes, OnlyWholeDecimalNumbersInRangeAreTaken) {
  EXPECT_EQ(one_step_bytes(""), "7");  // set but empty: unset
  EXPECT_EQ(one_step_bytes("0"), "0");
  EXPECT_EQ(one_step_bytes("4096"), "4096");
  EXPECT_EQ(one_step_bytes("1073741824"), "1073741824");
  for (const char* bad :
       {"-1", "1e999", "0x10", "4 KiB", "4KiB", " 4096", "4096 ", "+4096", "1073741825", "99999999999999999999999"}) {
    const std::string got = one_step_bytes(bad);
    EXPECT_NE(got.find("environment CHORUS_SHM_ONE_STEP_BYTES"), std::string::npos) << bad << ": " << got;
    EXPECT_NE(got.find(std::string("'") + bad + "' is not a whole number of bytes in [0, 1073741824]"),
              std::string::npos)
        << bad << ": " << got;
  }
}

// CHORUS_RT_LOG and CHORUS_RT_TUNING set but empty are unset (an empty log prefix once wrote
// hidden ".0.jsonl" files in the working directory).
TEST(RtEnvironmentBytes, EmptyLogAndTuningAreUnset) {
  ::setenv("CHORUS_RT_LOG", "", 1);
  ::setenv("CHORUS_RT_TUNING", "", 1);
  const Settings s = resolve_settings(InitOptions{});
  ::unsetenv("CHORUS_RT_LOG");
  ::unsetenv("CHORUS_RT_TUNING");
  EXPECT_EQ(s.log, "");
  EXPECT_EQ(s.tuning_table, "");
}

}  // namespace
}  // namespace chorus::rt
