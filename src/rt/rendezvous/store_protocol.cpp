#include "rt/rendezvous/store_protocol.h"

#include <fmt/format.h>

#include "core/error.h"

namespace chorus::rt::store_protocol {

namespace {

std::uint32_t get_u32(std::span<const char> bytes, std::uint64_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(at) + static_cast<std::size_t>(i)]);
  return v;
}

void put_u32(std::vector<char>& out, std::uint64_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

const char* op_name(char op) {
  switch (op) {
    case 'H':
      return "hello";
    case 'S':
      return "set";
    case 'G':
      return "get";
    case 'A':
      return "add";
    default:
      return "?";
  }
}

bool known_op(char op) { return op == 'H' || op == 'S' || op == 'G' || op == 'A'; }

// The rule on a request's value length for its op, or "" when `vlen` is allowed.
std::string value_rule(char op, std::uint64_t vlen) {
  switch (op) {
    case 'H':
      if (vlen == 0) return "hello without a job token";
      if (vlen > kMaxTokenBytes)
        return fmt::format("hello token length {} exceeds the maximum {}", vlen, kMaxTokenBytes);
      return "";
    case 'G':
      return vlen == 0 ? "" : fmt::format("get with a {}-byte value (must be empty)", vlen);
    case 'A':
      return vlen == 8 ? "" : fmt::format("add needs an 8-byte value, got {} bytes", vlen);
    default:
      return vlen <= kMaxValueBytes ? ""
                                    : fmt::format("set value length {} exceeds the maximum {}", vlen, kMaxValueBytes);
  }
}

}  // namespace

std::vector<char> encode_i64(std::int64_t value) {
  std::vector<char> out;
  const auto u = static_cast<std::uint64_t>(value);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
  return out;
}

