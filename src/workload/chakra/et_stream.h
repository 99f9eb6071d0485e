#pragma once
// The file layout of Chakra execution traces: one file per rank (`<name>.<rank>.et`), a stream
// of messages each preceded by its length as a base-128 varint (at most 32 bits), the first a
// GlobalMetadata, every other a Node. The messages themselves are the schema of et_def.proto
// (ours, with Chakra's field numbers), parsed by Debian's libprotobuf.
#include <cstdint>
#include <string>
#include <vector>

#include "workload/chakra/et_def.pb.h"

namespace chorus::workload::chakra_et {

// Upper bound on one message's length; a length above it is reported as corrupt rather than
// allocated (the largest nodes real converters write are a few kB of attributes).
inline constexpr std::uint32_t kMaxMessageBytes = 64u << 20;

struct EtNode {
  chorus::chakra::Node node;
  std::uint64_t offset = 0;  // byte offset of the node's length prefix in the file
};

struct EtTrace {
  std::string source;  // file name, for errors
  chorus::chakra::GlobalMetadata metadata;
  std::vector<EtNode> nodes;
};

// Parses a whole stream held in memory. Truncation, a length beyond the end or above
// kMaxMessageBytes, a message protobuf cannot parse, and a node type outside the schema's
// enum throw InputError naming `source`, the byte offset, and the node id where one is known.
EtTrace parse_et(const std::string& bytes, const std::string& source);

// Reads `path` and parses it (an unreadable file is an InputError too).
EtTrace read_et_file(const std::string& path);

// The inverse: the length-delimited stream of `metadata` followed by `nodes`.
std::string serialize_et(const chorus::chakra::GlobalMetadata& metadata,
                         const std::vector<chorus::chakra::Node>& nodes);

}  // namespace chorus::workload::chakra_et
