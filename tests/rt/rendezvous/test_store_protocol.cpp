// The store's wire protocol (src/rt/rendezvous/store_protocol.h) on hand-built frames: every
// byte below is written out here from the format in the header, not produced by the encoder.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "rt/rendezvous/store_protocol.h"

namespace proto = chorus::rt::store_protocol;
using proto::Phase;
using proto::Status;

namespace {

void le32(std::vector<char>& b, std::uint32_t v) {
  b.push_back(static_cast<char>(v & 0xff));
  b.push_back(static_cast<char>((v >> 8) & 0xff));
  b.push_back(static_cast<char>((v >> 16) & 0xff));
  b.push_back(static_cast<char>((v >> 24) & 0xff));
}

// op | klen | key | vlen | value, with the two lengths given separately from the bytes.
std::vector<char> frame(char op, std::uint32_t klen, const std::string& key, std::uint32_t vlen,
                        const std::string& value) {
  std::vector<char> b{op};
  le32(b, klen);
  b.insert(b.end(), key.begin(), key.end());
  le32(b, vlen);
  b.insert(b.end(), value.begin(), value.end());
  return b;
}

std::vector<char> head(char op, std::uint32_t klen) {
  std::vector<char> b{op};
  le32(b, klen);
  return b;
}

proto::DecodedRequest ready(const std::vector<char>& b) { return proto::decode_request(b, Phase::kReady); }

}  // namespace

TEST(StoreProtocol, SetFrameAndEveryPrefix) {
  const std::vector<char> f{'S', 1, 0, 0, 0, 'k', 3, 0, 0, 0, 'a', 'b', 'c'};
  const auto d = ready(f);
  ASSERT_EQ(d.status, Status::kFrame) << d.error;
  EXPECT_EQ(d.consumed, 13u);
  EXPECT_EQ(d.request.op, proto::Op::kSet);
  EXPECT_EQ(d.request.key, "k");
  EXPECT_EQ(d.request.value, (std::vector<char>{'a', 'b', 'c'}));
  // Prefixes: the header (5 bytes) first, then key + value length (10), then everything (13).
  for (std::size_t n = 0; n < f.size(); ++n) {
    const auto p = ready(std::vector<char>(f.begin(), f.begin() + static_cast<long>(n)));
    ASSERT_EQ(p.status, Status::kNeedMore) << n;
    EXPECT_EQ(p.needed, n < 5 ? 5u : n < 10 ? 10u : 13u) << n;
  }
}

TEST(StoreProtocol, TakesOnlyTheFirstOfTwoFrames) {
  auto f = frame('G', 2, "ab", 0, "");
  const auto second = frame('A', 1, "c", 8, std::string(8, '\0'));
  f.insert(f.end(), second.begin(), second.end());
  const auto d = ready(f);
  ASSERT_EQ(d.status, Status::kFrame);
  EXPECT_EQ(d.consumed, 11u);
  EXPECT_EQ(d.request.op, proto::Op::kGet);
  EXPECT_EQ(d.request.key, "ab");
}

TEST(StoreProtocol, TheFiveByteCrashIsAnError) {
  // 'G' and a key length of 0xFFFFFFFA: in 32 bits 9 + klen wrapped to 3.
  const auto d =
      ready({'G', static_cast<char>(0xFA), static_cast<char>(0xFF), static_cast<char>(0xFF), static_cast<char>(0xFF)});
  ASSERT_EQ(d.status, Status::kError);
  EXPECT_EQ(d.error, "request frame: key length 4294967290 exceeds the maximum 4096");
}

TEST(StoreProtocol, KeyLengthBoundaries) {
  EXPECT_EQ(ready(head('S', 0)).error, "request frame: empty key in a set");
  EXPECT_EQ(ready(head('G', 0xFFFFFFFFu)).status, Status::kError);
  EXPECT_EQ(ready(head('S', 0x80000000u)).status, Status::kError);
  EXPECT_EQ(ready(head('S', 4097)).error, "request frame: key length 4097 exceeds the maximum 4096");
  const auto at_max = ready(head('S', 4096));
  ASSERT_EQ(at_max.status, Status::kNeedMore);
  EXPECT_EQ(at_max.needed, 5u + 4096u + 4u);
  const auto whole = ready(frame('S', 4096, std::string(4096, 'k'), 0, ""));
  ASSERT_EQ(whole.status, Status::kFrame);
  EXPECT_EQ(whole.request.key.size(), 4096u);
  EXPECT_TRUE(whole.request.value.empty());
}

