// Schedule JSON (docs/schedule-format.md) against a fixed 3-dimension network.
#include "fuzz_target.h"
#include "net/network_yaml.h"
#include "sched/schedule_json.h"

static void parse(const std::string& text) {
  static const chorus::net::Network network = chorus::net::load_network("3D-SW_SW_SW_homo");
  (void)chorus::sched::parse_schedule_json(text, network, "fuzz.json");
}
CHORUS_FUZZ_TARGET(parse)
