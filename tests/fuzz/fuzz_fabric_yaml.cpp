// Fabric YAML (graph networks for the flow-level model, docs/graph-networks.md): parse, validate,
// and write back: what was read must read again to the same network.
#include "fuzz_target.h"
#include "net/graph/graph_yaml.h"

static void parse(const std::string& text) {
  const auto net = chorus::net::parse_fabric_yaml(text, "fuzz.yaml");
  const auto again = chorus::net::parse_fabric_yaml(chorus::net::write_fabric_yaml(net), "again.yaml");
  if (again.links.size() != net.links.size() || again.rings.size() != net.rings.size() || again.servers != net.servers)
    __builtin_trap();
}
CHORUS_FUZZ_TARGET(parse)