TEST(StoreProtocol, ValueLengthBoundaries) {
  const std::uint32_t max = 64u << 20;  // 67108864
  auto value_len = [](std::uint32_t vlen) { return frame('S', 1, "k", vlen, ""); };
  EXPECT_EQ(ready(value_len(0xFFFFFFFFu)).error,
            "request frame: set value length 4294967295 exceeds the maximum 67108864");
  EXPECT_EQ(ready(value_len(0xFFFFFFF7u)).status, Status::kError);  // 9 + 1 + this wraps 32 bits to 1
  EXPECT_EQ(ready(value_len(max + 1)).status, Status::kError);
  const auto at_max = ready(value_len(max));
  ASSERT_EQ(at_max.status, Status::kNeedMore);
  EXPECT_EQ(at_max.needed, 9u + 1u + max);
  // The largest frame there is, whole.
  auto f = value_len(max);
  f.resize(f.size() + max, 'v');
  const auto d = ready(f);
  ASSERT_EQ(d.status, Status::kFrame);
  EXPECT_EQ(d.consumed, 10u + max);
  EXPECT_EQ(d.request.value.size(), max);
  // Largest key with the largest value: the sum still fits, 9 + 4096 + 64 MiB.
  EXPECT_EQ(proto::kMaxRequestBytes, 9u + 4096u + max);
}

TEST(StoreProtocol, UnknownOpsAreRefusedAtTheFirstByte) {
  for (const int op : {0x00, 0x58, 0x73, 0xFF}) {
    const auto d = ready({static_cast<char>(op)});
    ASSERT_EQ(d.status, Status::kError) << op;
    EXPECT_NE(d.error.find("unknown op byte 0x"), std::string::npos) << d.error;
  }
  EXPECT_EQ(ready({'X'}).error, "request frame: unknown op byte 0x58 (expected H, S, G or A)");
  EXPECT_EQ(ready({}).status, Status::kNeedMore);
  EXPECT_EQ(ready({}).needed, 5u);
}

TEST(StoreProtocol, OpRulesOnValues) {
  EXPECT_EQ(ready(frame('G', 1, "k", 5, "12345")).error, "request frame: get with a 5-byte value (must be empty)");
  // The rule is known from the length alone: no need to wait for the bytes.
  EXPECT_EQ(ready(frame('A', 1, "k", 7, "")).error, "request frame: add needs an 8-byte value, got 7 bytes");
  EXPECT_EQ(ready(frame('A', 1, "k", 9, "")).status, Status::kError);
  const auto add = ready(frame('A', 1, "k", 8, std::string("\xfe\xff\xff\xff\xff\xff\xff\xff", 8)));
  ASSERT_EQ(add.status, Status::kFrame);
  EXPECT_EQ(proto::decode_i64(add.request.value), -2);
}

TEST(StoreProtocol, HelloComesFirstAndOnlyOnce) {
  const std::string key = "chorus-store/1";
  const auto hello = frame('H', static_cast<std::uint32_t>(key.size()), key, 4, "t0k3");
  const auto d = proto::decode_request(hello, Phase::kAwaitingHello);
  ASSERT_EQ(d.status, Status::kFrame) << d.error;
  EXPECT_EQ(d.request.op, proto::Op::kHello);
  EXPECT_EQ(std::string(d.request.value.begin(), d.request.value.end()), "t0k3");
  EXPECT_EQ(ready(hello).error, "request frame: a second hello on the same connection");
  for (const char op : {'S', 'G', 'A'}) {
    const auto e = proto::decode_request(std::vector<char>{op}, Phase::kAwaitingHello);
    ASSERT_EQ(e.status, Status::kError);
    EXPECT_NE(e.error.find("the first frame must be a hello with the job token"), std::string::npos);
  }
  auto in_hello = [&](const std::vector<char>& b) { return proto::decode_request(b, Phase::kAwaitingHello); };
  EXPECT_EQ(in_hello(frame('H', 14, "chorus-store/2", 4, "t0k3")).error,
            "request frame: hello for protocol 'chorus-store/2', this store speaks 'chorus-store/1'");
  EXPECT_EQ(in_hello(frame('H', 14, key, 0, "")).error, "request frame: hello without a job token");
  EXPECT_EQ(in_hello(frame('H', 14, key, 257, "")).error,
            "request frame: hello token length 257 exceeds the maximum 256");
  EXPECT_EQ(in_hello(frame('H', 14, key, 256, std::string(256, 't'))).status, Status::kFrame);
  // A hello can never ask the server to buffer more than kMaxHelloBytes.
  EXPECT_EQ(proto::kMaxHelloBytes, 9u + 4096u + 256u);
}

TEST(StoreProtocol, OkAndErrorRepliesDecodeAndBadOnesAreNamed) {
  const auto ok = proto::decode_reply(std::vector<char>{'K', 0, 0, 0, 0});
  ASSERT_EQ(ok.status, Status::kFrame);
  EXPECT_TRUE(ok.reply.ok);
  EXPECT_TRUE(ok.reply.payload.empty());
  const auto err = proto::decode_reply(std::vector<char>{'E', 3, 0, 0, 0, 'b', 'a', 'd', 'K'});
  ASSERT_EQ(err.status, Status::kFrame);
  EXPECT_FALSE(err.reply.ok);
  EXPECT_EQ(err.consumed, 8u);
  EXPECT_EQ(std::string(err.reply.payload.begin(), err.reply.payload.end()), "bad");
  EXPECT_EQ(proto::decode_reply(std::vector<char>{'Z'}).error,
            "reply frame: unknown status byte 0x5a (expected K or E)");
  EXPECT_EQ(proto::decode_reply(std::vector<char>{'K', -1, -1, -1, -1}).error,
            "reply frame: value length 4294967295 exceeds the maximum 67108864");
  EXPECT_EQ(proto::decode_reply(std::vector<char>{'E', 1, 4, 0, 0}).error,
            "reply frame: error message length 1025 exceeds the maximum 1024");
  const auto part = proto::decode_reply(std::vector<char>{'E', 0, 4, 0, 0, 'x'});
  ASSERT_EQ(part.status, Status::kNeedMore);
  EXPECT_EQ(part.needed, 5u + 1024u);
  EXPECT_EQ(proto::decode_reply(std::vector<char>{'K', 1}).needed, 5u);
}

