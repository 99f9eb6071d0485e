#pragma once
// The water filler's map from a path to the bundle that holds its flows: open addressing with
// linear probing over 8-byte slots (the path's hash folded to 32 bits, the bundle), kept at most
// half full (tombstones included) and rebuilt from the live entries when it fills. The caller keeps
// each entry's slot, so removing one is a store. Bundles come and go with every flow that starts or
// ends (2.3 million flows in one DLRM iteration at 1,024 servers); a node-based map paid an
// allocation for each. Paths whose hashes fold to the same 32 bits are told apart by the caller:
// find() checks each bundle stored under them with the caller's comparison of paths.
#include <cstdint>
#include <vector>

namespace chorus::sim::flow {

class BundleIndex {
 public:
  // The bundle stored under `hash` (folded) for which same(bundle) holds, or -1.
  template <class Same>
  int find(std::uint64_t hash, Same&& same) const {
    if (slots_.empty()) return -1;
    const std::uint32_t t = tag(hash);
    for (std::size_t i = t & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.bundle == kEmpty) return -1;
      if (s.bundle >= 0 && s.tag == t && same(s.bundle)) return s.bundle;
    }
  }
  // Stores `bundle` under `hash` (the caller has found no equal path there); returns its slot.
  // A rebuild moves entries: moved(bundle, slot) is called for each one moved, before the return.
  template <class Moved>
  std::uint32_t insert(std::uint64_t hash, int bundle, Moved&& moved) {
    if (2 * (live_ + dead_ + 1) > slots_.size()) rebuild(moved);
    return place(tag(hash), bundle);
  }
  // Removes the entry in `slot` (insert's answer, or moved's since). A store, not a search: the
  // caller needs no answer, so nothing waits for the slot's line.
  void erase_at(std::uint32_t slot) {
    slots_[slot].bundle = kDead;
    --live_;
    ++dead_;
  }

 private:
  static constexpr int kEmpty = -1;
  static constexpr int kDead = -2;
  // 8 bytes a slot: the hash folded to 32 bits (it picks the slot and tells most other paths
  // apart before the caller compares paths), and the bundle.
  struct Slot {
    std::uint32_t tag = 0;
    int bundle = kEmpty;
  };
  static std::uint32_t tag(std::uint64_t hash) { return static_cast<std::uint32_t>(hash ^ (hash >> 32)); }
  std::uint32_t place(std::uint32_t t, int bundle) {
    for (std::size_t i = t & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.bundle < 0) {
        if (s.bundle == kDead) --dead_;
        s = {t, bundle};
        ++live_;
        return static_cast<std::uint32_t>(i);
      }
    }
  }
  template <class Moved>
  void rebuild(Moved&& moved) {
    std::size_t size = 16;
    while (size < 4 * (live_ + 1)) size *= 2;
    std::vector<Slot> old(size);
    old.swap(slots_);
    mask_ = size - 1;
    live_ = 0;
    dead_ = 0;
    for (const Slot& s : old)
      if (s.bundle >= 0) moved(s.bundle, place(s.tag, s.bundle));
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t live_ = 0, dead_ = 0;
};

}  // namespace chorus::sim::flow
