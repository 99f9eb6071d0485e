// SYNDICATE topology YAML (channels, paths, cost table): parse, then validate.
#include "fuzz_target.h"
#include "syndicate/topology_yaml.h"

static void parse(const std::string& text) { (void)chorus::syndicate::parse_topology_yaml(text, "fuzz.yaml"); }
CHORUS_FUZZ_TARGET(parse)
