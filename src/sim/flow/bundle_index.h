#pragma once
// The water filler's map from a path to the bundle that holds its flows: open addressing with
// linear probing over (hash, bundle) slots, kept at most half full (tombstones included) and
// rebuilt from the live entries when it fills. The caller keeps each entry's slot, so removing one
// is a store. Bundles come and go with every flow that starts or
// ends (2.3 million flows in one DLRM iteration at 1,024 servers); a node-based map paid an
// allocation for each. Paths with equal hashes are told apart by the caller: find() checks each
// bundle stored under the hash with the caller's comparison of paths.
#include <cstdint>
#include <vector>

namespace chorus::sim::flow {

class BundleIndex {
 public:
  // The bundle stored under `hash` for which same(bundle) holds, or -1.
  template <class Same>
  int find(std::uint64_t hash, Same&& same) const {
    if (slots_.empty()) return -1;
    for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.bundle == kEmpty) return -1;
      if (s.bundle >= 0 && s.hash == hash && same(s.bundle)) return s.bundle;
    }
  }
  // Stores `bundle` under `hash` (the caller has found no equal path there); returns its slot.
  // A rebuild moves entries: moved(bundle, slot) is called for each one moved, before the return.
  template <class Moved>
  std::uint32_t insert(std::uint64_t hash, int bundle, Moved&& moved) {
    if (2 * (live_ + dead_ + 1) > slots_.size()) rebuild(moved);
    return place(hash, bundle);
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
  struct Slot {
    std::uint64_t hash = 0;
    int bundle = kEmpty;
  };
  std::uint32_t place(std::uint64_t hash, int bundle) {
    for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.bundle < 0) {
        if (s.bundle == kDead) --dead_;
        s = {hash, bundle};
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
      if (s.bundle >= 0) moved(s.bundle, place(s.hash, s.bundle));
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t live_ = 0, dead_ = 0;
};

}  // namespace chorus::sim::flow
