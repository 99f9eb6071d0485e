// Network YAML, both formats (chorus's and ASTRA-sim's): parse, then validate.
#include "fuzz_target.h"
#include "net/network_yaml.h"

static void parse(const std::string& text) { (void)chorus::net::parse_network_yaml(text, "fuzz.yaml"); }
CHORUS_FUZZ_TARGET(parse)