TEST(StoreProtocol, EncodersWriteTheDocumentedBytes) {
  EXPECT_EQ(proto::encode_request({proto::Op::kSet, "k", {'a', 'b', 'c'}}),
            (std::vector<char>{'S', 1, 0, 0, 0, 'k', 3, 0, 0, 0, 'a', 'b', 'c'}));
  EXPECT_EQ(proto::encode_hello("tok"), frame('H', 14, "chorus-store/1", 3, "tok"));
  EXPECT_EQ(proto::encode_reply({true, {'v'}}), (std::vector<char>{'K', 1, 0, 0, 0, 'v'}));
  EXPECT_EQ(proto::encode_error(std::string(5000, 'e')).size(), 5u + 1024u);
  EXPECT_EQ(proto::encode_i64(0x0102030405060708), (std::vector<char>{8, 7, 6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(proto::encode_i64(-1), std::vector<char>(8, static_cast<char>(0xff)));
  EXPECT_THROW(proto::decode_i64(std::vector<char>(7)), chorus::InputError);
}

TEST(StoreProtocol, EncodersRefuseWhatTheDecoderWould) {
  using chorus::InputError;
  EXPECT_THROW(proto::encode_request({proto::Op::kSet, "", {}}), InputError);
  EXPECT_THROW(proto::encode_request({proto::Op::kSet, std::string(4097, 'k'), {}}), InputError);
  EXPECT_THROW(proto::encode_request({proto::Op::kSet, "k", std::vector<char>((64u << 20) + 1)}), InputError);
  EXPECT_THROW(proto::encode_request({proto::Op::kGet, "k", {'x'}}), InputError);
  EXPECT_THROW(proto::encode_request({proto::Op::kAdd, "k", {'x'}}), InputError);
  EXPECT_THROW(proto::encode_request({static_cast<proto::Op>('Q'), "k", {}}), InputError);
  EXPECT_THROW(proto::encode_hello(""), InputError);
  EXPECT_THROW(proto::encode_hello(std::string(257, 't')), InputError);
  EXPECT_THROW(proto::encode_reply({false, std::vector<char>(1025)}), InputError);
}

// Random bytes (fixed seed), most of them starting with a valid op so that lengths get read:
// the decoder never reads past the span, `needed` always exceeds what it was given, and every
// frame it accepts is re-encoded to exactly the bytes it consumed.
TEST(StoreProtocol, RandomBytesKeepTheContract) {
  std::mt19937_64 rng(20261122);
  const char ops[] = {'H', 'S', 'G', 'A', 'x'};
  int frames = 0, errors = 0, partial = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<char> b(rng() % 48);
    for (auto& c : b) c = static_cast<char>(rng() % 4 == 0 ? rng() : rng() % 12);  // small lengths likely
    if (!b.empty()) b[0] = ops[rng() % 5];
    const Phase phase = rng() % 2 ? Phase::kReady : Phase::kAwaitingHello;
    if (phase == Phase::kAwaitingHello && b.size() > 14 && rng() % 2) {
      b = frame('H', 14, "chorus-store/1", static_cast<std::uint32_t>(rng() % 20), "");
      b.resize(b.size() + rng() % 24, 't');
    }
    const auto d = proto::decode_request(b, phase);
    if (d.status == Status::kNeedMore) {
      ++partial;
      EXPECT_GT(d.needed, b.size());
      EXPECT_LE(d.needed, proto::kMaxRequestBytes);
    } else if (d.status == Status::kError) {
      ++errors;
      EXPECT_EQ(d.error.rfind("request frame: ", 0), 0u);
    } else {
      ++frames;
      ASSERT_LE(d.consumed, b.size());
      EXPECT_EQ(proto::encode_request(d.request),
                std::vector<char>(b.begin(), b.begin() + static_cast<long>(d.consumed)));
    }
  }
  // The generator reaches all three outcomes (else this test would test little).
  EXPECT_GT(frames, 100);
  EXPECT_GT(errors, 100);
  EXPECT_GT(partial, 100);
}

TEST(StoreProtocol, PrintableEscapesNetworkBytes) {
  EXPECT_EQ(proto::printable("ab\x01\\"), "ab\\x01\\x5c");
  EXPECT_EQ(proto::printable(std::string(100, 'a'), 4), "aaaa...");
  EXPECT_EQ(proto::printable("abcd", 4), "abcd");
}
