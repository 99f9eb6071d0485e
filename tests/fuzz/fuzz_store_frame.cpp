// Store frames as a connection receives them (docs/launching.md, "Rendezvous store"): the input is
// a byte stream; decode frames one after another, in both connection phases, and check the
// decoder's contract: a frame consumes at least a header and at most the bytes given, a decoded
// frame re-encodes to the very bytes it came from, "need more" asks for more than is there
// (and never more than the maximum frame), and every error says why. Replies likewise.
#include <cstring>
#include <span>

#include "fuzz_target.h"
#include "rt/rendezvous/store_protocol.h"

namespace sp = chorus::rt::store_protocol;

static void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_store_frame: contract broken: %s\n", what);
    std::abort();
  }
}

static void parse(const std::string& input) {
  std::span<const char> rest(input.data(), input.size());
  sp::Phase phase = sp::Phase::kAwaitingHello;
  while (!rest.empty()) {
    const auto d = sp::decode_request(rest, phase);
    if (d.status == sp::Status::kNeedMore) {
      check(d.needed > rest.size() && d.needed <= sp::kMaxRequestBytes, "need_more size");
      break;
    }
    if (d.status == sp::Status::kError) {
      check(!d.error.empty(), "error without a reason");
      break;
    }
    check(d.consumed >= sp::kRequestHeaderBytes && d.consumed <= rest.size(), "consumed bytes");
    const auto again = d.request.op == sp::Op::kHello
                           ? sp::encode_hello(std::string_view(d.request.value.data(), d.request.value.size()))
                           : sp::encode_request(d.request);
    check(again.size() == d.consumed && std::memcmp(again.data(), rest.data(), again.size()) == 0,
          "re-encoding differs from the frame");
    phase = sp::Phase::kReady;
    rest = rest.subspan(d.consumed);
  }
  const auto r = sp::decode_reply(std::span<const char>(input.data(), input.size()));
  if (r.status == sp::Status::kFrame) {
    check(r.consumed <= input.size(), "reply consumed bytes");
    const auto again = r.reply.ok ? sp::encode_reply(r.reply)
                                  : sp::encode_error(std::string_view(r.reply.payload.data(), r.reply.payload.size()));
    check(again.size() == r.consumed && std::memcmp(again.data(), input.data(), again.size()) == 0,
          "reply re-encoding differs");
  } else if (r.status == sp::Status::kNeedMore) {
    check(r.needed > input.size() && r.needed <= sp::kMaxReplyBytes, "reply need_more size");
  }
}
CHORUS_FUZZ_TARGET(parse)
