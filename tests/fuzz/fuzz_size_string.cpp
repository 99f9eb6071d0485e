// Size strings of every --size flag ("64KiB", "1.5GB", ...), and their formatting.
#include "core/units.h"
#include "fuzz_target.h"

static void parse(const std::string& text) {
  const auto bytes = chorus::parse_bytes(text, "--size");
  (void)chorus::format_bytes(bytes);
}
CHORUS_FUZZ_TARGET(parse)
