#include "workload/chakra/et_stream.h"

#include <algorithm>
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>

#include "core/error.h"
#include "core/text_file.h"

namespace chorus::workload::chakra_et {
namespace {

namespace pbio = google::protobuf::io;

// libprotobuf reports why a parse failed (e.g. a string field that is not UTF-8) through its
// log, on stderr by default; we keep the last message and put it into our error instead.
thread_local std::string protobuf_message;

void keep_protobuf_message(google::protobuf::LogLevel, const char*, int, const std::string& message) {
  protobuf_message = message;
}

std::string protobuf_reason() {
  std::string r = protobuf_message.empty() ? "" : " (protobuf: " + protobuf_message + ")";
  protobuf_message.clear();
  return r;
}

}  // namespace

EtTrace parse_et(const std::string& bytes, const std::string& source) {
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(keep_protobuf_message);
    return true;
  }();
  (void)quiet;
  protobuf_message.clear();
  EtTrace trace;
  trace.source = source;
  if (bytes.empty()) throw InputError(source, "empty file; a Chakra trace starts with a GlobalMetadata message");
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  const std::uint64_t size = bytes.size();
  std::uint64_t pos = 0;
  for (std::size_t index = 0; pos < size; ++index) {
    const std::uint64_t at = pos;
    // Where we are, for errors: the message and the last node id read before it.
    auto where = [&] {
      std::string w = fmt::format("{}: byte {}", source, at);
      if (index == 0) return w + " (GlobalMetadata)";
      w += fmt::format(" (node message {}", index);
      if (!trace.nodes.empty()) w += fmt::format(", after node id {}", trace.nodes.back().node.id());
      return w + ")";
    };
    pbio::CodedInputStream in(data + pos, static_cast<int>(std::min<std::uint64_t>(size - pos, 16)));
    std::uint64_t length = 0;
    if (!in.ReadVarint64(&length))
      throw InputError(where(), "truncated or malformed length prefix (a base-128 varint)");
    pos += static_cast<std::uint64_t>(in.CurrentPosition());
    if (length > kMaxMessageBytes)
      throw InputError(where(),
                       fmt::format("message length {} exceeds the limit of {} bytes", length, kMaxMessageBytes));
    if (length > size - pos)
      throw InputError(
          where(), fmt::format("message length {} runs past the end of the file ({} bytes left)", length, size - pos));
    const void* body = data + pos;
    const int len = static_cast<int>(length);  // <= kMaxMessageBytes
    pos += length;
    if (index == 0) {
      if (!trace.metadata.ParseFromArray(body, len))
        throw InputError(where(), "cannot parse the GlobalMetadata message" + protobuf_reason());
      continue;
    }
    EtNode n;
    n.offset = at;
    if (!n.node.ParseFromArray(body, len))
      throw InputError(where(), "cannot parse the Node message" + protobuf_reason());
    if (!chorus::chakra::NodeType_IsValid(n.node.type()))
      throw InputError(fmt::format("{}: byte {}: node id {}", source, at, n.node.id()),
                       fmt::format("field type: unknown node type {}", static_cast<int>(n.node.type())));
    trace.nodes.push_back(std::move(n));
  }
  return trace;
}

EtTrace read_et_file(const std::string& path) { return parse_et(read_text_file(path, "the Chakra trace"), path); }

std::string serialize_et(const chorus::chakra::GlobalMetadata& metadata,
                         const std::vector<chorus::chakra::Node>& nodes) {
  std::string out;
  {
    pbio::StringOutputStream raw(&out);
    pbio::CodedOutputStream coded(&raw);
    auto put = [&](const google::protobuf::MessageLite& m) {
      coded.WriteVarint32(static_cast<std::uint32_t>(m.ByteSizeLong()));
      m.SerializeWithCachedSizes(&coded);
    };
    put(metadata);
    for (const auto& n : nodes) put(n);
  }
  return out;
}

}  // namespace chorus::workload::chakra_et
