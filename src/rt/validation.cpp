#include "rt/validation.h"

#include <fmt/format.h>
#include <string>

#include "core/error.h"
#include "rt/compression/compressed_algorithms.h"

namespace chorus::rt {

namespace {

template <typename Message>
[[noreturn, gnu::cold, gnu::noinline]] void input_error(const Backend& b, CollectiveKind op, Message& what) {
  throw InputError(fmt::format("{} on {}, rank {}", to_string(op), b.name(), b.rank()), what());
}

// `what` gives the message: formatted only on failure (this is the hot path), out of line so
// the check itself inlines to a compare and a branch.
template <typename Message>
inline void require(bool ok, const Backend& b, CollectiveKind op, Message&& what) {
  if (!ok) [[unlikely]]
    input_error(b, op, what);
}

inline void require_buffer(const Backend& b, CollectiveKind op, const void* p, std::size_t count, const char* name) {
  require(count == 0 || p != nullptr, b, op, [&] { return fmt::format("{} is null but count is {}", name, count); });
}

void require_counts(const Backend& b, CollectiveKind op, const Counts& v, const char* name) {
  require(v.size() == static_cast<std::size_t>(b.size()), b, op,
          [&] { return fmt::format("{} has {} entries; the world has {} ranks", name, v.size(), b.size()); });
}

// A null buffer where `count` elements are read or written: named "input" / "output" (with "at
// root" where only the root has it), or "buffer" for the operations of one buffer.
[[noreturn, gnu::cold, gnu::noinline]] void throw_null_buffer(const Backend& b, const Call& c, Place place,
                                                              const char* name) {
  if (c.op == CollectiveKind::kSend || c.op == CollectiveKind::kRecv || c.op == CollectiveKind::kBroadcast)
    name = "buffer";
  const auto what = [&] {
    return place == Place::kRootOnly ? fmt::format("{} at root is null but count is {}", name, c.count)
                                     : fmt::format("{} is null but count is {}", name, c.count);
  };
  input_error(b, c.op, what);
}

// The buffer `p` of `count` elements read or written at `place` must not be null. Inline, and
// nothing but compares on the way through: this runs for every call.
[[gnu::always_inline]] inline void require_place(const Backend& b, const Call& c, Place place, const void* p,
                                                 const char* name) {
  if (place == Place::kNone || c.count == 0 || p != nullptr) [[likely]]
    return;
  if (place == Place::kRootOnly && b.rank() != c.root) return;
  throw_null_buffer(b, c, place, name);
}

void require_vector_form(const Backend& b, const Call& c) {
  require(c.lists != nullptr, b, c.op,
          [] { return std::string("the call carries no counts (rt::calls builds them)"); });
  const CallLists& l = *c.lists;
  const bool at_root = b.rank() == c.root;
  switch (c.op) {
    case CollectiveKind::kAllToAll:
      require(l.ins.size() == static_cast<std::size_t>(b.size()) && l.outs.size() == l.ins.size(), b, c.op, [&] {
        return fmt::format("need {} input and output buffers, got {} and {}", b.size(), l.ins.size(), l.outs.size());
      });
      require_counts(b, c.op, l.send_counts, "input counts");
      require_counts(b, c.op, l.recv_counts, "output counts");
      for (std::size_t j = 0; j < l.ins.size(); ++j) {
        require_buffer(b, c.op, l.ins[j], l.send_counts[j], "an input buffer");
        require_buffer(b, c.op, l.outs[j], l.recv_counts[j], "an output buffer");
      }
      return;
    case CollectiveKind::kAllGatherv:
      require_counts(b, c.op, l.recv_counts, "counts");
      require_counts(b, c.op, l.recv_displs, "displacements");
      require(l.recv_counts[static_cast<std::size_t>(b.rank())] == c.count, b, c.op, [&] {
        return fmt::format("counts[{}] = {} but this rank sends {}", b.rank(),
                           l.recv_counts[static_cast<std::size_t>(b.rank())], c.count);
      });
      return;
    case CollectiveKind::kGatherv:
      if (at_root) {
        require_counts(b, c.op, l.recv_counts, "counts");
        require_counts(b, c.op, l.recv_displs, "displacements");
      }
      return;
    case CollectiveKind::kScatterv:
      if (at_root) {
        require_counts(b, c.op, l.send_counts, "counts");
        require_counts(b, c.op, l.send_displs, "displacements");
      }
      return;
    case CollectiveKind::kAllToAllv:
      require_counts(b, c.op, l.send_counts, "send counts");
      require_counts(b, c.op, l.send_displs, "send displacements");
      require_counts(b, c.op, l.recv_counts, "receive counts");
      require_counts(b, c.op, l.recv_displs, "receive displacements");
      return;
    default:
      return;
  }
}

}  // namespace

void validate(const Backend& b, const Call& c) {
  const OpTraits& t = traits(c.op);
  if (t.rooted)
    require(c.root >= 0 && c.root < b.size(), b, c.op,
            [&] { return fmt::format("root {} is not a rank of this world (size {})", c.root, b.size()); });
  if (!t.collective) {
    const bool to = c.op == CollectiveKind::kSend;
    require(c.peer >= 0 && c.peer < b.size() && c.peer != b.rank(), b, c.op, [&] {
      return fmt::format("{} {} must be another rank of this world (size {})", to ? "destination" : "source", c.peer,
                         b.size());
    });
  }
  require_place(b, c, t.input, c.in, "input");
  require_place(b, c, t.output, c.out, "output");
  if (c.compression) [[unlikely]]
    return compressed::check(c);  // its compressed form packs every block before it writes one: in == out is fine
  if (c.op == CollectiveKind::kAllToAllSingle)
    require(c.in != c.out || c.count == 0, b, c.op,
            [] { return std::string("input and output must not be the same buffer"); });
  if (t.collective && !t.uniform_count) require_vector_form(b, c);
}

}  // namespace chorus::rt