std::int64_t decode_i64(std::span<const char> bytes) {
  if (bytes.size() != 8) throw InputError("store integer", fmt::format("expected 8 bytes, got {}", bytes.size()));
  std::uint64_t u = 0;
  for (int i = 7; i >= 0; --i) u = (u << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  return static_cast<std::int64_t>(u);
}

std::string printable(std::string_view bytes, std::size_t max) {
  std::string out;
  std::size_t i = 0;
  for (; i < bytes.size() && out.size() < max; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\')
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  if (i < bytes.size()) out += "...";
  return out;
}

DecodedRequest decode_request(std::span<const char> bytes, Phase phase) {
  DecodedRequest d;
  auto fail = [&d](std::string message) {
    d.status = Status::kError;
    d.error = "request frame: " + std::move(message);
    return d;
  };
  const std::uint64_t have = bytes.size();
  if (have >= 1) {
    const char op = bytes[0];
    if (!known_op(op))
      return fail(fmt::format("unknown op byte 0x{:02x} (expected H, S, G or A)", static_cast<unsigned char>(op)));
    if (phase == Phase::kAwaitingHello && op != 'H')
      return fail(fmt::format("the first frame must be a hello with the job token, got a {}", op_name(op)));
    if (phase == Phase::kReady && op == 'H') return fail("a second hello on the same connection");
  }
  if (have < 5) {
    d.needed = 5;
    return d;
  }
  const char op = bytes[0];
  const std::uint64_t klen = get_u32(bytes, 1);
  if (klen == 0) return fail(fmt::format("empty key in a {}", op_name(op)));
  if (klen > kMaxKeyBytes) return fail(fmt::format("key length {} exceeds the maximum {}", klen, kMaxKeyBytes));
  if (have < 5 + klen + 4) {
    d.needed = 5 + klen + 4;
    return d;
  }
  const std::string_view key(bytes.data() + 5, static_cast<std::size_t>(klen));
  if (op == 'H' && key != kHelloKey)
    return fail(fmt::format("hello for protocol '{}', this store speaks '{}'", printable(key), kHelloKey));
  const std::uint64_t vlen = get_u32(bytes, 5 + klen);
  if (const std::string rule = value_rule(op, vlen); !rule.empty()) return fail(rule);
  const std::uint64_t total = kRequestHeaderBytes + klen + vlen;  // <= kMaxRequestBytes
  if (have < total) {
    d.needed = total;
    return d;
  }
  d.status = Status::kFrame;
  d.consumed = total;
  d.request.op = static_cast<Op>(op);
  d.request.key.assign(key);
  const char* v = bytes.data() + kRequestHeaderBytes + klen;
  d.request.value.assign(v, v + vlen);
  return d;
}

DecodedReply decode_reply(std::span<const char> bytes) {
  DecodedReply d;
  auto fail = [&d](std::string message) {
    d.status = Status::kError;
    d.error = "reply frame: " + std::move(message);
    return d;
  };
  const std::uint64_t have = bytes.size();
  if (have >= 1 && bytes[0] != 'K' && bytes[0] != 'E')
    return fail(fmt::format("unknown status byte 0x{:02x} (expected K or E)", static_cast<unsigned char>(bytes[0])));
  if (have < kReplyHeaderBytes) {
    d.needed = kReplyHeaderBytes;
    return d;
  }
  const bool ok = bytes[0] == 'K';
  const std::uint64_t len = get_u32(bytes, 1);
  const std::uint64_t max = ok ? kMaxValueBytes : kMaxErrorBytes;
  if (len > max)
    return fail(fmt::format("{} length {} exceeds the maximum {}", ok ? "value" : "error message", len, max));
  const std::uint64_t total = kReplyHeaderBytes + len;
  if (have < total) {
    d.needed = total;
    return d;
  }
  d.status = Status::kFrame;
  d.consumed = total;
  d.reply.ok = ok;
  d.reply.payload.assign(bytes.data() + kReplyHeaderBytes, bytes.data() + total);
  return d;
}

std::vector<char> encode_request(const Request& request) {
  const char op = static_cast<char>(request.op);
  if (!known_op(op))
    throw InputError("store request", fmt::format("unknown op byte 0x{:02x}", static_cast<unsigned char>(op)));
  const std::uint64_t klen = request.key.size(), vlen = request.value.size();
  if (klen == 0) throw InputError("store request", "empty key");
  if (klen > kMaxKeyBytes)
    throw InputError("store request", fmt::format("key '{}' is {} bytes, the maximum is {}", printable(request.key),
                                                  klen, kMaxKeyBytes));
  if (op == 'H' && request.key != kHelloKey) throw InputError("store request", "hello with a wrong key");
  if (const std::string rule = value_rule(op, vlen); !rule.empty())
    throw InputError("store request", fmt::format("key '{}': {}", printable(request.key), rule));
  std::vector<char> out;
  out.reserve(static_cast<std::size_t>(kRequestHeaderBytes + klen + vlen));
  out.push_back(op);
  put_u32(out, klen);
  out.insert(out.end(), request.key.begin(), request.key.end());
  put_u32(out, vlen);
  out.insert(out.end(), request.value.begin(), request.value.end());
  return out;
}

std::vector<char> encode_hello(std::string_view token) {
  return encode_request({Op::kHello, std::string(kHelloKey), std::vector<char>(token.begin(), token.end())});
}

std::vector<char> encode_reply(const Reply& reply) {
  const std::uint64_t len = reply.payload.size();
  const std::uint64_t max = reply.ok ? kMaxValueBytes : kMaxErrorBytes;
  if (len > max) throw InputError("store reply", fmt::format("payload of {} bytes exceeds the maximum {}", len, max));
  std::vector<char> out;
  out.reserve(static_cast<std::size_t>(kReplyHeaderBytes + len));
  out.push_back(reply.ok ? 'K' : 'E');
  put_u32(out, len);
  out.insert(out.end(), reply.payload.begin(), reply.payload.end());
  return out;
}

std::vector<char> encode_error(std::string_view message) {
  message = message.substr(0, static_cast<std::size_t>(kMaxErrorBytes));
  return encode_reply({false, std::vector<char>(message.begin(), message.end())});
}

}  // namespace chorus::rt::store_protocol
