#pragma once
// The wire protocol of the rendezvous store (tcp_store.h), as pure functions: no I/O, no state
// beyond the arguments, so that the parser can be unit-tested and fuzzed on its own.
//
// All integers are little-endian. A request frame is
//   op (1 byte) | key length (u32) | key | value length (u32) | value
// with op 'H' hello, 'S' set, 'G' get, 'A' add. A reply frame is
//   status (1 byte: 'K' ok, 'E' error) | payload length (u32) | payload
// where an error's payload is a message naming what was wrong (the server then closes).
//
// Rules checked by the decoder, each as soon as the bytes that decide it have arrived (so a
// bad length is refused after 5 or 9 bytes, never buffered):
//   - the first frame of a connection is a hello: key kHelloKey (the protocol version),
//     value the job token (1..kMaxTokenBytes bytes); later frames are never hellos;
//   - keys are 1..kMaxKeyBytes bytes, values 0..kMaxValueBytes (get: empty, add: exactly 8
//     bytes, a signed 64-bit delta); reply payloads 0..kMaxValueBytes (errors: kMaxErrorBytes).
// Lengths are compared and summed in 64-bit arithmetic: a frame is at most kMaxRequestBytes.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace chorus::rt::store_protocol {

inline constexpr std::uint64_t kMaxKeyBytes = 4096;
inline constexpr std::uint64_t kMaxValueBytes = std::uint64_t{64} << 20;  // 64 MiB
inline constexpr std::uint64_t kMaxTokenBytes = 256;
inline constexpr std::uint64_t kMaxErrorBytes = 1024;
inline constexpr std::uint64_t kRequestHeaderBytes = 1 + 4 + 4;  // op and two lengths
inline constexpr std::uint64_t kReplyHeaderBytes = 1 + 4;
inline constexpr std::uint64_t kMaxRequestBytes = kRequestHeaderBytes + kMaxKeyBytes + kMaxValueBytes;
inline constexpr std::uint64_t kMaxHelloBytes = kRequestHeaderBytes + kMaxKeyBytes + kMaxTokenBytes;
inline constexpr std::uint64_t kMaxReplyBytes = kReplyHeaderBytes + kMaxValueBytes;
inline constexpr std::string_view kHelloKey = "chorus-store/1";

enum class Op : char { kHello = 'H', kSet = 'S', kGet = 'G', kAdd = 'A' };

// Where a connection is: before its hello, or after it.
enum class Phase { kAwaitingHello, kReady };

struct Request {
  Op op = Op::kGet;
  std::string key;
  std::vector<char> value;
};

struct Reply {
  bool ok = true;
  std::vector<char> payload;  // the value, or the error message
};

enum class Status {
  kNeedMore,  // the bytes are a valid prefix; decode again once `needed` bytes are there
  kFrame,     // a whole frame, `consumed` bytes long
  kError,     // the bytes can never become a valid frame; `error` says why
};

struct DecodedRequest {
  Status status = Status::kNeedMore;
  std::uint64_t needed = 0;    // need_more: the buffer size at which decoding can progress
  std::uint64_t consumed = 0;  // frame
  Request request;             // frame
  std::string error;           // error
};

struct DecodedReply {
  Status status = Status::kNeedMore;
  std::uint64_t needed = 0;
  std::uint64_t consumed = 0;
  Reply reply;
  std::string error;
};

// Decodes the first request frame in `bytes`, as seen by a connection in `phase`.
DecodedRequest decode_request(std::span<const char> bytes, Phase phase);
// Decodes the first reply frame in `bytes`.
DecodedReply decode_reply(std::span<const char> bytes);

// Encoders; they check the same rules and throw chorus::InputError naming the broken one.
std::vector<char> encode_request(const Request& request);
std::vector<char> encode_hello(std::string_view token);
std::vector<char> encode_reply(const Reply& reply);
// An error reply; the message is cut to kMaxErrorBytes.
std::vector<char> encode_error(std::string_view message);

// An add's delta and a counter's value: a signed 64-bit integer, little-endian, 8 bytes.
std::vector<char> encode_i64(std::int64_t value);
std::int64_t decode_i64(std::span<const char> bytes);  // needs exactly 8 bytes (InputError)

// Bytes from the network made printable for a message: at most `max` characters, anything
// outside printable ASCII as \xNN.
std::string printable(std::string_view bytes, std::size_t max = 64);

}  // namespace chorus::rt::store_protocol
